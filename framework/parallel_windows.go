package framework

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup leaves cmd in this console's group: Ctrl-C reaches every
// process attached to the console, the spec processes included.
func ownProcessGroup(*exec.Cmd) {}

// signalGroup: on Windows the console delivers Ctrl-C to every process
// itself; a termination request ends the CLI's process.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if sig == syscall.SIGTERM {
		_ = p.Kill()
	}
}
