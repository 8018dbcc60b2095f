package crunwrapper

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/ectest/ectest/kind/host"
)

// Main runs crun with args. For create and run, it first makes the
// bundle's ociVersion one crun 1.8 accepts (AcceptableVersion). On a hybrid host it first moves its thread
// into a private mount namespace (unshare(CLONE_NEWNS) affects only the
// calling thread of a threaded process, so the goroutine is locked to it
// and execve happens from it: the exec'd crun keeps that namespace), makes
// every mount private so nothing propagates back to the host, and binds
// the empty file over cgroup.controllers. Then it replaces itself with
// crun, which keeps the PID, the environment and every inherited file
// descriptor (the shim's console socket and pipes).
func Main(args []string) int {
	crun := os.Getenv(EnvCrun)
	if crun == "" {
		var err error
		if crun, err = exec.LookPath("crun"); err != nil {
			return fail(fmt.Errorf("crun not found on PATH (Debian's crun package; or set %s): %w", EnvCrun, err))
		}
	}
	if path, bundleConfig, ok := host.RuncFiles(args); ok && bundleConfig {
		if err := AcceptableVersion(path); err != nil {
			return fail(err)
		}
		if err := UnlimitedPids(path); err != nil {
			return fail(err)
		}
	}
	hybrid, err := Hybrid()
	if err != nil {
		return fail(err)
	}
	if hybrid {
		runtime.LockOSThread() // never unlocked: this thread execs crun
		empty := filepath.Join(filepath.Dir(os.Args[0]), EmptyFile)
		if err := hide(empty); err != nil {
			return fail(err)
		}
	}
	return fail(syscall.Exec(crun, append([]string{crun}, args...), os.Environ()))
}

// Hybrid reports whether this host has a cgroup2 hierarchy at
// /sys/fs/cgroup/unified with controllers, which crun 1.8 refuses.
func Hybrid() (bool, error) {
	b, err := os.ReadFile(Controllers)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(bytes.TrimSpace(b)) > 0, nil
}

func hide(empty string) error {
	if fi, err := os.Stat(empty); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		return fmt.Errorf("%s must be an empty file next to the wrapper (the embedded runtime makes it): %v", empty, err)
	}
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private in the wrapper's mount namespace: %w", err)
	}
	if err := syscall.Mount(empty, Controllers, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s over %s: %w", empty, Controllers, err)
	}
	return nil
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, Name+":", err)
	return 1
}
