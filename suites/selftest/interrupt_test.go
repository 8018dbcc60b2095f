//go:build linux

package selftest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Ctrl-C in the middle of a run, while a spec's sandbox exists, must leave
// no sandbox, container, containerd process or runtime state behind.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	runs(t) // needs the host set up for the embedded runtime, as make test does
	bin := suiteBinary(t, "cri")
	var out bytes.Buffer
	cmd := exec.Command(bin, "-ginkgo.focus=PID namespaces", "-ginkgo.v", "-report-dir="+t.TempDir())
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Wait until a spec has a sandbox running in the embedded runtime.
	deadline := time.Now().Add(4 * time.Minute)
	interrupted := false
	for !interrupted && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("the run ended before it could be interrupted (%v):\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		socks, _ := filepath.Glob("/var/lib/ectest/embedded/*/containerd.sock")
		for _, s := range socks {
			if sandboxes(s) > 0 {
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				interrupted = true
				break
			}
		}
	}
	if !interrupted {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("no sandbox appeared within 4 minutes:\n%s", out.String())
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("an interrupted run exited 0")
		}
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("the run did not stop within 3 minutes of Ctrl-C:\n%s", out.String())
	}
	entries, _ := os.ReadDir("/var/lib/ectest/embedded")
	for _, e := range entries {
		t.Errorf("embedded runtime state left after Ctrl-C: %s", e.Name())
	}
	if procs := processesMentioning("/var/lib/ectest/embedded"); len(procs) > 0 {
		t.Errorf("processes left after Ctrl-C:\n%v", procs)
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out.String())
	}
}

func sandboxes(socket string) int {
	conn, err := cri.Dial("unix://" + socket)
	if err != nil {
		return 0
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := conn.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0
	}
	return len(resp.Items)
}
