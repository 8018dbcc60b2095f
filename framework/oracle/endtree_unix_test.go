//go:build linux

package oracle_test

import (
	"context"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/oracle"
)

// A process that keeps forking children which hold its output open, as an
// exec session's shell and its sleep do: after EndTree nobody holds the
// output (it reads EOF), which is what lets an ExecSync return. Listing the
// children and then killing the parent, without freezing it first, leaves
// the children forked in between holding it.
func TestEndTreeLeavesNoChildHoldingTheOutput(t *testing.T) {
	cmd := exec.Command("sh", "-c", `i=0; while [ $i -lt 1000 ]; do sleep 60 & i=$((i+1)); done; wait`)
	// Its own process group, so that whatever survives is killed at the end.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	proc := oracle.Host()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(proc.Descendants(cmd.Process.Pid)) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the shell forked no child")
		}
	}
	proc.EndTree(ctx, cmd.Process.Pid, 10*time.Millisecond, 10*time.Second)
	// Read before Wait, which closes the pipe.
	eof := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, out)
		eof <- err
	}()
	select {
	case <-eof:
	case <-time.After(5 * time.Second):
		t.Fatal("a child of the killed shell still holds its output")
	}
}

// A zombie (exited, not yet reaped: the shell's child ended as a
// descendant and handed to an init that never reaps) never shows stopped:
// EndTree does not wait for it.
func TestEndTreeDoesNotWaitForAZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	proc := oracle.Host()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		state, err := proc.State(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if state != "" && state[0] == 'Z' {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("never a zombie: %s", state)
		}
	}
	start := time.Now()
	proc.EndTree(ctx, cmd.Process.Pid, 10*time.Millisecond, 5*time.Second)
	if took := time.Since(start); took > time.Second {
		t.Errorf("EndTree waited %s for a zombie to stop", took)
	}
}
