package host

import (
	"fmt"
	"os"
	"syscall"
)

// RuncWrapperMain is the OCI runtime dockerd uses on hosts whose capability
// bounding set lacks capabilities (these VMs lack CAP_SYS_RESOURCE). Docker
// 20.10 asks for every capability the kernel knows for a privileged
// container, and runc then fails with "unable to apply caps". The wrapper
// removes the capabilities no process here can hold from the bundle's
// config.json (create, run) or the --process file (exec), then replaces
// itself with the real runc, which keeps the PID, every inherited file
// descriptor (console sockets, preserved fds) and the environment.
//
// It is one of the programs every ectest binary carries (fixtures/programs):
// Prepare installs a copy of the running binary as WrapperPath, and a binary
// started under the name ectest-runc runs this.
func RuncWrapperMain(args []string) int {
	real := os.Getenv("ECTEST_REAL_RUNC")
	if real == "" {
		real = "/usr/bin/runc"
	}
	if path, bundle, ok := RuncFiles(args); ok {
		missing, err := MissingHere()
		if err != nil {
			return wrapperFail(err)
		}
		drop := map[string]bool{}
		for _, c := range missing {
			drop[c] = true
		}
		if len(drop) > 0 {
			if err := RewriteFile(path, bundle, drop); err != nil {
				return wrapperFail(err)
			}
		}
	}
	return wrapperFail(syscall.Exec(real, append([]string{real}, args...), os.Environ()))
}

func wrapperFail(err error) int {
	fmt.Fprintln(os.Stderr, "ectest-runc:", err)
	return 1
}
