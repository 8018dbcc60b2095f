package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("The target's filesystem", framework.Label(framework.LabelCRI, framework.LabelFilesystem, framework.LabelLinuxOnly), func() {
	It("a debug container targeting a container reads its files through /proc/<pid>/root [CRI-6]", framework.Label(string(capability.ProcRootFS)), func(ctx SpecContext) {
		f := newFramework(capability.ProcRootFS)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: runtimeapi.NamespaceMode_TARGET, PIDSet: true, TargetID: target.ID})
		f.TargetInfoFrom(ctx, dbg, cri.TargetPort) // the marker is written before the target serves
		view, err := f.ObservePIDs(ctx, dbg, target)
		if err != nil {
			Fail(err.Error())
		}
		obs := capability.Observation{Capability: capability.ProcRootFS}
		pid, ok := view.PIDOf(target.Marker)
		if !ok {
			obs.Outcome, obs.Observed, obs.Evidence = capability.Deviated, "target process not visible", view.PS
			f.Checker.Record(obs)
			return
		}
		path := fmt.Sprintf("/proc/%d/root/ectest/marker", pid)
		r, err := f.Exec(ctx, dbg, "cat", path)
		if err != nil {
			Fail(err.Error())
		}
		want := f.TargetToken("target")
		obs.Evidence = fmt.Sprintf("target is PID %d in the debug container\n%s", pid, r)
		switch {
		case r.ExitCode == 0 && strings.TrimSpace(r.Stdout) == want:
			obs.Outcome, obs.Observed = capability.Works, "target's marker file read"
		case r.ExitCode == 0:
			obs.Outcome, obs.Observed = capability.Deviated, fmt.Sprintf("read %q, want %q", strings.TrimSpace(r.Stdout), want)
		default:
			obs.Outcome, obs.Observed = capability.Deviated, "cannot read: "+strings.TrimSpace(r.Stderr)
		}
		f.Checker.Record(obs)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
