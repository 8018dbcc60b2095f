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

// Stopping ends everything (KEP: Killing Ephemeral Containers): a stopped
// container leaves no process it started, the children of its command and
// exec sessions of every kind included, judged with live sessions in
// place and from the node's /proc, which the runtime does not control.
var _ = Describe("Stopping ends everything", framework.Label(framework.LabelCRI, framework.LabelLifecycle, framework.LabelPID, framework.LabelLinuxOnly), func() {
	It("StopContainer of a TARGET debug container with live exec sessions of every kind ends its own process, its command's child and every session, as the node's /proc shows [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			s := startStopScenario(ctx, f)
			if s == nil {
				return
			}
			outside := visibleOutside(ctx, f, s.dbg)
			sessions, err := f.StartLiveSessions(ctx, s.dbg, outside)
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			broken := sessions.Broken
			carriers := append([]cri.Carrier{{Path: "the debug container's own process (and its command's child)", Marker: s.dbg.Marker}}, sessions.Carriers()...)
			b := capability.Observe(capability.PIDTarget).Case("StopContainer of a TARGET debug container with live exec sessions")
			b.Evidence("%s", strings.Join(s.evidence, "\n"))
			if !outside {
				b.Evidence("before, %s:\n%s", sessions.From, sessions.Evidence)
			}
			beforeStop(f, b, outside, carriers)
			if err := f.StopContainer(ctx, s.dbg); err != nil {
				b.Problem("StopContainer of the debug container failed: %s", cri.StatusText(err))
			}
			if st, err := f.WaitForState(ctx, s.dbg, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit); err != nil {
				b.Problem("the debug container is not reported exited: %s", err.Error())
			} else {
				b.Evidence("after StopContainer: debug container EXITED, exit code %d, reason %q", st.ExitCode, st.Reason)
			}
			judgeEnded(ctx, f, b, "after StopContainer of the debug container", outside, s.observer, carriers)
			b.Evidence("%s", strings.Join(sessions.Ended(), "\n"))
			recordStop(f, b, broken, "everything the debug container ran ended with it: its own process, its command's child and its exec sessions of every kind")
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("StopContainer of a target with live exec sessions in it and in a TARGET debug container in its namespace ends them all, as the node's /proc shows [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target, dbg := startShellTarget(ctx, f, sb)
			if dbg == nil {
				return
			}
			carriers, broken := startEverywhere(ctx, f, target, dbg)
			b := capability.Observe(capability.PIDTarget).Case("StopContainer of the target with live exec sessions")
			beforeStop(f, b, true, carriers)
			if err := f.StopContainer(ctx, target); err != nil {
				b.Problem("StopContainer of the target failed: %s", cri.StatusText(err))
			}
			for _, c := range []*cri.Container{target, dbg} {
				if st, err := f.WaitForState(ctx, c, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit); err != nil {
					b.Problem("after StopContainer of the target: %s", err.Error())
				} else {
					b.Evidence("after StopContainer of the target: %s EXITED, exit code %d, reason %q", c.Name, st.ExitCode, st.Reason)
				}
			}
			judgeEnded(ctx, f, b, "after StopContainer of the target", true, nil, carriers)
			recordStop(f, b, broken, "the target's namespace ended whole: the target, the debug container in it and every exec session in either")
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("StopPodSandbox with live exec sessions in a target and in a TARGET debug container ends every process of the sandbox's containers, as the node's /proc shows [CRI-2] [LIFE-4]",
		framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
			f := newFramework(capability.PIDTarget)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			target, dbg := startShellTarget(ctx, f, sb)
			if dbg == nil {
				return
			}
			carriers, broken := startEverywhere(ctx, f, target, dbg)
			b := capability.Observe(capability.PIDTarget).Case("StopPodSandbox with live exec sessions")
			beforeStop(f, b, true, carriers)
			if err := f.StopSandbox(ctx, sb); err != nil {
				b.Problem("StopPodSandbox failed: %s", cri.StatusText(err))
			}
			for _, c := range []*cri.Container{target, dbg} {
				if st, err := f.WaitForState(ctx, c, runtimeapi.ContainerState_CONTAINER_EXITED, f.Timeouts.ContainerExit); err != nil {
					b.Problem("after StopPodSandbox: %s", err.Error())
				} else {
					b.Evidence("after StopPodSandbox: %s EXITED, exit code %d", c.Name, st.ExitCode)
				}
			}
			judgeEnded(ctx, f, b, "after StopPodSandbox", true, nil, carriers)
			recordStop(f, b, broken, "every process of the sandbox's containers ended, exec sessions included")
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// visibleOutside reports whether c's own process shows in the node's
// /proc (not under a kernel of the sandbox's own).
func visibleOutside(ctx SpecContext, f *cri.Framework, c *cri.Container) bool {
	GinkgoHelper()
	own, err := f.OwnSettled(ctx, c)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("read the node's /proc for %s: %v", c.Name, err))
	}
	return len(own) > 0
}

// startShellTarget starts a target with a shell (the debug image, running
// LiveCommand, exiting on SIGTERM, in a PID namespace of its own: exec
// sessions need a shell, which the target program's image lacks) and a TARGET debug container
// running LiveCommand in its namespace. A debug container the oracle finds
// elsewhere is recorded (pid-target deviated) and dbg is nil. Where the
// processes are not visible from the node it skips: once the target's
// namespace is gone, no container is left in it to look from inside.
func startShellTarget(ctx SpecContext, f *cri.Framework, sb *cri.Sandbox) (target, dbg *cri.Container) {
	GinkgoHelper()
	// As PID 1 of its namespace the target's shell ignores SIGTERM unless
	// it handles it: it exits on it, as a workload does, so that a
	// runtime's graceful stop (StopPodSandbox's, CRI-O's) is not a wait
	// for its grace period to run out.
	live := cri.LiveCommand(f.DebugMarker("target"))
	live[2] = `trap "exit 0" TERM; ` + live[2]
	target = f.StartDebug(ctx, sb, cri.DebugOptions{Name: "target", Command: live})
	dbg = f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
		Command: cri.LiveCommand(f.DebugMarker("debug"))})
	if !visibleOutside(ctx, f, target) || !visibleOutside(ctx, f, dbg) {
		Skip("not judged: " + cri.InsideNote + "; once the target's namespace ended, no container is left in it to look from inside")
	}
	view := f.MustObservePIDs(ctx, dbg, target)
	if view.View != cri.ViewTarget {
		f.Checker.Record(capability.Observe(capability.PIDTarget).Case("a TARGET debug container to stop with its target").
			Problem("the debug container is not in the target's PID namespace: it is in the %s", view.View).Evidence("%s", view.Evidence()).Done(""))
		return target, nil
	}
	return target, dbg
}

// startEverywhere starts live exec sessions of every kind in target and
// in dbg and returns everything a stop of the target must end, and the
// ways in that gave no session (exec's deviation).
func startEverywhere(ctx SpecContext, f *cri.Framework, target, dbg *cri.Container) (carriers []cri.Carrier, broken []string) {
	GinkgoHelper()
	carriers = []cri.Carrier{
		{Path: "the target's own process (and its command's child)", Marker: target.Marker},
		{Path: "the debug container's own process (and its command's child)", Marker: dbg.Marker},
	}
	for _, c := range []*cri.Container{target, dbg} {
		sessions, err := f.StartLiveSessions(ctx, c, true)
		if err != nil {
			f.Checker.Fail(err.Error())
		}
		carriers = append(carriers, sessions.Carriers()...)
		for _, br := range sessions.Broken {
			broken = append(broken, c.Name+": "+br)
		}
	}
	return carriers, broken
}

// recordStop records a stop's observation. A way in that gave no session
// is exec's deviation (its own spec judges it): with nothing else wrong,
// this spec's capability is then blocked by exec, since what a stop does
// to that kind of session was not seen; what was seen wrong still counts.
func recordStop(f *cri.Framework, b *capability.Builder, broken []string, works string) {
	GinkgoHelper()
	if len(broken) > 0 {
		b.Evidence("ways in that gave no live session: %s", strings.Join(broken, "; "))
		if len(b.Problems()) == 0 {
			f.Checker.BlockOn(capability.Observe(capability.Exec).Evidence("%s", strings.Join(broken, "\n")).
				Problem("%s", strings.Join(broken, "; ")).Done(""))
		}
	}
	f.Checker.Record(b.Done(works))
}

// beforeStop adds to b, as evidence, every process of carriers the node's
// /proc shows before the stop.
func beforeStop(f *cri.Framework, b *capability.Builder, outside bool, carriers []cri.Carrier) {
	GinkgoHelper()
	if !outside {
		return
	}
	live, err := f.Survivors(carriers)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("read the node's /proc: %v", err))
	}
	var lines []string
	for _, l := range live {
		lines = append(lines, l.String())
	}
	b.Evidence("before, from the node's /proc, %d processes to end:\n%s", len(live), strings.Join(lines, "\n"))
}

