//go:build !windows

package main

import (
	"os/exec"
	"syscall"
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
