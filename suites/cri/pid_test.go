package cri_test

import (
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("PID namespaces", framework.Label(framework.LabelCRI, framework.LabelPID, framework.LabelLinuxOnly), func() {
	It("a debug container targeting an isolated container sees that container's processes and no sibling's [CRI-2] [WIN-2]", framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDTarget) {
			return
		}
		f := newFramework(capability.PIDTarget)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		sibling := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "sibling", Port: 8081})
		f.RecordPIDView(ctx, capability.PIDTarget, cri.ViewTarget, sb,
			cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}, target, sibling)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a debug container targeting a container of a POD-mode sandbox joins the pod namespace [CRI-2] [WIN-2]", framework.Label(string(capability.PIDTargetPod)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDTargetPod) {
			return
		}
		f := newFramework(capability.PIDTargetPod)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{SharePID: true, Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		sibling := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "sibling", PID: cri.Mode(runtimeapi.NamespaceMode_POD), Port: 8081})
		f.RecordPIDView(ctx, capability.PIDTargetPod, cri.ViewPod, sb,
			cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}, target, sibling)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("containers of a POD-mode sandbox see each other and the infra process is PID 1 [CRI-1] [WIN-1]", framework.Label(string(capability.PIDPod)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDPod) {
			return
		}
		f := newFramework(capability.PIDPod)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{SharePID: true, Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		other := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "other", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		// The observer sees the target and the other container; the other
		// container sees the target and the observer: both views must be
		// the pod's, with the same infra process as PID 1.
		observer, err := f.TryStartDebug(ctx, sb, cri.DebugOptions{Name: "observer", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		if err != nil {
			f.Checker.Record(cri.RefusalObservation(capability.PIDPod, observer != nil, err))
			return
		}
		view := f.MustObservePIDs(ctx, observer, target, other)
		otherView := f.MustObservePIDs(ctx, other, target, observer)
		b := cri.PIDObservation(capability.PIDPod, cri.ViewPod, observer, view)
		b.Evidence("in other: %s", otherView.Evidence())
		b.Check(otherView.View == cri.ViewPod, "the other container of the POD-mode sandbox is in the %s", otherView.View)
		b.Check(view.Links["PID 1"] == otherView.Links["PID 1"], "PID 1 differs between the two containers: %s and %s", view.Links["PID 1"], otherView.Links["PID 1"])
		f.Checker.Record(b.Done(string(view.View)))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a container with PID CONTAINER is isolated and its own process is PID 1 [CRI-1] [WIN-1]", framework.Label(string(capability.PIDContainer)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDContainer) {
			return
		}
		f := newFramework(capability.PIDContainer)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		f.RecordPIDView(ctx, capability.PIDContainer, cri.ViewOwn, sb,
			cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_CONTAINER)}, target)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a container with PID NODE sees the host's processes [CRI-1] [WIN-1]", framework.Label(string(capability.PIDNode)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDNode) {
			return
		}
		f := newFramework(capability.PIDNode)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{PID: runtimeapi.NamespaceMode_NODE})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_NODE)})
		f.RequireNode(cri.ViewNode)
		dbg, err := f.TryStartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_NODE)})
		if err != nil {
			f.Checker.Record(cri.RefusalObservation(capability.PIDNode, dbg != nil, err))
			return
		}
		view := f.MustObservePIDs(ctx, dbg, target)
		b := cri.PIDObservation(capability.PIDNode, cri.ViewNode, dbg, view)
		// What it sees inside must be the node's processes: the node's
		// reference process (the runtime's own) under its node PID.
		node := f.Outside().Node
		b.Check(view.Inside == "" || view.Processes == nil || pidVisible(view, node.PID),
			"the node's process PID %d (%s) is not visible from the PID NODE container", node.PID, node.Args)
		f.Checker.Record(b.Done(string(view.View)))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

func pidVisible(v cri.PIDView, pid int) bool {
	for _, p := range v.Processes {
		if p.PID == pid {
			return true
		}
	}
	return false
}
