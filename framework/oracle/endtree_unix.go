//go:build !windows

package oracle

import "syscall"

func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// stopProcess freezes a process (SIGSTOP), so that it forks no more
// children while they are found and killed.
func stopProcess(pid int) error { return syscall.Kill(pid, syscall.SIGSTOP) }
