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
	DescribeTable("a debug container sharing the target's PID namespace reads its files through /proc/<pid>/root [CRI-6] [WIN-1] [WIN-2]", framework.Label(string(capability.ProcRootFS)),
		func(ctx SpecContext, sandbox cri.SandboxOptions, targetPID runtimeapi.NamespaceMode, debugPID runtimeapi.NamespaceMode) {
			if windowsBranch(ctx, capability.ProcRootFS) {
				return
			}
			f := newFramework(capability.ProcRootFS)
			sb := f.RunSandbox(ctx, sandbox)
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(targetPID)})
			// ObservePIDs asks the target for its namespaces over HTTP, so the
			// marker file (written before it serves) is there afterwards.
			var dbg *cri.Container
			var view cri.PIDView
			if debugPID == runtimeapi.NamespaceMode_TARGET {
				// Through pid-target: blocked (and skipped) when it does not work.
				dbg, view = f.StartTargetingDebug(ctx, capability.ProcRootFS, sb, cri.DebugOptions{Name: "debug"}, target)
			} else {
				dbg = f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(debugPID)})
				var err error
				if view, err = f.ObservePIDs(ctx, dbg, target); err != nil {
					f.Checker.Fail(err.Error())
				}
			}
			b := capability.Observe(capability.ProcRootFS).Case(fmt.Sprintf("debug %s, target %s", debugPID, targetPID))
			pid, ok := view.PIDOf(target.Marker)
			if !ok {
				f.Checker.Record(b.Problem("target process not visible").Evidence("%s", view.Evidence()).Done(""))
				return
			}
			path := fmt.Sprintf("/proc/%d/root/ectest/marker", pid)
			r, err := f.Exec(ctx, dbg, "cat", path)
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			want := f.TargetToken("target")
			b.Evidence("target is PID %d in the debug container\n%s", pid, r)
			if r.ExitCode == 0 {
				b.Check(strings.TrimSpace(r.Stdout) == want, "read %q, want %q", strings.TrimSpace(r.Stdout), want)
			} else {
				b.Problem("cannot read: %s", strings.TrimSpace(r.Stderr))
			}
			f.Checker.Record(b.Done("target's marker file read"))
		},
		Entry("TARGET into an isolated container", cri.SandboxOptions{Reuse: true}, runtimeapi.NamespaceMode_CONTAINER, runtimeapi.NamespaceMode_TARGET, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("POD mode, the pod's shared namespace", cri.SandboxOptions{SharePID: true, Reuse: true}, runtimeapi.NamespaceMode_POD, runtimeapi.NamespaceMode_POD, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})
