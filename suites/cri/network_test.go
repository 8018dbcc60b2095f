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
	It("a debug container shares the sandbox's network: it reaches the target's port on localhost and sees the same IP and hostname [CRI-5]",
		framework.Label(string(capability.NetPod), framework.LabelNetwork, framework.LabelNetworkOnly), func(ctx SpecContext) {
			f := newFramework(capability.NetPod)
			framework.SkipOnWindows(env.Runtime.OS)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})

			// The namespace's identity first: a pod on the host's network
			// is the deviation, whatever else then answers on its ports.
			netns, err := f.NamespaceLink(ctx, dbg, "net")
			Expect(err).NotTo(HaveOccurred())
			hostNote := "the host's network namespace is not decidable remotely"
			if host, ok := cri.HostNamespaceLink(env.RuntimeEndpoint, "net"); ok {
				hostNote = "host " + host
				if netns == host {
					f.Checker.Record(capability.Observation{Capability: capability.NetPod, Outcome: capability.Deviated,
						Observed: "the sandbox's network namespace is the host's (" + host + ")", Evidence: "debug container's network namespace " + netns + ", the host's " + host})
					return
				}
			}
			info, err := f.TryTargetInfoFrom(ctx, dbg, cri.TargetPort)
			if err != nil {
				f.Checker.Record(capability.Observation{Capability: capability.NetPod, Outcome: capability.Deviated,
					Observed: fmt.Sprintf("the target's port %d is not reachable on localhost from the debug container", cri.TargetPort), Evidence: err.Error()})
				return
			}
			hostname := strings.TrimSpace(f.MustExec(ctx, dbg, "hostname"))
			addrs := f.MustExec(ctx, dbg, "ip", "-o", "addr", "show")
			status, err := f.Runtime.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.ID})
			Expect(err).NotTo(HaveOccurred())
			podIP := status.GetStatus().GetNetwork().GetIp()

			var problems []string
			if info.Token != f.TargetToken("target") {
				problems = append(problems, fmt.Sprintf("localhost:%d answered for %q, not this target", cri.TargetPort, info.Token))
			}
			if info.Hostname != hostname {
				problems = append(problems, fmt.Sprintf("hostname differs: target %q, debug %q", info.Hostname, hostname))
			}
			if hostname != sb.Config.Hostname {
				problems = append(problems, fmt.Sprintf("hostname %q is not the sandbox's %q", hostname, sb.Config.Hostname))
			}
			if podIP == "" || !strings.Contains(addrs, " "+podIP+"/") {
				problems = append(problems, fmt.Sprintf("the sandbox IP %q is not on the debug container's interfaces", podIP))
			}
			if !containsAddr(info.Addresses, podIP) {
				problems = append(problems, fmt.Sprintf("the sandbox IP %q is not on the target's interfaces %v", podIP, info.Addresses))
			}
			obs := capability.Observation{Capability: capability.NetPod, Outcome: capability.Works, Observed: "shared network namespace",
				Evidence: fmt.Sprintf("sandbox IP %s, hostname %s\ndebug container's network namespace %s (%s)\ntarget /info: %+v\ndebug `ip -o addr show`:\n%s", podIP, sb.Config.Hostname, netns, hostNote, info, addrs)}
			if len(problems) > 0 {
				obs.Outcome, obs.Observed = capability.Deviated, strings.Join(problems, "; ")
			}
			f.Checker.Record(obs)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("containers of a sandbox with IPC POD share System V IPC objects [CRI-5]",
		framework.Label(string(capability.IPCPod), framework.LabelIPC, framework.LabelLinuxOnly), func(ctx SpecContext) {
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
