package cri

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ectest/ectest/framework/oracle"
)

// Process is one line of `ps -o pid,user,args` in a container.
type Process struct {
	PID  int
	User string
	Args string
}

// ParsePS parses busybox or procps `ps -o pid,user,args` output.
func ParsePS(out string) ([]Process, error) {
	var procs []Process
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if i == 0 && len(fields) > 0 && fields[0] == "PID" {
			continue
		}
		if len(fields) < 3 {
			continue // kernel threads have no args in some ps builds
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("ps line %q: %v", line, err)
		}
		procs = append(procs, Process{PID: pid, User: fields[1], Args: strings.Join(fields[2:], " ")})
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("no processes in ps output %q", out)
	}
	return procs, nil
}

// View is which PID namespace a container turned out to be in (the
// oracle's views).
type View = oracle.View

// The views (see oracle.View).
const (
	ViewOwn    = oracle.ViewOwn
	ViewTarget = oracle.ViewTarget
	ViewPod    = oracle.ViewPod
	ViewNode   = oracle.ViewNode
	ViewOther  = oracle.ViewOther
)

// Markers identify processes by a substring of their argv.
type Markers struct {
	// Self marks the observing container's main process.
	Self string
	// Target marks the target container's process ("" if none).
	Target string
	// Siblings mark other containers of the same sandbox.
	Siblings []string
	// Helpers are argv substrings of processes the observing container
	// itself starts (its children, the ps command).
	Helpers []string
}

// Classify says which view a process list looks like. It is evidence
// only: the oracle's namespace identities decide (ObservePIDs).
func Classify(procs []Process, m Markers) View {
	has := func(marker string) bool {
		if marker == "" {
			return false
		}
		for _, p := range procs {
			if strings.Contains(p.Args, marker) {
				return true
			}
		}
		return false
	}
	var pid1 *Process
	for i := range procs {
		if procs[i].PID == 1 {
			pid1 = &procs[i]
		}
	}
	siblingSeen := false
	for _, s := range m.Siblings {
		siblingSeen = siblingSeen || has(s)
	}
	known := func(p Process) bool {
		for _, mk := range append(append([]string{m.Self, m.Target}, m.Siblings...), m.Helpers...) {
			if mk != "" && strings.Contains(p.Args, mk) {
				return true
			}
		}
		return false
	}
	foreign := 0
	for _, p := range procs {
		if p.PID != 1 && !known(p) {
			foreign++
		}
	}
	switch {
	case pid1 == nil:
		return ViewNode // PID 1 is invisible only from outside its namespace
	case foreign > 0:
		return ViewNode
	case strings.Contains(pid1.Args, m.Self) && !has(m.Target) && !siblingSeen:
		return ViewOwn
	case m.Target != "" && strings.Contains(pid1.Args, m.Target) && !siblingSeen:
		return ViewTarget
	case !known(*pid1) && (m.Target == "" || has(m.Target)) && (len(m.Siblings) == 0 || siblingSeen):
		return ViewPod
	}
	return ViewOther
}
