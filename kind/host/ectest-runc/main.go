// Command ectest-runc is the OCI runtime dockerd uses on hosts whose
// capability bounding set lacks capabilities (these VMs lack
// CAP_SYS_RESOURCE). Docker 20.10 asks for every capability the kernel
// knows for a privileged container, and runc then fails with "unable to
// apply caps". This wrapper removes the capabilities no process here can
// hold from the bundle's config.json (create, run) or the --process file
// (exec), then runs the real runc with the same arguments.
package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/ectest/ectest/kind/host"
)

func main() {
	real := os.Getenv("ECTEST_REAL_RUNC")
	if real == "" {
		real = "/usr/bin/runc"
	}
	if path, bundle, ok := host.RuncFiles(os.Args[1:]); ok {
		missing, err := host.MissingHere()
		if err != nil {
			fail(err)
		}
		drop := map[string]bool{}
		for _, c := range missing {
			drop[c] = true
		}
		if len(drop) > 0 {
			if err := host.RewriteFile(path, bundle, drop); err != nil {
				fail(err)
			}
		}
	}
	// Replace this process: runc keeps the PID, every inherited file
	// descriptor (console sockets, preserved fds) and the environment.
	fail(syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ()))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ectest-runc:", err)
	os.Exit(1)
}
