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
	It("ExecSync and streaming exec, with and without a TTY, run in a targeting debug container [CRI-8]", framework.Label(string(capability.Exec)), func(ctx SpecContext) {
		f := newFramework(capability.Exec)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})

		var problems, evidence []string
		sync, err := f.Exec(ctx, dbg, "sh", "-c", "echo out-$((6*7)); echo err-$((6*7)) >&2; exit 3")
		evidence = append(evidence, "ExecSync:\n"+sync.String())
		if err != nil || sync.Stdout != "out-42\n" || sync.Stderr != "err-42\n" || sync.ExitCode != 3 {
			problems = append(problems, fmt.Sprintf("ExecSync: want stdout out-42, stderr err-42, exit 3 (err %v)", err))
		}
		input := "hello-" + f.Token + "\n"
		res, err := f.StreamExec(ctx, dbg, &cri.Input{Text: input}, false, "cat")
		evidence = append(evidence, fmt.Sprintf("streaming exec cat, stdin %q: stdout %q stderr %q err %v", input, res.Stdout, res.Stderr, err))
		if err != nil || res.Stdout != input {
			problems = append(problems, "streaming exec without TTY: stdin not echoed back by cat")
		}
		res, err = f.StreamExec(ctx, dbg, &cri.Input{Text: "echo tty-$((6*7))\n", Until: "tty-42", Then: "exit\n"}, true, "sh")
		evidence = append(evidence, fmt.Sprintf("streaming exec sh with TTY: stdout %q err %v", res.Stdout, err))
		if err != nil || !strings.Contains(res.Stdout, "tty-42") {
			problems = append(problems, "streaming exec with TTY: no output from the shell")
		}
		obs := capability.Observation{Capability: capability.Exec, Outcome: capability.Works, Observed: "ExecSync and streaming exec work", Evidence: strings.Join(evidence, "\n")}
		if len(problems) > 0 {
			obs.Outcome, obs.Observed = capability.Deviated, strings.Join(problems, "; ")
		}
		f.Checker.Record(obs)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("attach with stdin and a TTY reaches a debug container's shell [CRI-8]", framework.Label(string(capability.Attach)), func(ctx SpecContext) {
		f := newFramework(capability.Attach)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
			Command: []string{"sh"}, Stdin: true, StdinOnce: true, TTY: true})
		// The answer (42) appears only if the shell evaluated the input: the
		// TTY echoes the input itself, which holds $((6*7)), not 42.
		res, err := f.Attach(ctx, dbg, &cri.Input{Text: "echo attach-$((6*7))-" + f.Token + "\n", Until: "attach-42-" + f.Token}, true)
		obs := capability.Observation{Capability: capability.Attach, Evidence: fmt.Sprintf("stdout %q, err %v", res.Stdout, err)}
		switch {
		case err != nil && res.Stdout == "":
			obs.Outcome, obs.Observed = capability.Refused, "attach failed: "+err.Error()
		case strings.Contains(res.Stdout, "attach-42-"+f.Token):
			obs.Outcome, obs.Observed = capability.Works, "interactive shell answered"
		default:
			obs.Outcome, obs.Observed = capability.Deviated, "the shell's answer is missing"
		}
		f.Checker.Record(obs)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("a debug container's stdout and stderr, written before anyone attaches, are in its CRI log [CRI-8] [LIFE-4]", framework.Label(string(capability.Logs)), func(ctx SpecContext) {
		f := newFramework(capability.Logs)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
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
			}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll).Should(Succeed())
		})
		obs := capability.Observation{Capability: capability.Logs, Outcome: capability.Works, Observed: "stdout and stderr logged, each in its stream",
			Evidence: fmt.Sprintf("%s:\nstdout: %q\nstderr: %q", dbg.LogPath(), stdout, stderr)}
		if failure != nil {
			obs.Outcome, obs.Observed, obs.Evidence = capability.Deviated, "output missing from the log", failure.Error()
		}
		f.Checker.Record(obs)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
