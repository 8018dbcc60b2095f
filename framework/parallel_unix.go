//go:build !windows

package framework

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a new process group.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) { _ = syscall.Kill(-p.Pid, sig) }
