package cri

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework/oracle"
	"k8s.io/apimachinery/pkg/util/wait"
)

// SessionKind is a way into a running container.
type SessionKind string

// The session kinds the suite judges, as kubectl uses them.
const (
	// ExecSyncSession: ExecSync (probes, crictl exec without -i).
	ExecSyncSession SessionKind = "ExecSync"
	// StreamSession: streaming exec with stdin, no TTY (kubectl exec -i).
	StreamSession SessionKind = "streaming exec"
	// StreamTTYSession: streaming exec with stdin and a TTY (kubectl exec -it).
	StreamTTYSession SessionKind = "streaming exec with a TTY"
)

// SessionKinds are every exec kind, in a fixed order.
var SessionKinds = []SessionKind{ExecSyncSession, StreamSession, StreamTTYSession}

// SessionLanding is where one exec session landed, read while it ran.
type SessionLanding struct {
	Kind SessionKind
	// Processes are the session's processes carrying its marker (read
	// from outside), or its shell as the container's kernel shows it
	// (From is then InsideNote).
	Processes []oracle.Process
	// Own is the container's own process, read the same way.
	Own      oracle.Process
	From     string
	Evidence string
}

// ObserveSession runs a long-lived session of kind in c whose argv carries
// a marker, finds it from outside, reads its landing record and the
// container's own process's, and ends it. Where c's processes are not
// visible from the node, the session reads both from inside. A session
// that fails to start is an error (the way in does not work).
func (f *Framework) ObserveSession(ctx context.Context, c *Container, kind SessionKind) (SessionLanding, error) {
	own, err := f.OwnSettled(ctx, c)
	if err != nil {
		return SessionLanding{}, err
	}
	if len(own) == 0 {
		return f.observeSessionInside(ctx, c, kind)
	}
	marker := "ectest-session-" + f.Token + "-" + randomToken()
	done := make(chan error, 1)
	var output string
	go func() {
		out, err := f.runSession(ctx, c, kind, marker, "sh", "-c", "sleep 60; : "+marker)
		output = out
		done <- err
	}()
	var found []oracle.Process
	var early error
	ended := false
	pollErr := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(context.Context) (bool, error) {
		select {
		case early = <-done:
			ended = true
			return true, nil
		default:
		}
		found, err = f.Outside().Find(marker)
		return err != nil || len(found) > 0, err
	})
	// End it and what it started (its sleep holds the session open).
	gone := map[int]bool{}
	for _, p := range found {
		if !gone[p.PID] {
			for _, pid := range f.endSession(ctx, p.PID) {
				gone[pid] = true
			}
		}
	}
	if !ended {
		early = <-done
	}
	switch {
	case len(found) == 0 && pollErr != nil:
		return SessionLanding{}, fmt.Errorf("the %s session (marker %s) never showed in the node's /proc within %s: %v; the session: %v %s", kind, marker, f.Timeouts.ContainerReady, pollErr, early, output)
	case len(found) == 0:
		return SessionLanding{}, fmt.Errorf("the %s session ended before it could be read: %v %s", kind, early, output)
	}
	l := SessionLanding{Kind: kind, Processes: found, Own: own[0], From: "outside, from the node's /proc"}
	ev := []string{fmt.Sprintf("the container's own process: %s", own[0])}
	for _, p := range found {
		ev = append(ev, fmt.Sprintf("the %s session's process: %s", kind, p))
	}
	l.Evidence = strings.Join(ev, "\n")
	return l, nil
}

// runSession runs cmd in c as a session of kind and returns its output.
// A streaming session keeps stdin open (it waits for a text that never
// comes) until its process ends: a TTY's stdin closed hangs it up.
func (f *Framework) runSession(ctx context.Context, c *Container, kind SessionKind, marker string, cmd ...string) (string, error) {
	switch kind {
	case ExecSyncSession:
		r, err := f.Exec(ctx, c, cmd...)
		return r.Stdout + r.Stderr, err
	case StreamSession, StreamTTYSession:
		r, err := f.StreamExec(ctx, c, &Input{Until: marker + "-never"}, kind == StreamTTYSession, cmd...)
		return r.Stdout + r.Stderr, err
	}
	return "", fmt.Errorf("unknown session kind %q", kind)
}

// observeSessionInside reads, through a session of kind, its own landing
// and the container's own process's, as the container's kernel shows them.
func (f *Framework) observeSessionInside(ctx context.Context, c *Container, kind SessionKind) (SessionLanding, error) {
	procs, raw, err := f.Processes(ctx, c)
	if err != nil {
		return SessionLanding{}, err
	}
	pid := 0
	for _, p := range procs {
		if oracle.HasWord(p.Args, c.Marker) {
			pid = p.PID
			break
		}
	}
	if pid == 0 {
		return SessionLanding{}, fmt.Errorf("the container's own process (marker %s) is not visible from its exec session:\n%s", c.Marker, raw)
	}
	out, err := f.runSession(ctx, c, kind, "ectest-inside-"+f.Token, "sh", "-c", insideLandingScript, "ectest", fmt.Sprint(pid))
	if err != nil {
		return SessionLanding{}, fmt.Errorf("the %s session: %v\n%s", kind, err, out)
	}
	out = strings.ReplaceAll(out, "\r", "")
	session, own, err := parseInsideLanding(out)
	if err != nil {
		return SessionLanding{}, fmt.Errorf("read the %s session's landing from inside: %v\n%s", kind, err, out)
	}
	return SessionLanding{Kind: kind, Processes: []oracle.Process{session}, Own: own, From: InsideNote,
		Evidence: fmt.Sprintf("the %s session (its shell) and the container's own process (PID %d inside), as the container's kernel shows them:\n%s", kind, pid, out)}, nil
}
