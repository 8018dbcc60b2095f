package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// unknownMode is a NamespaceMode no CRI version defines (a newer kubelet's
// value as seen by an older runtime).
const unknownMode = runtimeapi.NamespaceMode(42)

var _ = Describe("Invalid namespace requests", framework.Label(framework.LabelCRI, framework.LabelValidation, framework.LabelLinuxOnly), func() {
	type targetCase func(f *cri.Framework, ctx SpecContext, own *cri.Sandbox, target *cri.Container) string

	DescribeTable("a TARGET whose target_id is not a container of the same sandbox is rejected [CRI-3]",
		framework.Label(string(capability.TargetIDValidation), framework.LabelPID),
		func(ctx SpecContext, name string, targetID targetCase) {
			f := newFramework(capability.TargetIDValidation)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			id := targetID(f, ctx, sb, target)
			dbg, err := f.TryStartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: id})
			b := capability.Observe(capability.TargetIDValidation).Case(name)
			if err != nil {
				b.Outcome(cri.JudgeRefusal(dbg != nil, err, id)).Evidence("%s", cri.StatusText(err))
			} else {
				view, perr := f.ObservePIDs(ctx, dbg, target)
				b.Problem("accepted, joined %s", view.View).
					Evidence("CreateContainer and StartContainer with target_id %q succeeded; the container landed in: %s\n%s%v", id, view.View, view.PS, orEmpty(perr))
			}
			f.Checker.Record(b.Done(""))
		},
		Entry("the sandbox's own ID", "the sandbox's own ID", targetCase(func(_ *cri.Framework, _ SpecContext, own *cri.Sandbox, _ *cri.Container) string {
			return own.ID
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a container of another sandbox", "a container of another sandbox", targetCase(func(f *cri.Framework, ctx SpecContext, _ *cri.Sandbox, _ *cri.Container) string {
			other := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			return f.StartTarget(ctx, other, cri.TargetOptions{Name: "elsewhere"}).ID
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("an unknown ID", "an unknown ID", targetCase(func(*cri.Framework, SpecContext, *cri.Sandbox, *cri.Container) string {
			return strings.Repeat("0123456789abcdef", 4)
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("an empty ID", "an empty ID", targetCase(func(*cri.Framework, SpecContext, *cri.Sandbox, *cri.Container) string {
			return ""
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
		// A container of the sandbox that has no process has no namespace
		// to join: the runtime cannot do what TARGET asks, so it must refuse.
		Entry("a container of the sandbox created but never started", "a target created but not started", targetCase(func(f *cri.Framework, ctx SpecContext, own *cri.Sandbox, _ *cri.Container) string {
			return f.CreateTarget(ctx, own, cri.TargetOptions{Name: "unstarted", Port: 8082}).ID
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a container of the sandbox that has exited", "a target that has exited", targetCase(func(f *cri.Framework, ctx SpecContext, own *cri.Sandbox, _ *cri.Container) string {
			exited := f.StartTarget(ctx, own, cri.TargetOptions{Name: "exited", Port: 8082})
			Expect(f.StopContainer(ctx, exited)).To(Succeed())
			return exited.ID
		}), SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("PID TARGET requested for a sandbox, where there is no container to target, is rejected [CRI-3]",
		framework.Label(string(capability.TargetIDValidation), framework.LabelPID), func(ctx SpecContext) {
			f := newFramework(capability.TargetIDValidation)
			b := capability.Observe(capability.TargetIDValidation).Case("TARGET for a sandbox")
			sb, err := f.TryRunSandbox(ctx, cri.SandboxOptions{PID: runtimeapi.NamespaceMode_TARGET})
			if err != nil {
				b.Outcome(cri.JudgeRefusal(false, err)).Evidence("%s", cri.StatusText(err))
			} else {
				// Accepted: nonconformant whatever its containers then do. A
				// runtime may still refuse them (CRI-O v1.36.3 refuses a POD
				// container of such a sandbox); the evidence says which.
				dbg, derr := f.TryStartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_POD)})
				if derr != nil {
					b.Problem("accepted; a PID POD container of it was then refused").
						Evidence("RunPodSandbox with PID TARGET succeeded: sandbox %s\nthen a PID POD container in it: %s", sb.ID, cri.StatusText(derr))
				} else {
					view, perr := f.ObservePIDs(ctx, dbg, nil)
					b.Problem("accepted, a container of it joined %s", view.View).
						Evidence("RunPodSandbox with PID TARGET succeeded: sandbox %s\n%s%v", sb.ID, view.Evidence(), orEmpty(perr))
				}
			}
			f.Checker.Record(b.Done(""))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("records what the runtime does with a target_id for a non-TARGET mode and with a unique prefix of the target's ID (informational: the CRI text does not decide either) [CRI-3]",
		framework.Label(framework.LabelPID), func(ctx SpecContext) {
			f := newFramework()
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			for _, c := range []struct {
				what string
				o    cri.DebugOptions
			}{
				{"target_id with PID CONTAINER", cri.DebugOptions{Name: "container-with-target-id", PID: cri.Mode(runtimeapi.NamespaceMode_CONTAINER), TargetID: target.ID}},
				{"PID TARGET with a unique 12-character prefix of the target's ID", cri.DebugOptions{Name: "prefix", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID[:12]}},
			} {
				dbg, err := f.TryStartDebug(ctx, sb, c.o)
				what := "refused: " + cri.StatusText(err)
				if err == nil {
					view, perr := f.ObservePIDs(ctx, dbg, target)
					what = "accepted; the container landed in the " + string(view.View) + orEmpty(perr)
				}
				AddReportEntry("informational: "+c.what, what)
				GinkgoWriter.Printf("%s: %s\n", c.what, what)
			}
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	DescribeTable("an unknown NamespaceMode value is rejected, not silently replaced [CRI-4] [SKEW-3]",
		framework.Label(string(capability.UnknownModeError), framework.LabelSkew),
		func(ctx SpecContext, where, which string) {
			f := newFramework(capability.UnknownModeError)
			name := fmt.Sprintf("%s %s mode %d", where, which, unknownMode)
			b := capability.Observe(capability.UnknownModeError).Case(name)
			var err error
			var evidence string
			created := false // CreateContainer succeeded (err came from StartContainer)
			if where == "sandbox" {
				opts := cri.SandboxOptions{}
				setMode(&opts.PID, &opts.Network, &opts.IPC, which)
				var sb *cri.Sandbox
				sb, err = f.TryRunSandbox(ctx, opts)
				if err == nil {
					evidence = "RunPodSandbox succeeded: sandbox " + sb.ID
				}
			} else {
				sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
				pid := runtimeapi.NamespaceMode_CONTAINER
				o := cri.DebugOptions{Name: "debug", PID: &pid}
				setMode(o.PID, &o.Network, &o.IPC, which)
				var dbg *cri.Container
				dbg, err = f.TryStartDebug(ctx, sb, o)
				created = dbg != nil
				if err == nil {
					evidence = "CreateContainer and StartContainer succeeded"
					if which == "pid" {
						view, perr := f.ObservePIDs(ctx, dbg, nil)
						evidence += fmt.Sprintf("; the container landed in: %s\n%s%v", view.View, view.PS, orEmpty(perr))
					}
				}
			}
			if err != nil {
				b.Outcome(cri.JudgeRefusal(created, err)).Evidence("%s", cri.StatusText(err))
			} else {
				b.Problem("accepted silently").Evidence("%s", evidence)
			}
			f.Checker.Record(b.Done(""))
		},
		Entry("sandbox PID", "sandbox", "pid", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("sandbox network", "sandbox", "network", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("sandbox IPC", "sandbox", "ipc", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container PID", "container", "pid", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container network", "container", "network", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container IPC", "container", "ipc", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

func setMode(pid, network, ipc *runtimeapi.NamespaceMode, which string) {
	switch which {
	case "pid":
		*pid = unknownMode
	case "network":
		*network = unknownMode
	case "ipc":
		*ipc = unknownMode
	}
}

func orEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "\nerror: " + err.Error()
}
