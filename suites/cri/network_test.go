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

			info := f.TargetInfoFrom(ctx, dbg, cri.TargetPort)
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
				Evidence: fmt.Sprintf("sandbox IP %s, hostname %s\ntarget /info: %+v\ndebug `ip -o addr show`:\n%s", podIP, sb.Config.Hostname, info, addrs)}
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
			obs := capability.Observation{Capability: capability.IPCPod, Outcome: capability.Deviated, Observed: "target's segment not visible",
				Evidence: fmt.Sprintf("the target created a SysV shm segment with key %d; /proc/sysvipc/shm in the debug container:\n%s", key, shm)}
			for _, line := range strings.Split(shm, "\n") {
				fields := strings.Fields(line)
				if len(fields) > 0 && fields[0] == strconv.Itoa(key) {
					obs.Outcome, obs.Observed = capability.Works, "shared IPC namespace"
				}
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
