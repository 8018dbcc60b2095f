package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("Network and IPC namespaces", framework.Label(framework.LabelCRI), func() {
	// Written once for every OS: the commands come from the debug image's
	// tool flavour (busybox on Linux, Nano Server's curl.exe on Windows),
	// and on Windows the sandbox and containers go out as the kubelet sends
	// them there. This is the network troubleshooting story Windows allows.
	It("a debug container shares the sandbox's network: it reaches the target's port on localhost and sees the same IP and hostname [CRI-5] [WIN-1] [STORY-WIN]",
		framework.Label(string(capability.NetPod), framework.LabelNetwork, framework.LabelNetworkOnly, framework.LabelWindows), func(ctx SpecContext) {
			f := newFramework(capability.NetPod)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			b := capability.Observe(capability.NetPod)
			if session.Windows() {
				b.Requirements("CRI-5", "WIN-1", "STORY-WIN")
			}

			// The namespace's identity first (Linux): a pod on the host's
			// network is the deviation, whatever else then answers on its ports.
			netns, hostNote := "", "Windows has no namespace links to compare"
			if !session.Windows() {
				var err error
				netns, err = f.NamespaceLink(ctx, dbg, "net")
				Expect(err).NotTo(HaveOccurred())
				out := f.Outside()
				hostNote = "the node's network namespace is unknown here: " + out.NoNode
				if host, ok := out.NodeLink(oracle.Net); ok {
					hostNote = "the node's " + host
					if netns == host {
						f.Checker.Record(b.Problem("the sandbox's network namespace is the node's (%s)", host).
							Evidence("debug container's network namespace %s, the node's %s (%s)", netns, host, out.Node.How).Done(""))
						return
					}
				}
				// Outside: the two containers' own processes must be in one
				// network namespace, whatever answers on localhost.
				if apart := apartFromOutside(f, oracle.Net, dbg, target); apart != "" {
					f.Checker.Record(b.Problem("the debug container's network namespace is not the target's").Evidence("%s", apart).Done(""))
					return
				}
				// The hostname is the UTS namespace's: the sandbox's (its
				// infra process's), never one of the container's own that
				// merely carries the same name, nor the node's.
				if problem, evidence := utsFromOutside(f, dbg, target); problem != "" {
					f.Checker.Record(b.Problem("%s", problem).Evidence("%s", evidence).Done(""))
					return
				}
			}
			info, err := f.TryTargetInfoFrom(ctx, dbg, cri.TargetPort)
			if err != nil {
				f.Checker.Record(b.Problem("the target's port %d is not reachable on localhost from the debug container", cri.TargetPort).Evidence("%v", err).Done(""))
				return
			}
			hostname := strings.TrimSpace(f.MustExec(ctx, dbg, f.Tools.Hostname()...))
			addrs := f.MustExec(ctx, dbg, f.Tools.Addresses()...)
			status, err := f.Runtime.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.ID})
			Expect(err).NotTo(HaveOccurred())
			podIP := status.GetStatus().GetNetwork().GetIp()

			// Windows host names compare without case.
			same := func(a, b string) bool { return a == b || (session.Windows() && strings.EqualFold(a, b)) }
			if info.Token != f.TargetToken("target") {
				b.Problem("localhost:%d answered for %q, not this target", cri.TargetPort, info.Token)
			}
			if !same(info.Hostname, hostname) {
				b.Problem("hostname differs: target %q, debug %q", info.Hostname, hostname)
			}
			if !same(hostname, sb.Config.Hostname) {
				b.Problem("hostname %q is not the sandbox's %q", hostname, sb.Config.Hostname)
			}
			if !f.Tools.HasAddress(addrs, podIP) {
				b.Problem("the sandbox IP %q is not on the debug container's interfaces", podIP)
			}
			if !containsAddr(info.Addresses, podIP) {
				b.Problem("the sandbox IP %q is not on the target's interfaces %v", podIP, info.Addresses)
			}
			b.Evidence("sandbox IP %s, hostname %s\ndebug container's network namespace %s (%s)\ntarget /info: %+v\ndebug `%s`:\n%s",
				podIP, sb.Config.Hostname, netns, hostNote, info, strings.Join(f.Tools.Addresses(), " "), addrs)
			f.Checker.Record(b.Done("shared network namespace"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("containers of a sandbox with IPC POD share IPC objects: a debug container finds the target's System V segment by key and its POSIX shared memory in /dev/shm, a container of another sandbox finds neither [CRI-5] [WIN-1]",
		framework.Label(string(capability.IPCPod), framework.LabelIPC, framework.LabelLinuxOnly), func(ctx SpecContext) {
			if windowsBranch(ctx, capability.IPCPod) {
				return
			}
			f := newFramework(capability.IPCPod)
			f.RequireDebugHelper()
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			key := shmKey(f.Token, 0x3c7e0000)
			posix := "ectest-" + f.Token
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", ShmKey: key, PosixShm: posix})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			// The segment, holding the target's token, exists once the target serves.
			info := f.TargetInfoFrom(ctx, dbg, cri.TargetPort)
			// Under a runtime that puts pods in the host's IPC namespace the
			// segment and the object would outlive the spec there.
			DeferCleanup(func(ctx SpecContext) {
				_, _, _ = f.Helper(ctx, dbg, helper.ModeShmRemove, key)
				_, _ = f.Exec(ctx, dbg, "rm", "-f", "/dev/shm/"+posix)
			}, NodeTimeout(f.Timeouts.Cleanup))
			inside, insideExec, err := f.Helper(ctx, dbg, helper.ModeShmFind, key)
			Expect(err).NotTo(HaveOccurred())
			insidePosix, err := f.Exec(ctx, dbg, "cat", "/dev/shm/"+posix)
			Expect(err).NotTo(HaveOccurred())
			// The negative control: a container of another sandbox.
			other := f.RunSandbox(ctx, cri.SandboxOptions{})
			outsider := f.StartDebug(ctx, other, cri.DebugOptions{Name: "outsider"})
			outside, outsideExec, err := f.Helper(ctx, outsider, helper.ModeShmFind, key)
			Expect(err).NotTo(HaveOccurred())
			outsidePosix, err := f.Exec(ctx, outsider, "cat", "/dev/shm/"+posix)
			Expect(err).NotTo(HaveOccurred())

			// The namespaces' identities, by inode, as each reports its own.
			links := map[string]string{"target": info.Namespaces["ipc"]}
			for name, c := range map[string]*cri.Container{"debug": dbg, "outsider": outsider} {
				l, err := f.NamespaceLink(ctx, c, "ipc")
				if err != nil {
					l = "unreadable: " + err.Error()
				}
				links[name] = l
			}
			out := f.Outside()
			hostNote := "the node's IPC namespace is unknown here: " + out.NoNode
			host, known := out.NodeLink(oracle.IPC)
			if known {
				hostNote = "the node's " + host
			}
			want := f.TargetToken("target")
			b := capability.Observe(capability.IPCPod)
			if !inside.OK() || inside.Content != want {
				b.Problem("the debug container does not find the target's SysV segment (key %d): %s %s", key, inside.Result, inside.Content)
			}
			if insidePosix.ExitCode != 0 || insidePosix.Stdout != want {
				b.Problem("the debug container does not find the target's POSIX shared memory /dev/shm/%s", posix)
			}
			if outside.Result != "ENOENT" {
				b.Problem("a container of another sandbox finds segment key %d (%s %s): sandboxes share one IPC namespace", key, outside.Result, outside.Content)
			}
			if outsidePosix.ExitCode == 0 {
				b.Problem("a container of another sandbox finds /dev/shm/%s: sandboxes share one /dev/shm", posix)
			}
			// Outside: the two containers' own processes decide whether they
			// share the namespace; where they are not visible (gVisor
			// numbers namespaces in a kernel of its own, so an equal link
			// there says nothing), what each finds decides.
			same, visible, evidence, err := f.SameFromOutside(oracle.IPC, dbg, target)
			Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
			if visible && !same {
				b.Problem("the debug container's IPC namespace is not the target's (from the node's /proc)")
			}
			if visible && known {
				if own, _ := f.Own(dbg); len(own) > 0 && own[0].Namespaces[oracle.IPC] == host {
					b.Problem("%s", "the sandbox's IPC namespace is the node's ("+host+")")
				}
			}
			b.Evidence("%s\nthe target created SysV shm key %d and /dev/shm/%s, both holding %q\nIPC namespaces as each reports its own: target %s, debug %s, another sandbox's %s (%s)\nin the debug container:\n%s\n%s\nin a container of another sandbox:\n%s\n%s",
				evidence, key, posix, want, links["target"], links["debug"], links["outsider"], hostNote, insideExec, insidePosix, outsideExec, outsidePosix)
			f.Checker.Record(b.Done("shared IPC namespace: the target's SysV segment and POSIX shared memory found"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// apartFromOutside says, with the evidence, that a's and b's own
// processes are in different namespaces of kind k ("" when they share it,
// or when they are not visible from the node's /proc).
func apartFromOutside(f *cri.Framework, k oracle.Kind, a, b *cri.Container) string {
	same, visible, evidence, err := f.SameFromOutside(k, a, b)
	Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
	if !visible || same {
		return ""
	}
	return evidence
}

// utsFromOutside compares, from the node's /proc, the UTS namespace of
// dbg's own process with the target's, the sandbox's infra process's and
// the node's: a problem when it is not the sandbox's or is the node's.
// Nothing is said where the processes are not visible from here.
func utsFromOutside(f *cri.Framework, dbg, target *cri.Container) (problem, evidence string) {
	if apart := apartFromOutside(f, oracle.UTS, dbg, target); apart != "" {
		return "the debug container's UTS namespace (its hostname) is not the target's", apart
	}
	own, err := f.Own(dbg)
	Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
	if len(own) == 0 {
		return "", ""
	}
	uts := own[0].Namespaces[oracle.UTS]
	if host, ok := f.Outside().NodeLink(oracle.UTS); ok && uts == host {
		return "the debug container's UTS namespace is the node's", fmt.Sprintf("debug container's process %s; the node's %s (%s)", own[0], host, f.Outside().Node.How)
	}
	infra, ok, err := f.Infra(dbg)
	Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
	if ok && infra.Namespaces[oracle.UTS] != uts {
		return "the debug container's UTS namespace (its hostname) is not the sandbox's", fmt.Sprintf("debug container's process %s\nthe sandbox's infra process %s", own[0], infra)
	}
	return "", ""
}

func containsAddr(cidrs []string, ip string) bool {
	for _, c := range cidrs {
		if strings.HasPrefix(c, ip+"/") {
			return true
		}
	}
	return false
}
