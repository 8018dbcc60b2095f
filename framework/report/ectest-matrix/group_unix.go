//go:build !windows

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
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
// program on the machine that locks it (flock -o /tmp/ectest-heavy.lock
// ...), waiting for it until ctx is done. The descriptor is close-on-exec,
// so the cell's processes (a daemon it starts, say) never inherit the
// lock: it ends with release.
func lockFile(ctx context.Context, path string, waiting func()) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, err
		}
		if !said {
			waiting()
			said = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}
