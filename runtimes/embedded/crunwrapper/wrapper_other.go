//go:build !linux

package crunwrapper

import (
	"fmt"
	"os"
)

// Main fails: crun runs on Linux only.
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, Name+": crun runs on Linux only")
	return 1
}

// Hybrid is false off Linux.
func Hybrid() (bool, error) { return false, nil }
