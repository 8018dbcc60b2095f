//go:build !windows

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/ectest/ectest/internal/flock"
)

// ownProcessGroup starts the command in a process group of its own, so
// that a cell's whole tree (make, the Ginkgo CLI, its processes) can be
// interrupted together, and a terminal's Ctrl-C reaches it only through
// the runner, which forwards it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func interruptGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// lockFile takes an exclusive flock(2) on path, shared with every other
// program on the machine that locks it (flock -o /run/ectest/heavy.lock
// ...), waiting for it until ctx is done. It waits in the kernel, as
// flock(1) does, so that it queues with the others instead of losing to
// them at every release. The descriptor is close-on-exec, so the cell's
// processes (a daemon it starts, say) never inherit the lock: it ends with
// release.
func lockFile(ctx context.Context, path string, waiting func()) (func(), error) {
	// Only in a directory no other user can write (flock.PrivateDir), and
	// never through a link: a lock file another user can make or replace
	// lets them stall every run.
	if err := flock.PrivateDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	release := func() { _ = f.Close() }
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		return release, nil
	} else if !errors.Is(err, syscall.EWOULDBLOCK) {
		release()
		return nil, err
	}
	waiting()
	got := make(chan error, 1)
	go func() {
		for {
			err := syscall.Flock(fd, syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				got <- err
				return
			}
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			release()
			return nil, err
		}
		return release, nil
	case <-ctx.Done():
		// The wait cannot be called off: give the lock back as soon as
		// it comes.
		go func() {
			<-got
			release()
		}()
		return nil, ctx.Err()
	}
}
