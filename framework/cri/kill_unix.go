//go:build !windows

package cri

import "syscall"

func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
