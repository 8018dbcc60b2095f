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

var _ = Describe("Streaming into debug containers", framework.Label(framework.LabelCRI, framework.LabelStreaming, framework.LabelLinuxOnly), func() {
	It("ExecSync and streaming exec, with and without a TTY, run in a targeting debug container, in its own process's namespaces, user and capabilities [CRI-8]", framework.Label(string(capability.Exec)), func(ctx SpecContext) {
		f := newFramework(capability.Exec)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})

		b := capability.Observe(capability.Exec)
		var evidence []string
		sync, err := f.Exec(ctx, dbg, "sh", "-c", "echo out-$((6*7)); echo err-$((6*7)) >&2; exit 3")
		evidence = append(evidence, "ExecSync:\n"+sync.String())
		if err != nil || sync.Stdout != "out-42\n" || sync.Stderr != "err-42\n" || sync.ExitCode != 3 {
			b.Problem("ExecSync: want stdout out-42, stderr err-42, exit 3 (err %v)", err)
		}
		input := "hello-" + f.Token + "\n"
		res, err := f.StreamExec(ctx, dbg, &cri.Input{Text: input}, false, "cat")
		evidence = append(evidence, fmt.Sprintf("streaming exec cat, stdin %q: stdout %q stderr %q err %v", input, res.Stdout, res.Stderr, err))
		if err != nil || res.Stdout != input {
			b.Problem("streaming exec without TTY: stdin not echoed back by cat")
		}
		res, err = f.StreamExec(ctx, dbg, &cri.Input{Text: "echo tty-$((6*7))\n", Until: "tty-42", Then: "exit\n"}, true, "sh")
		evidence = append(evidence, fmt.Sprintf("streaming exec sh with TTY: stdout %q err %v", res.Stdout, err))
		if err != nil || !strings.Contains(res.Stdout, "tty-42") {
			b.Problem("streaming exec with TTY: no output from the shell")
		}
		// Where the session runs, not only what it prints: an exec that
		// lands outside the container's namespaces (or as another user, with
		// other capabilities) makes every observation made through exec wrong.
		placement, err := f.ObserveExec(ctx, dbg)
		if err != nil {
			b.Problem("an exec session could not be observed: %s", err.Error())
		} else {
			evidence = append(evidence, "where an exec session runs, judged "+placement.From+":\n"+placement.Evidence)
			if len(placement.Differences) > 0 {
				b.Problem("%s", "the exec session does not run where the container's own process does: "+strings.Join(placement.Differences, "; "))
			}
		}
		b.Evidence("%s", strings.Join(evidence, "\n"))
		f.Checker.Record(b.Done("ExecSync and streaming exec work, and run where the container's own process does"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("attach with stdin and a TTY reaches a debug container's shell [CRI-8]", framework.Label(string(capability.Attach)), func(ctx SpecContext) {
		f := newFramework(capability.Attach)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
			Command: []string{"sh"}, Stdin: true, StdinOnce: true, TTY: true})
		// The answer (42) appears only if the shell evaluated the input: the
		// TTY echoes the input itself, which holds $((6*7)), not 42. Then
		// the session ends as a person ends one, by typing exit: what a
		// runtime does when a TTY's stdin is closed under a shell is not
		// this spec's question (CRI-O keeps the session, and the shell,
		// until the client's timeout: 20 s of every run; containerd ends it).
		// It is typed once the shell's prompt shows (Enter typed until
		// then): the answer to input typed at once can be lost before the
		// runtime attached the terminal's output (Input.Ready).
		res, err := f.Attach(ctx, dbg, &cri.Input{Ready: "\n", ReadyAnswer: "# ", Text: "echo attach-$((6*7))-" + f.Token + "\n", Until: "attach-42-" + f.Token, Then: "exit\n"}, true)
		b := capability.Observe(capability.Attach).Evidence("stdout %q, err %v", res.Stdout, err)
		if err != nil && res.Stdout == "" {
			b.Outcome(capability.Refused, "attach failed: "+err.Error())
		}
		b.Check(strings.Contains(res.Stdout, "attach-42-"+f.Token), "the shell's answer is missing")
		f.Checker.Record(b.Done("interactive shell answered"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("attach without a TTY delivers a debug container's stdout and stderr on separate streams [CRI-8]", framework.Label(string(capability.Attach)), func(ctx SpecContext) {
		f := newFramework(capability.Attach)
		dbg := startEchoDebug(ctx, f)
		in := "1-" + f.Token
		res, err := f.Attach(ctx, dbg, &cri.Input{Ready: "\n", ReadyAnswer: "ready", Text: in + "\n", Until: "out-" + in, UntilStderr: "err-" + in, Drop: true}, false)
		b := capability.Observe(capability.Attach).Case("without a TTY").Evidence("typed %q; stdout %q; stderr %q; err %v", in, res.Stdout, res.Stderr, err)
		if !strings.Contains(res.Stdout, "out-"+in) || strings.Contains(res.Stdout, "err-"+in) {
			b.Problem("stdout should hold out-%s and nothing of stderr", in)
		}
		if !strings.Contains(res.Stderr, "err-"+in) || strings.Contains(res.Stderr, "out-"+in) {
			b.Problem("stderr should hold err-%s and nothing of stdout", in)
		}
		if err != nil {
			b.Problem("the session failed: %v", err)
			if res.Stdout == "" && res.Stderr == "" {
				b.Outcome(capability.Refused, "attach failed: "+err.Error())
			}
		}
		f.Checker.Record(b.Done("stdout and stderr apart"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a dropped attach connection sends the debug container no EOF: it keeps running, and attaching again sees its output go on [CRI-8] [LIFE-4]", framework.Label(string(capability.Attach)), func(ctx SpecContext) {
		f := newFramework(capability.Attach)
		dbg := startEchoDebug(ctx, f)
		var evidence []string
		b := capability.Observe(capability.Attach).Case("dropped and attached again")
		// Each session types a line, waits for the answer on both streams,
		// and drops the connection with stdin still open.
		for i, line := range []string{"1-" + f.Token, "2-" + f.Token} {
			res, err := f.Attach(ctx, dbg, &cri.Input{Ready: "\n", ReadyAnswer: "ready", Text: line + "\n", Until: "out-" + line, UntilStderr: "err-" + line, Drop: true}, false)
			evidence = append(evidence, fmt.Sprintf("attach %d: typed %q; stdout %q; stderr %q; err %v", i+1, line, res.Stdout, res.Stderr, err))
			if err != nil || !strings.Contains(res.Stdout, "out-"+line) || !strings.Contains(res.Stderr, "err-"+line) {
				b.Problem("attach %d got no answer to %q", i+1, line)
				if i == 0 && res.Stdout == "" && res.Stderr == "" {
					f.Checker.Record(b.Outcome(capability.Refused, fmt.Sprint("attach failed: ", err)).Evidence("%s", strings.Join(evidence, "\n")).Done(""))
					return
				}
			}
			st, err := f.Status(ctx, dbg)
			Expect(err).NotTo(HaveOccurred())
			evidence = append(evidence, fmt.Sprintf("after dropping attach %d: the debug container is %s (exit code %d)", i+1, st.State, st.ExitCode))
			if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
				b.Problem("the debug container is %s after attach %d was dropped: its stdin was closed", st.State, i+1)
				break
			}
		}
		if stdout, stderr, err := f.Logs(ctx, dbg); err == nil {
			evidence = append(evidence, fmt.Sprintf("its CRI log: stdout %q, stderr %q", stdout, stderr))
		}
		b.Evidence("%s", strings.Join(evidence, "\n"))
		f.Checker.Record(b.Done("kept running; the second attach was answered"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a debug container's stdout and stderr, written before anyone attaches, are in its CRI log [CRI-8] [LIFE-4]", framework.Label(string(capability.Logs)), func(ctx SpecContext) {
		f := newFramework(capability.Logs)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
			Command: []string{"sh", "-c", "echo out-$((6*7)); echo err-$((6*7)) >&2; exec sleep 86400"}})
		// Each line must be in the log under its own stream, as the kubelet
		// reads it (kubectl logs shows both; the API separates neither, the
		// CRI log format does).
		var stdout, stderr string
		failure := InterceptGomegaFailure(func() {
			Eventually(ctx, func(g Gomega) {
				var err error
				stdout, stderr, err = f.Logs(ctx, dbg)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(stdout).To(ContainSubstring("out-42\n"), "stdout")
				g.Expect(stderr).To(ContainSubstring("err-42\n"), "stderr")
			}).WithTimeout(f.Timeouts.LogWrite).WithPolling(f.Timeouts.Poll).Should(Succeed())
		})
		b := capability.Observe(capability.Logs).Evidence("%s:\nstdout: %q\nstderr: %q", dbg.LogPath(), stdout, stderr)
		if failure != nil {
			b.Problem("output missing from the log").Evidence("%v", failure)
		}
		f.Checker.Record(b.Done("stdout and stderr logged, each in its stream"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// startEchoDebug starts a TARGET debug container that answers each line on
// its stdin with out-<line> on stdout and err-<line> on stderr (an empty
// line with ready on both: Input.Ready's handshake), stdin open
// and not closed after the first attach (stdin_once false), no TTY: the
// shape of an interactive ephemeral container that several clients attach to.
func startEchoDebug(ctx SpecContext, f *cri.Framework) *cri.Container {
	GinkgoHelper()
	sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
	target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
	return f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
		Command: []string{"sh", "-c", `while read -r l; do if [ -z "$l" ]; then echo ready; echo ready >&2; else echo "out-$l"; echo "err-$l" >&2; fi; done`, f.DebugMarker("debug")}, Stdin: true})
}