// judgeEnded waits, within Timeouts.ContainerExit, for every process of
// carriers to be gone, and records one problem per process left: its PID,
// the path it came by and its state. It reads the node's /proc where
// outside is set (and ends what it found left at once, so that nothing
// outlives the spec), ps in observer, a container of the same PID
// namespace, otherwise (what is left there ends with the target).
func judgeEnded(ctx SpecContext, f *cri.Framework, b *capability.Builder, after string, outside bool, observer *cri.Container, carriers []cri.Carrier) {
	GinkgoHelper()
	var left []cri.Survivor
	if outside {
		var err error
		left, err = f.WaitSurvivors(ctx, carriers, f.Timeouts.ContainerExit)
		if err != nil {
			f.Checker.Fail(fmt.Sprintf("%s: read the node's /proc: %v", after, err))
		}
		f.EndSurvivors(ctx, left)
		b.Evidence("%s, from the node's /proc: %d of their processes left after %s", after, len(left), f.Timeouts.ContainerExit)
	} else {
		var ps string
		var err error
		left, ps, err = f.SurvivorsInside(ctx, observer, carriers, f.Timeouts.ContainerExit)
		if err != nil {
			b.Problem("%s the observer in the target's namespace cannot list processes: %v", after, err)
		}
		b.Evidence("%s, %s: ps in %s:\n%s", after, cri.InsideNote, observer.Name, ps)
	}
	for _, l := range left {
		b.Problem("%s, a process is still there after %s: %s", after, f.Timeouts.ContainerExit, l)
	}
}
