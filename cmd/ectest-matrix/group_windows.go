package main

import (
	"context"
	"os/exec"
)

// The matrix runs its cells with bash and make; on Windows a cell's
// command can only be ended as a whole process.
func ownProcessGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// lockFile: there is no flock on Windows; cells sharing a file lock are
// still never run together by this runner.
func lockFile(context.Context, string, func()) (func(), error) { return func() {}, nil }
