package cri_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("PID namespaces", framework.Label(framework.LabelCRI, framework.LabelPID, framework.LabelLinuxOnly), func() {
	It("a debug container targeting an isolated container sees that container's processes and no sibling's [CRI-2] [WIN-2]", framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDTarget) {
			return
		}
		f := newFramework(capability.PIDTarget)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		sibling := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "sibling", Port: 8081})
		_, view := f.RecordPIDView(ctx, capability.PIDTarget, cri.ViewTarget, sb,
			cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}, target, sibling)
		_, selfVisible := view.PIDOf(f.DebugMarker("debug"))
		Expect(selfVisible).To(BeTrue(), "the debug container must see its own process:\n%s", view.PS)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a debug container targeting a container of a POD-mode sandbox joins the pod namespace [CRI-2] [WIN-2]", framework.Label(string(capability.PIDTargetPod)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDTargetPod) {
			return
		}
		f := newFramework(capability.PIDTargetPod)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{SharePID: true})
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
		sb := f.RunSandbox(ctx, cri.SandboxOptions{SharePID: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		other := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "other", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
		// The observer sees the target and the other container; the other
		// container sees the target and the observer: both views must be the pod's.
		observer, view := f.RecordPIDView(ctx, capability.PIDPod, cri.ViewPod, sb,
			cri.DebugOptions{Name: "observer", PID: cri.Mode(runtimeapi.NamespaceMode_POD)}, target, other)
		if observer == nil {
			return
		}
		otherView, err := f.ObservePIDs(ctx, other, target, observer)
		Expect(err).NotTo(HaveOccurred())
		Expect(otherView.View).To(Equal(cri.ViewPod), "the other container of the POD-mode sandbox must see the same namespace:\n%s", otherView.PS)
		Expect(pid1(otherView)).To(Equal(pid1(view)), "PID 1 must be the same infra process from every container")
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a container with PID CONTAINER is isolated and its own process is PID 1 [CRI-1] [WIN-1]", framework.Label(string(capability.PIDContainer)), func(ctx SpecContext) {
		if windowsBranch(ctx, capability.PIDContainer) {
			return
		}
		f := newFramework(capability.PIDContainer)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
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
		dbg, view := f.RecordPIDView(ctx, capability.PIDNode, cri.ViewNode, sb,
			cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_NODE)}, target)
		if dbg == nil || !strings.HasPrefix(env.RuntimeEndpoint, "unix://") {
			return
		}
		// A local runtime's host namespace is this machine's: the suite's own
		// process must be visible under its own PID.
		self := fmt.Sprintf("%d", os.Getpid())
		found := false
		for _, p := range view.Processes {
			found = found || fmt.Sprint(p.PID) == self
		}
		Expect(found).To(BeTrue(), "the suite's own process (PID %s) is not visible from a PID NODE container:\n%s", self, view.PS)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

func pid1(v cri.PIDView) string {
	for _, p := range v.Processes {
		if p.PID == 1 {
			return p.Args
		}
	}
	return ""
}
