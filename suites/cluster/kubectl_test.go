package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"strings"

	"github.com/creack/pty"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ = Describe("kubectl debug", framework.Label(framework.LabelCluster, framework.LabelStory, framework.LabelAPIRelease), func() {
	// kubectl runs kubectl; with tty it runs in a pseudo-terminal the
	// suite opens, as a person's shell would give it.
	kubectl := func(ctx SpecContext, f *kube.Framework, stdin string, tty bool, args ...string) (string, error) {
		GinkgoHelper()
		if env.Kubectl == "" {
			Skip("no kubectl within one minor version of the server " + env.ServerVersion)
		}
		argv := append([]string{env.Kubectl, "--kubeconfig", env.Kubeconfig, "-n", f.Namespace}, args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		if tty {
			return inTerminal(ctx, f, cmd, "# ", stdin)
		}
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	It("kubectl debug --target, non-interactive and interactive, adds ephemeral containers the API shows targeting the container [API-1] [CRI-2] [STORY-DEBUG]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := f.RunPod(ctx, targetPod(f))
		out, err := kubectl(ctx, f, "", false, "debug", pod.Name, "--image="+f.Images[images.Debug], "--target=target", "-c", "batch", "--", "sh", "-c", "ps -o pid,args")
		Expect(err).NotTo(HaveOccurred(), out)
		got := f.WaitPod(ctx, pod.Name, "showing the batch debugger finished", func(p *corev1.Pod) bool {
			s := kube.EphemeralStatus(p, "batch")
			return s != nil && s.State.Terminated != nil
		})
		Expect(got.Spec.EphemeralContainers[0].TargetContainerName).To(Equal("target"))
		logs, err := f.Logs(ctx, pod.Name, "batch")
		Expect(err).NotTo(HaveOccurred())
		Expect(logs).To(ContainSubstring(f.TargetMarker("target")), "kubectl debug --target should see the target's process")

		out, err = kubectl(ctx, f, "ps -o pid,args; exit\n", true, "debug", "-it", pod.Name, "--image="+f.Images[images.Debug], "--target=target", "-c", "interactive", "--", "sh")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(f.TargetMarker("target")), "the interactive session should show the target's process")
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ephemeralNames(p)).To(Equal([]string{"batch", "interactive"}))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// inTerminal runs cmd with a new pseudo-terminal as its standard input,
// output and error, types input into it once prompt shows there (Enter
// typed every Timeouts.Keystroke until then: framework.Prompt says why),
// and returns all cmd wrote there. Where the suite runs has no
// pseudo-terminals (Windows), the spec skips; failing to open one is the
// suite's environment, never a verdict.
func inTerminal(ctx SpecContext, f *kube.Framework, cmd *exec.Cmd, prompt, input string) (string, error) {
	GinkgoHelper()
	term, err := pty.Start(cmd)
	if errors.Is(err, pty.ErrUnsupported) {
		Skip("kubectl debug -it needs a pseudo-terminal, which the suite cannot open on " + runtime.GOOS)
	}
	if err != nil {
		f.Checker.FailEnvironment(fmt.Errorf("open a pseudo-terminal for kubectl debug -it: %w", err), "starting "+cmd.Path)
	}
	out := framework.NewBuffer()
	read := make(chan struct{})
	go func() {
		// Ends when the last holder of the terminal's other end (cmd) is
		// gone: Linux then fails the read with EIO, which is the end.
		_, _ = io.Copy(out, term)
		close(read)
	}()
	// Typing ends with cmd (a kubectl that failed is not typed at) or
	// once the container should have started and been attached
	// (ImagePull + ContainerReady + Exec): then the input is typed
	// anyway, and what the session shows decides.
	tctx, stop := context.WithCancel(ctx)
	typed := make(chan error, 1)
	go func() {
		pctx, cancel := context.WithTimeout(tctx, f.Timeouts.ImagePull+f.Timeouts.ContainerReady+f.Timeouts.Exec)
		framework.Prompt(pctx, term, "\r", f.Timeouts.Keystroke, func() bool { return out.Holds(prompt) })
		cancel()
		if tctx.Err() != nil {
			typed <- nil
			return
		}
		_, werr := io.WriteString(term, input)
		if werr != nil {
			_ = cmd.Process.Kill()
			werr = fmt.Errorf("type into kubectl's terminal: %w", werr)
		}
		typed <- werr
	}()
	err = cmd.Wait()
	stop()
	err = errors.Join(err, <-typed)
	select {
	case <-read:
		_ = term.Close()
	case <-ctx.Done():
		// The spec's time is up with the terminal still held open (by
		// something kubectl started): what it wrote so far is the answer.
		// Closing a file a read blocks on waits for that read, which ends
		// with the last holder: not in the spec's time.
		go func() { <-read; _ = term.Close() }()
		err = errors.Join(err, ctx.Err())
	}
	return out.String(), err
}
