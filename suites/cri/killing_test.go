package cri_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The KEP's "Killing Ephemeral Containers": a debug container stops when
// its command ends or the pod goes, never takes the target with it, and a
// TARGET debug container, which is not PID 1 of the namespace it lives in,
// must still stop as a whole.
var _ = Describe("Killing debug containers", framework.Label(framework.LabelCRI, framework.LabelLifecycle, framework.LabelPID, framework.LabelLinuxOnly), func() {
	It("StopContainer of a TARGET debug container ends all of its processes, though none is PID 1 of the namespace, and the runtime reports it exited [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			s := startStopScenario(ctx, f)
			if s == nil {
				return
			}
			outside := visibleOutside(ctx, f, s.dbg)
			carriers := []cri.Carrier{{Path: "the debug container's own process (and its command's child)", Marker: s.dbg.Marker}}
			b := capability.Observe(capability.PIDTarget).Case("StopContainer of a TARGET debug container")
			b.Evidence("%s", strings.Join(s.evidence, "\n"))
			beforeStop(f, b, outside, carriers)
			if err := f.StopContainer(ctx, s.dbg); err != nil {
				b.Problem("StopContainer of the debug container failed: %s", cri.StatusText(err))
			}
			if st, err := f.WaitForState(ctx, s.dbg, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit); err != nil {
				b.Problem("the debug container is not reported exited: %s", err.Error())
			} else {
				b.Evidence("after StopContainer: debug container EXITED, exit code %d, reason %q", st.ExitCode, st.Reason)
			}
			// Judged from the node's /proc where the processes show there
			// (the observer, a TARGET container of the same namespace,
			// looks from inside otherwise). Killed processes the target,
			// as PID 1, does not reap stay as zombies without argv: they
			// are dead, and a distroless target's business, not the
			// runtime's.
			judgeEnded(ctx, f, b, "after StopContainer", outside, s.observer, carriers)
			f.Checker.Record(b.Done("stopped as a whole: exited, none of its processes left in the target's namespace"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("stopping and removing a TARGET debug container leaves the target PID 1 of its namespace, running and unrestarted [LIFE-5] [CRI-2]",
		framework.Label(string(capability.NoSideEffects)), func(ctx SpecContext) {
			f := newFramework(capability.NoSideEffects, capability.PIDTarget)
			s := startStopScenario(ctx, f)
			if s == nil {
				return
			}
			b := capability.Observe(capability.NoSideEffects).Case("a TARGET debug container stopped and removed")
			check := func(when string) {
				after, err := f.Status(ctx, s.target)
				if err != nil {
					b.Problem("%s: ContainerStatus of the target: %s", when, cri.StatusText(err))
					return
				}
				s.evidence = append(s.evidence, fmt.Sprintf("%s: target state=%s started_at=%d attempt=%d (before: %s %d %d)", when,
					after.State, after.StartedAt, after.Metadata.GetAttempt(), s.before.State, s.before.StartedAt, s.before.Metadata.GetAttempt()))
				if after.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
					b.Problem("%s: the target is %s", when, after.State)
					return // its namespace, and the observer in it, ended with it
				}
				if after.StartedAt != s.before.StartedAt || after.Metadata.GetAttempt() != s.before.Metadata.GetAttempt() {
					b.Problem("%s", when+": the target was restarted")
				}
				procs, ps, err := f.Processes(ctx, s.observer)
				if err != nil {
					b.Problem("%s: the observer in the target's namespace cannot list processes: %v", when, err)
					return
				}
				s.evidence = append(s.evidence, when+": ps in the observer:\n"+ps)
				if pid1 := pid1Of(procs); !strings.Contains(pid1, s.target.Marker) {
					b.Problem("%s: PID 1 of the target's namespace is %q, not the target", when, pid1)
				}
			}
			if err := f.StopContainer(ctx, s.dbg); err != nil {
				b.Problem("StopContainer of the debug container failed: %s", cri.StatusText(err))
			}
			check("after StopContainer of the debug container")
			if err := f.RemoveContainer(ctx, s.dbg); err != nil {
				b.Problem("RemoveContainer of the stopped debug container failed: %s", cri.StatusText(err))
			}
			check("after RemoveContainer of the debug container")
			b.Evidence("%s", strings.Join(s.evidence, "\n"))
			f.Checker.Record(b.Done("the target stays PID 1, running, not restarted"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("the target's death ends a TARGET debug container in its namespace, and the runtime reports the debug container exited [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
			b := capability.Observe(capability.PIDTarget).Case("the target ends")
			view := f.MustObservePIDs(ctx, dbg, target)
			if view.View != cri.ViewTarget {
				f.Checker.Record(b.Problem("the debug container is not in the target's PID namespace: it is in the %s", view.View).Evidence("%s", view.Evidence()).Done(""))
				return
			}
			Expect(f.StopContainer(ctx, target)).To(Succeed())
			st, err := f.WaitForState(ctx, dbg, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit)
			b.Evidence("before: %s", view.Evidence())
			if err != nil {
				b.Problem("the target's namespace ended, but the debug container is not reported exited: %v", err)
			} else {
				b.Evidence("after StopContainer of the target: debug container EXITED, exit code %d, reason %q, finished_at %d", st.ExitCode, st.Reason, st.FinishedAt)
			}
			f.Checker.Record(b.Done("ended with its target, reported exited"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("StopPodSandbox with a live TARGET debug container stops every container of the sandbox, and removing the sandbox leaves no container and no process behind [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
			f.MustExec(ctx, dbg, "true")
			b := capability.Observe(capability.PIDTarget).Case("StopPodSandbox with a live TARGET debug container")
			var evidence []string
			// Processes on this machine carrying the spec's token: the
			// target's and the debug container's argv both do.
			hostProcs, local := cri.HostProcessesWith(env.RuntimeEndpoint, f.Token)
			evidence = append(evidence, fmt.Sprintf("before: processes on this machine with the spec's token: %q (a runtime on this machine: %v)", hostProcs, local))

			if err := f.StopSandbox(ctx, sb); err != nil {
				f.Checker.Record(b.Problem("StopPodSandbox failed with a live debug container: %s", cri.StatusText(err)).Evidence("%s", strings.Join(evidence, "\n")).Done(""))
				return
			}
			for _, c := range []*cri.Container{target, dbg} {
				st, err := f.WaitForState(ctx, c, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit)
				if err != nil {
					b.Problem("after StopPodSandbox: %s", err.Error())
				} else {
					evidence = append(evidence, fmt.Sprintf("after StopPodSandbox: %s EXITED, exit code %d", c.Name, st.ExitCode))
				}
			}
			if state, err := f.SandboxState(ctx, sb); err != nil || state != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
				b.Problem("after StopPodSandbox the sandbox is %s (%s), not NOTREADY", state, cri.StatusText(err))
			}
			if local {
				var left []string
				if err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerExit, true, func(ctx context.Context) (bool, error) {
					left, _ = cri.HostProcessesWith(env.RuntimeEndpoint, f.Token)
					return len(left) == 0, nil
				}); err != nil {
					b.Problem("processes of the sandbox still run on this machine %s after StopPodSandbox: %q", f.Timeouts.ContainerExit, left)
				}
			}
			if err := f.RemoveSandbox(ctx, sb); err != nil {
				b.Problem("RemovePodSandbox after StopPodSandbox failed: %s", cri.StatusText(err))
			} else if left, err := f.ContainersOf(ctx, sb); err != nil || len(left) > 0 {
				var ids []string
				for _, c := range left {
					ids = append(ids, fmt.Sprintf("%s (%s, %s)", c.Id, c.Metadata.GetName(), c.State))
				}
				b.Problem("after RemovePodSandbox the runtime still lists containers of it: %v (%s)", ids, cri.StatusText(err))
			}
			b.Evidence("%s", strings.Join(evidence, "\n"))
			f.Checker.Record(b.Done("everything stopped, nothing left"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// pid1Of is the argv of PID 1 in a process list ("" if it is not visible).
func pid1Of(procs []cri.Process) string {
	for _, p := range procs {
		if p.PID == 1 {
			return p.Args
		}
	}
	return ""
}

// withMarker lists the processes whose argv carries marker, as "PID args".
func withMarker(procs []cri.Process, marker string) []string {
	var out []string
	for _, p := range procs {
		if strings.Contains(p.Args, marker) {
			out = append(out, fmt.Sprintf("%d %s", p.PID, p.Args))
		}
	}
	return out
}

// stopScenario is a target, a TARGET debug container to stop, and a
// second TARGET container that observes the target's namespace.
type stopScenario struct {
	target, dbg, observer *cri.Container
	// before is the target's status before anything was stopped.
	before   *runtimeapi.ContainerStatus
	evidence []string
}

// startStopScenario starts the scenario and checks its premise: both
// debug containers are in the target's namespace, whose PID 1 is the
// target, with the debug container's two processes in it. If PID TARGET
// put them elsewhere, that is recorded (pid-target deviated) and it
// returns nil.
func startStopScenario(ctx SpecContext, f *cri.Framework) *stopScenario {
	GinkgoHelper()
	sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
	s := &stopScenario{target: f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})}
	// The debug container's shell starts a child shell that carries its
	// marker too: the kernel does not end a process's children with it,
	// and outside a PID namespace of its own the container's first process
	// is nobody's PID 1. A runtime that kills only that process leaves the
	// child in the target's namespace, re-parented to the target.
	s.dbg = f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: s.target.ID,
		Command: cri.LiveCommand(f.DebugMarker("debug"))})
	s.observer = f.StartDebug(ctx, sb, cri.DebugOptions{Name: "observer", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: s.target.ID})
	var err error
	s.before, err = f.Status(ctx, s.target)
	Expect(err).NotTo(HaveOccurred())
	var procs []cri.Process
	var ps string
	// The child shell may still be starting.
	failure := InterceptGomegaFailure(func() {
		Eventually(ctx, func(g Gomega) {
			procs, ps, err = f.Processes(ctx, s.observer)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(withMarker(procs, s.dbg.Marker)).To(HaveLen(2))
		}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll).Should(Succeed())
	})
	Expect(err).NotTo(HaveOccurred(), "ps in the observer")
	s.evidence = []string{"before: ps in the observer (PID TARGET, like the debug container):\n" + ps}
	// The oracle decides where both are; ps counts the debug container's
	// processes the observer sees.
	dbgView := f.MustObservePIDs(ctx, s.dbg, s.target)
	observerView := f.MustObservePIDs(ctx, s.observer, s.target)
	if failure != nil || dbgView.View != cri.ViewTarget || observerView.View != cri.ViewTarget {
		f.Checker.Record(capability.Observe(capability.PIDTarget).Case("TARGET debug containers to stop").
			Problem("two containers targeting one target are not both in its PID namespace: the debug container is in the %s, the observer in the %s, and the observer sees %d of the debug container's 2 processes",
				dbgView.View, observerView.View, len(withMarker(procs, s.dbg.Marker))).
			Evidence("%s\ndebug: %s\nobserver: %s", s.evidence[0], dbgView.Evidence(), observerView.Evidence()).Done(""))
		return nil
	}
	return s
}
