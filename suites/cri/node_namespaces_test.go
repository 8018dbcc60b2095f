package cri_test

import (
	"fmt"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("Host namespaces", framework.Label(framework.LabelCRI, framework.LabelLinuxOnly), func() {
	DescribeTable("a sandbox with NODE mode is in the host's namespace, and so is a debug container in it [CRI-5] [WIN-1]",
		func(ctx SpecContext, n capability.Name, kind string, opts cri.SandboxOptions) {
			if windowsBranch(ctx, n) {
				return
			}
			f := newFramework(n)
			host, ok := cri.HostNamespaceLink(env.RuntimeEndpoint, kind)
			if !ok {
				Skip("the runtime is not on this machine: whether a namespace is the host's is not decidable remotely")
			}
			sb, err := f.TryRunSandbox(ctx, opts)
			if err != nil {
				f.Checker.Record(cri.RefusalObservation(n, false, err))
				return
			}
			obs := capability.Observation{Capability: n}
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			link, err := f.NamespaceLink(ctx, dbg, kind)
			Expect(err).NotTo(HaveOccurred())
			obs.Evidence = fmt.Sprintf("the debug container's %s namespace %s; the host's %s", kind, link, host)
			if link == host {
				obs.Outcome, obs.Observed = capability.Works, "host namespace"
			} else {
				obs.Outcome, obs.Observed = capability.Deviated, "a namespace of its own, not the host's"
			}
			f.Checker.Record(obs)
		},
		Entry("network NODE", framework.Label(string(capability.NetNode), framework.LabelNetwork), capability.NetNode, "net",
			cri.SandboxOptions{Network: runtimeapi.NamespaceMode_NODE}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("IPC NODE", framework.Label(string(capability.IPCNode), framework.LabelIPC), capability.IPCNode, "ipc",
			cri.SandboxOptions{IPC: runtimeapi.NamespaceMode_NODE}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("a debug container targeting a container in the host's PID namespace lands in the host's namespace [CRI-2] [WIN-2]",
		framework.Label(string(capability.PIDTarget), framework.LabelPID), func(ctx SpecContext) {
			if windowsBranch(ctx, capability.PIDTarget, capability.PIDNode) {
				return
			}
			f := newFramework(capability.PIDTarget, capability.PIDNode)
			if _, ok := cri.HostNamespaceLink(env.RuntimeEndpoint, "pid"); !ok {
				Skip("the runtime is not on this machine: whether a namespace is the host's is not decidable remotely")
			}
			sb := f.RunSandbox(ctx, cri.SandboxOptions{PID: runtimeapi.NamespaceMode_NODE})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_NODE)})
			f.RecordPIDView(ctx, capability.PIDTarget, cri.ViewNode, sb,
				cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}, target)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
