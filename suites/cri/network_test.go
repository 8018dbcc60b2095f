package cri_test

import (
	"fmt"
	"strconv"
	"strings"

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

	It("containers of a sandbox with IPC POD share System V IPC objects [CRI-5] [WIN-1]",
		framework.Label(string(capability.IPCPod), framework.LabelIPC, framework.LabelLinuxOnly), func(ctx SpecContext) {
			if windowsBranch(ctx, capability.IPCPod) {
				return
			}
			f := newFramework(capability.IPCPod)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			key := 0x3c7e0000 + int(f.Token[0])<<8 + int(f.Token[1])
			f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", ShmKey: key})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			f.TargetInfoFrom(ctx, dbg, cri.TargetPort) // the segment exists once the target serves
			shm := f.MustExec(ctx, dbg, "cat", "/proc/sysvipc/shm")
			// Negative controls: a container of another sandbox must not see
			// the segment, and the pod's IPC namespace is not the host's.
			other := f.RunSandbox(ctx, cri.SandboxOptions{})
			outsider := f.StartDebug(ctx, other, cri.DebugOptions{Name: "outsider"})
			outside := f.MustExec(ctx, outsider, "cat", "/proc/sysvipc/shm")
			ipcns, err := f.NamespaceLink(ctx, dbg, "ipc")
			Expect(err).NotTo(HaveOccurred())
			hostNote := "the host's IPC namespace is not decidable remotely"
			obs := capability.Observation{Capability: capability.IPCPod, Outcome: capability.Deviated, Observed: "target's segment not visible"}
			if hasShmKey(shm, key) {
				obs.Outcome, obs.Observed = capability.Works, "shared IPC namespace"
			}
			var problems []string
			if hasShmKey(outside, key) {
				problems = append(problems, "the target's segment is visible from another sandbox: sandboxes share one IPC namespace")
			}
			if host, ok := cri.HostNamespaceLink(env.RuntimeEndpoint, "ipc"); ok {
				hostNote = "host " + host
				if ipcns == host {
					problems = append(problems, "the sandbox's IPC namespace is the host's ("+host+")")
				}
			}
			if len(problems) > 0 {
				obs.Outcome, obs.Observed = capability.Deviated, strings.Join(problems, "; ")
			}
			obs.Evidence = fmt.Sprintf("the target created a SysV shm segment with key %d; debug container's IPC namespace %s (%s)\n/proc/sysvipc/shm in the debug container:\n%s\nin a container of another sandbox:\n%s", key, ipcns, hostNote, shm, outside)
			f.Checker.Record(obs)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

func hasShmKey(shm string, key int) bool {
	for _, line := range strings.Split(shm, "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] == strconv.Itoa(key) {
			return true
		}
	}
	return false
}

func containsAddr(cidrs []string, ip string) bool {
	for _, c := range cidrs {
		if strings.HasPrefix(c, ip+"/") {
			return true
		}
	}
	return false
}
