package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("Debug container lifecycle", framework.Label(framework.LabelCRI, framework.LabelLifecycle), func() {
	It("a debug container's whole life leaves the target's state, start time, PID, attempt and landing (namespaces, credentials, cgroups, oom_score_adj, from the node) unchanged: the target keeps running and answering while it is debugged and after the debug container stops and is removed [LIFE-5]",
		framework.Label(string(capability.NoSideEffects), framework.LabelLinuxOnly), func(ctx SpecContext) {
			f := newFramework(capability.NoSideEffects)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			// An observer in the sandbox's network reads the target's own view of itself.
			observer := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "observer"})
			beforeInfo := f.TargetInfoFrom(ctx, observer, cri.TargetPort)
			before, err := f.Status(ctx, target)
			Expect(err).NotTo(HaveOccurred())

			// The target's process, read from the node's /proc (none where a
			// kernel of its own hides it): it must stay the same process,
			// running, through the debug container's whole life.
			ownBefore, err := f.Own(target)
			Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")

			// The debug container's life: target it, look, signal nothing, stop, remove.
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
			f.MustExec(ctx, dbg, "ps", "-o", "pid,user,args")
			f.MustExec(ctx, dbg, "sh", "-c", "ls /proc/*/root/ >/dev/null 2>&1; true")
			// While the debug container lives, not only before and after: a
			// target stopped while it is debugged, and resumed after, looks
			// untouched from either end.
			b := capability.Observe(capability.NoSideEffects)
			var duringEvidence string
			if len(ownBefore) > 0 {
				now, err := f.Own(target)
				Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
				switch {
				case len(now) == 0:
					b.Problem("while debugged: the target's process is gone")
				case !f.Outside().Proc.Alive(ownBefore[0]):
					b.Problem("while debugged: the target's process was replaced (PID %d started at %d, now %s)", ownBefore[0].PID, ownBefore[0].StartTime, now[0])
				case now[0].Stopped():
					b.Problem("while debugged: the target's process is stopped (state %q, from the node's /proc)", now[0].State)
				}
				if len(now) > 0 {
					duringEvidence = "while debugged, from the node's /proc: " + now[0].String()
					// Its whole landing record too: namespaces, credentials,
					// cgroups, oom_score_adj (oracle.Differences).
					for _, d := range oracle.Differences(ownBefore[0], now[0]) {
						b.Problem("while debugged: the target's process has %s", d)
					}
				}
			}
			if len(b.Problems()) == 0 {
				if info, err := f.TryTargetInfoFrom(ctx, observer, cri.TargetPort); err != nil {
					b.Problem("while debugged: the target does not answer: %s", err.Error())
				} else {
					duringEvidence += fmt.Sprintf("\nwhile debugged, the target answers: pid=%d start=%s", info.PID, info.StartedAt)
				}
			}
			Expect(f.StopContainer(ctx, dbg)).To(Succeed())
			Expect(f.RemoveContainer(ctx, dbg)).To(Succeed())

			after, err := f.Status(ctx, target)
			Expect(err).NotTo(HaveOccurred())
			afterEvidence := ""
			if len(ownBefore) > 0 {
				if now, err := f.Own(target); err == nil && len(now) > 0 && f.Outside().Proc.Alive(ownBefore[0]) {
					afterEvidence = "after, from the node's /proc: " + now[0].String()
					for _, d := range oracle.Differences(ownBefore[0], now[0]) {
						b.Problem("after the debug container: the target's process has %s", d)
					}
				}
			}
			// A target that is no longer running cannot answer: that is the
			// deviation itself, not a reason to time out.
			afterInfo := beforeInfo
			if after.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				afterInfo = f.TargetInfoFrom(ctx, observer, cri.TargetPort)
			}
			diff := func(what string, was, is any) {
				b.Check(fmt.Sprint(was) == fmt.Sprint(is), "%s: %v -> %v", what, was, is)
			}
			diff("state", before.State, after.State)
			diff("started_at", before.StartedAt, after.StartedAt)
			diff("attempt", before.Metadata.GetAttempt(), after.Metadata.GetAttempt())
			diff("container ID", before.Id, after.Id)
			diff("target PID (its own view)", beforeInfo.PID, afterInfo.PID)
			diff("target process start", beforeInfo.StartedAt, afterInfo.StartedAt)
			b.Check(after.State == runtimeapi.ContainerState_CONTAINER_RUNNING, "target is not running: %s", after.State)
			beforeEvidence := ""
			if len(ownBefore) > 0 {
				beforeEvidence = "before, from the node's /proc: " + ownBefore[0].String()
			}
			b.Evidence("%s\nbefore: state=%s started_at=%d attempt=%d pid=%d start=%s\n%s\nafter:  state=%s started_at=%d attempt=%d pid=%d start=%s\n%s",
				beforeEvidence, before.State, before.StartedAt, before.Metadata.GetAttempt(), beforeInfo.PID, beforeInfo.StartedAt, strings.TrimSpace(duringEvidence),
				after.State, after.StartedAt, after.Metadata.GetAttempt(), afterInfo.PID, afterInfo.StartedAt, afterEvidence)
			f.Checker.Record(b.Done("target unchanged before, during and after"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))

	// LIFE-6 at the CRI layer: the kubelet decides when to pull; what the
	// runtime must do is pull an image while a pod runs and run a
	// container of it in that pod, whose sandbox started before the image
	// existed anywhere. A runtime that fixes a sandbox's images when it
	// starts (a VM sharing only the images present then with its guest)
	// fails this; so does one that runs a stale image for the reference.
	It("a debug image that did not exist when the pod's sandbox started is pulled at debug time, and a debug container of it runs in the running sandbox [LIFE-6]",
		framework.Label(string(capability.PullAtDebugTime), framework.LabelLinuxOnly), func(ctx SpecContext) {
			f := newFramework(capability.PullAtDebugTime)
			if f.Registry == "" {
				Skip("no loopback registry in this run: cannot make an image the runtime has never seen")
			}
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
			// A variant of the debug image with a layer unique to this spec,
			// made while the pod runs: no runtime can have it before.
			ref, err := images.Variant(ctx, f.Images[images.Debug], f.Registry, "pull-"+f.Token, f.Token)
			if err != nil {
				f.Checker.Fail("push a variant of the debug image: " + err.Error())
			}
			present, err := f.ImagePresent(ctx, ref)
			if err != nil {
				f.Checker.Fail("ImageStatus: " + cri.StatusText(err))
			}
			Expect(present).To(BeFalse(), "image %s, pushed just now, is already in the runtime", ref)

			b := capability.Observe(capability.PullAtDebugTime)
			imageRef, err := f.PullImage(ctx, ref)
			if err != nil {
				// With an images file the runtime may never have pulled
				// from the suite's registry: a failed pull there says
				// nothing about pulling at debug time.
				if !strings.HasPrefix(f.Images[images.Debug], f.Registry+"/") {
					f.Checker.FailEnvironment(fmt.Errorf("%s", cri.StatusText(err)), fmt.Sprintf("pulling %s from the suite's registry, which the runtime never pulled from in this run (its images come from -images-file): configure it to pull from %s over plain HTTP (docs/certify.md) to judge this", ref, f.Registry))
				}
				f.Checker.Record(b.Outcome(capability.Refused, "pull failed").Evidence("%s", cri.StatusText(err)).Done(""))
				return
			}
			if present, err = f.ImagePresent(ctx, ref); err != nil {
				f.Checker.Fail("ImageStatus: " + cri.StatusText(err))
			}
			dbg, err := f.TryStartDebug(ctx, sb, cri.DebugOptions{Name: "debug", Image: ref, PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
			if err != nil {
				f.Checker.Record(b.Outcome(capability.Refused, "debug container from the pulled image failed").Evidence("%s", cri.StatusText(err)).Done(""))
				return
			}
			// A debug container running some other image has no such file:
			// that is the runtime's deviation, reported with the evidence.
			r, err := f.Exec(ctx, dbg, "cat", "/ectest-variant")
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			content := strings.TrimSpace(r.Stdout)
			b.Evidence("pushed %s; absent before; PullImage -> %s; present after: %v; cat /ectest-variant in the debug container: %s", ref, imageRef, present, r)
			b.Check(present && content == f.Token, "the debug container does not run the pulled image")
			f.Checker.Record(b.Done("pulled at debug time"))
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
