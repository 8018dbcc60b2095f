//go:build unix

// Package flock holds an exclusive flock(2) on a file between processes.
package flock

import (
	"os"
	"syscall"
)

// Lock takes an exclusive lock on path (created when missing), waiting for
// whoever holds it; unlock releases it.
func Lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
