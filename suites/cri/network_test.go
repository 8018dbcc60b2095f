package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
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
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			obs := capability.Observation{Capability: capability.NetPod}
			if session.Windows() {
				obs.Requirements = []string{"CRI-5", "WIN-1", "STORY-WIN"}
			}

			// The namespace's identity first (Linux): a pod on the host's
			// network is the deviation, whatever else then answers on its ports.
			netns, hostNote := "", "Windows has no namespace links to compare"
			if !session.Windows() {
				var err error
				netns, err = f.NamespaceLink(ctx, dbg, "net")
				Expect(err).NotTo(HaveOccurred())
				hostNote = "the host's network namespace is not decidable remotely"
				if host, ok := cri.HostNamespaceLink(env.RuntimeEndpoint, "net"); ok {
					hostNote = "host " + host
					if netns == host {
						obs.Outcome, obs.Observed = capability.Deviated, "the sandbox's network namespace is the host's ("+host+")"
						obs.Evidence = "debug container's network namespace " + netns + ", the host's " + host
						f.Checker.Record(obs)
						return
					}
				}
			}
			info, err := f.TryTargetInfoFrom(ctx, dbg, cri.TargetPort)
			if err != nil {
				obs.Outcome, obs.Observed = capability.Deviated, fmt.Sprintf("the target's port %d is not reachable on localhost from the debug container", cri.TargetPort)
				obs.Evidence = err.Error()
				f.Checker.Record(obs)
				return
			}
			hostname := strings.TrimSpace(f.MustExec(ctx, dbg, f.Tools.Hostname()...))
			addrs := f.MustExec(ctx, dbg, f.Tools.Addresses()...)
			status, err := f.Runtime.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.ID})
			Expect(err).NotTo(HaveOccurred())
			podIP := status.GetStatus().GetNetwork().GetIp()

			// Windows host names compare without case.
			same := func(a, b string) bool { return a == b || (session.Windows() && strings.EqualFold(a, b)) }
			var problems []string
			if info.Token != f.TargetToken("target") {
				problems = append(problems, fmt.Sprintf("localhost:%d answered for %q, not this target", cri.TargetPort, info.Token))
			}
			if !same(info.Hostname, hostname) {
				problems = append(problems, fmt.Sprintf("hostname differs: target %q, debug %q", info.Hostname, hostname))
			}
			if !same(hostname, sb.Config.Hostname) {
				problems = append(problems, fmt.Sprintf("hostname %q is not the sandbox's %q", hostname, sb.Config.Hostname))
			}
			if !f.Tools.HasAddress(addrs, podIP) {
				problems = append(problems, fmt.Sprintf("the sandbox IP %q is not on the debug container's interfaces", podIP))
			}
			if !containsAddr(info.Addresses, podIP) {
				problems = append(problems, fmt.Sprintf("the sandbox IP %q is not on the target's interfaces %v", podIP, info.Addresses))
			}
			obs.Outcome, obs.Observed = capability.Works, "shared network namespace"
			obs.Evidence = fmt.Sprintf("sandbox IP %s, hostname %s\ndebug container's network namespace %s (%s)\ntarget /info: %+v\ndebug `%s`:\n%s",
				podIP, sb.Config.Hostname, netns, hostNote, info, strings.Join(f.Tools.Addresses(), " "), addrs)
			if len(problems) > 0 {
				obs.Outcome, obs.Observed = capability.Deviated, strings.Join(problems, "; ")
			}
			f.Checker.Record(obs)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("containers of a sandbox with IPC POD share System V IPC objects: a debug container finds the target's shared memory segment by key, a container of another sandbox does not [CRI-5] [WIN-1]",
		framework.Label(string(capability.IPCPod), framework.LabelIPC, framework.LabelLinuxOnly), func(ctx SpecContext) {
			if windowsBranch(ctx, capability.IPCPod) {
				return
			}
			f := newFramework(capability.IPCPod)
			f.RequireDebugHelper()
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			key := shmKey(f.Token, 0x3c7e0000)
			f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", ShmKey: key})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			// The segment, holding the target's token, exists once the target serves.
			info := f.TargetInfoFrom(ctx, dbg, cri.TargetPort)
			// Under a runtime that puts pods in the host's IPC namespace the
			// segment would outlive the spec there.
			DeferCleanup(func(ctx SpecContext) { _, _, _ = f.Helper(ctx, dbg, helper.ModeShmRemove, key) }, NodeTimeout(f.Timeouts.Cleanup))
			inside, insideExec, err := f.Helper(ctx, dbg, helper.ModeShmFind, key)
			Expect(err).NotTo(HaveOccurred())
			// The negative control: a container of another sandbox.
			other := f.RunSandbox(ctx, cri.SandboxOptions{})
			outsider := f.StartDebug(ctx, other, cri.DebugOptions{Name: "outsider"})
			outside, outsideExec, err := f.Helper(ctx, outsider, helper.ModeShmFind, key)
			Expect(err).NotTo(HaveOccurred())

			// The namespaces' identities, by inode, as evidence beside the
			// segment (and a deviation where they contradict sharing).
			links := map[string]string{"target": info.Namespaces["ipc"]}
			for name, c := range map[string]*cri.Container{"debug": dbg, "outsider": outsider} {
				l, err := f.NamespaceLink(ctx, c, "ipc")
				if err != nil {
					l = "unreadable: " + err.Error()
				}
				links[name] = l
			}
			hostNote := "the host's IPC namespace is not decidable remotely"
			host, local := cri.HostNamespaceLink(env.RuntimeEndpoint, "ipc")
			if local {
				hostNote = "host " + host
			}
			want := f.TargetToken("target")
			var problems []string
			if !inside.OK() || inside.Content != want {
				problems = append(problems, fmt.Sprintf("the debug container does not find the target's segment (key %d): %s %s", key, inside.Result, inside.Content))
			}
			if outside.Result != "ENOENT" {
				problems = append(problems, fmt.Sprintf("a container of another sandbox finds segment key %d (%s %s): sandboxes share one IPC namespace", key, outside.Result, outside.Content))
			}
			isLink := func(l string) bool { return strings.HasPrefix(l, "ipc:[") }
			if isLink(links["debug"]) && isLink(links["target"]) && links["debug"] != links["target"] {
				problems = append(problems, "the debug container's IPC namespace is not the target's (by inode)")
			}
			// An equal link in another sandbox is no deviation by itself: a
			// runtime that gives each sandbox a kernel of its own (gVisor)
			// numbers namespaces per kernel. On one kernel, equal links
			// would show in the segment check above.
			if local && links["debug"] == host {
				problems = append(problems, "the sandbox's IPC namespace is the host's ("+host+")")
			}
			obs := capability.Observation{Capability: capability.IPCPod, Outcome: capability.Works, Observed: "shared IPC namespace: the target's segment found by key",
				Evidence: fmt.Sprintf("the target created SysV shm key %d holding %q\nIPC namespaces: target %s, debug %s, another sandbox's %s (%s)\nin the debug container:\n%s\nin a container of another sandbox:\n%s",
					key, want, links["target"], links["debug"], links["outsider"], hostNote, insideExec, outsideExec)}
			if len(problems) > 0 {
				obs.Outcome, obs.Observed = capability.Deviated, strings.Join(problems, "; ")
			}
			f.Checker.Record(obs)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

func containsAddr(cidrs []string, ip string) bool {
	for _, c := range cidrs {
		if strings.HasPrefix(c, ip+"/") {
			return true
		}
	}
	return false
}
