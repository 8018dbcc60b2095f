//go:build linux

package selftest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
)

// interruptRun starts a command (a suite binary, or the Ginkgo CLI running
// one in parallel), sends Ctrl-C as soon as ready reports that a spec has
// something to clean up, and waits for it to exit, which must be non-zero.
// Like a terminal's Ctrl-C, SIGINT goes to the command's whole process
// group: with the Ginkgo CLI, every parallel process gets it. It returns
// the run's output. With signal false, nothing is sent: the run is expected
// to interrupt itself (a -ginkgo.timeout running out mid-spec).
func interruptRun(t *testing.T, argv []string, signal bool, ready func() bool, what string, within, stopWithin time.Duration) *framework.Buffer {
	t.Helper()
	out, _ := interruptRunEnv(t, argv, nil, signal, ready, what, within, stopWithin)
	return out
}

// interruptRunEnv is interruptRun with more environment, and the exit code.
func interruptRunEnv(t *testing.T, argv, env []string, signal bool, ready func() bool, what string, within, stopWithin time.Duration) (*framework.Buffer, int) {
	t.Helper()
	var sig syscall.Signal // none: the run interrupts itself
	if signal {
		sig = syscall.SIGINT
	}
	return signalRun(t, argv, env, sig, ready, what, within, stopWithin)
}

// signalRun starts argv in a process group of its own, sends sig to the
// whole group once ready says so (none for 0), and waits for it to exit,
// which must be non-zero; it returns the output and the exit code.
func signalRun(t *testing.T, argv, env []string, sig syscall.Signal, ready func() bool, what string, within, stopWithin time.Duration) (*framework.Buffer, int) {
	t.Helper()
	// Written by the command's copier while the loop below reads it.
	out := framework.NewBuffer()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

	start := time.Now()
	deadline := start.Add(within)
	for !ready() {
		if time.Now().After(deadline) {
			kill()
			t.Fatalf("%s did not happen within %s:\n%s", what, within, out.String())
		}
		select {
		case err := <-done:
			if strings.Contains(out.String(), "timedout in SynchronizedBeforeSuite") {
				t.Fatalf("the suite's timeout ran out in its setup, before any spec had a pod (a machine slower than the case allows for): nothing to check (%v):\n%s", err, out.String())
			}
			t.Fatalf("the run ended before it could be interrupted (%v):\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Logf("%s after %s", what, time.Since(start).Round(100*time.Millisecond))
	if sig != 0 {
		if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("an interrupted run exited 0:\n%s", out.String())
		}
		return out, cmd.ProcessState.ExitCode()
	case <-time.After(stopWithin):
		kill()
		t.Fatalf("the run did not stop within %s of %v:\n%s", stopWithin, sig, out.String())
	}
	return out, -1
}
