package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
)

var _ = Describe("User stories", framework.Label(framework.LabelCRI, framework.LabelStory, framework.LabelLinuxOnly), func() {
	It("an operator debugs a distroless target: inspects its filesystem, runs tools its image lacks, and calls its port from the pod's network [STORY-OPS]",
		framework.Label(string(capability.StoryOps)), func(ctx SpecContext) {
			f := newFramework(capability.StoryOps)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})

			b := capability.Observe(capability.StoryOps)
			step := func(ok bool, what, evidence string) {
				b.Evidence("[%s] %s\n%s", map[bool]string{true: "ok", false: "FAILED"}[ok], what, evidence)
				b.Check(ok, "failed: %s", what)
			}
			// 1. The target has no shell: exec cannot help.
			// (Not found, as runc, crun and runsc say it, or a shell's 126/127;
			// an exec that failed otherwise, say one that never finished, is
			// no sign of a missing shell.)
			r, err := f.Exec(ctx, target, "sh", "-c", "true")
			said := strings.ToLower(fmt.Sprint(err) + r.Stdout + r.Stderr)
			noShell := strings.Contains(said, "not found") || strings.Contains(said, "no such file") || r.ExitCode == 126 || r.ExitCode == 127
			step(noShell, "the target image has no shell", fmt.Sprintf("exec sh in target: %v %s", err, r))

			// 2. A debug container targeting it.
			// Through pid-target: blocked (and skipped) when it does not work.
			dbg, _ := f.StartTargetingDebug(ctx, capability.StoryOps, sb, cri.DebugOptions{Name: "debug"}, target)
			// 3. Make a network request from the pod's network namespace.
			// A target that stops answering while debugged is the story's
			// failure, not a helper's.
			info, err := f.TryTargetInfoFrom(ctx, dbg, cri.TargetPort)
			step(err == nil && info.Token == f.TargetToken("target"), "wget reaches the target on localhost", fmt.Sprintf("%+v %v", info, orEmpty(err)))
			// 4. Run tools the target lacks and find its process.
			view, err := f.ObservePIDs(ctx, dbg, target)
			pid, ok := view.PIDOf(target.Marker)
			step(err == nil && ok, "ps (from the debug image) shows the target's process", view.PS)
			// 5. Inspect its filesystem.
			if ok {
				ls, _ := f.Exec(ctx, dbg, "ls", fmt.Sprintf("/proc/%d/root/", pid))
				step(ls.ExitCode == 0 && strings.Contains(ls.Stdout, "target") && strings.Contains(ls.Stdout, "ectest") && !strings.Contains(ls.Stdout, "busybox"),
					"ls shows the target's root filesystem, not the debug image's", ls.String())
				cat, _ := f.Exec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/root/ectest/marker", pid))
				step(strings.TrimSpace(cat.Stdout) == f.TargetToken("target"), "cat reads the file the target wrote", cat.String())
			}
			f.Checker.Record(b.Done("every step worked"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
