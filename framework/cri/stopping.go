package cri

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ectest/ectest/framework/oracle"
	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/wait"
)

// What a stop must end, and what it left behind: the processes of a
// container and of the exec sessions in it, found by the markers their
// argv carry, read from the node's /proc; where the sandbox's processes
// are not visible there (a kernel of its own), through ps in a container
// of the same PID namespace.

// LiveCommand is a process tree that lives until something ends it: a
// shell with marker as its $0 that starts a child shell carrying
// ChildMarker(marker), which sleeps. The kernel does not end a process's
// children with it, and outside a PID namespace of its own a container's
// first process is nobody's PID 1: a stop that ends only the process it
// started leaves the child.
func LiveCommand(marker string) []string {
	return []string{"sh", "-c", `sh -c "sleep 86400 & wait" "$0-child" & wait`, marker}
}

// ChildMarker is the marker of the child shell LiveCommand(marker) starts.
func ChildMarker(marker string) string { return marker + "-child" }

// Carrier is something a stop must end: the path it came by ("the debug
// container's own process", "its ExecSync session") and the marker its
// processes carry (LiveCommand's shell and, as ChildMarker, its child).
type Carrier struct {
	Path, Marker string
}

// Survivor is a process of a Carrier still there after it should have
// ended. Read from inside, Process holds only the PID (inside) and argv.
type Survivor struct {
	Path    string
	Process oracle.Process
	// Inside is set when ps in a container of the namespace found it.
	Inside bool
}

func (l Survivor) String() string {
	if l.Inside {
		return fmt.Sprintf("PID %d (as ps inside shows it) %q, of %s", l.Process.PID, l.Process.Args, l.Path)
	}
	return fmt.Sprintf("PID %d (%d inside) %q, of %s, state %q", l.Process.PID, l.Process.InnerPID(), l.Process.Args, l.Path, l.Process.State)
}

// Survivors reads, from the node's /proc, the live processes (zombies
// left out: they ended, and reaping them is their parent's business)
// carrying a carrier's marker or its child's.
func (f *Framework) Survivors(carriers []Carrier) ([]Survivor, error) {
	var out []Survivor
	for _, c := range carriers {
		for _, m := range []string{c.Marker, ChildMarker(c.Marker)} {
			procs, err := f.Outside().Find(m)
			if err != nil {
				return out, err
			}
			for _, p := range procs {
				if !strings.HasPrefix(p.State, "Z") && !strings.HasPrefix(p.State, "X") {
					out = append(out, Survivor{Path: c.Path, Process: p})
				}
			}
		}
	}
	return out, nil
}

// WaitSurvivors polls Survivors until none is left, for at most timeout,
// and returns what was left at the end (none: everything ended in time).
func (f *Framework) WaitSurvivors(ctx context.Context, carriers []Carrier, timeout time.Duration) ([]Survivor, error) {
	var left []Survivor
	var readErr error
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, timeout, true, func(context.Context) (bool, error) {
		left, readErr = f.Survivors(carriers)
		return readErr == nil && len(left) == 0, nil
	})
	return left, readErr
}

// SurvivorsInside is WaitSurvivors through ps in observer, a container of
// the PID namespace the carriers lived in: for where the sandbox's
// processes are not visible from the node. ps shows a zombie without its
// argv, so none is counted. ps is ps's last output, for evidence.
func (f *Framework) SurvivorsInside(ctx context.Context, observer *Container, carriers []Carrier, timeout time.Duration) (left []Survivor, ps string, err error) {
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		var procs []Process
		procs, ps, err = f.Processes(ctx, observer)
		if err != nil {
			return false, nil
		}
		left = nil
		for _, p := range procs {
			for _, c := range carriers {
				if oracle.HasWord(p.Args, c.Marker) || oracle.HasWord(p.Args, ChildMarker(c.Marker)) {
					left = append(left, Survivor{Path: c.Path, Process: oracle.Process{PID: p.PID, Args: p.Args}, Inside: true})
					break
				}
			}
		}
		return len(left) == 0, nil
	})
	return left, ps, err
}

// EndSurvivors ends, from the node's /proc, each survivor still running
// as the process that was read (same PID and start time) and what is
// below it: a spec's cleanup after a stop that left them.
func (f *Framework) EndSurvivors(ctx context.Context, left []Survivor) {
	ended := map[int]bool{}
	for _, l := range left {
		if l.Inside || ended[l.Process.PID] || !f.Outside().Proc.Alive(l.Process) {
			continue
		}
		for _, pid := range f.endSession(ctx, l.Process.PID) {
			ended[pid] = true
		}
	}
}

// LiveSession is an exec session held open in a container, running
// LiveCommand(Marker).
type LiveSession struct {
	Kind   SessionKind
	Marker string
	done   chan sessionEnd
}

type sessionEnd struct {
	output string
	err    error
}

// ended is what the session's call answered, if it has returned.
func (ls *LiveSession) ended() (sessionEnd, bool) {
	select {
	case e := <-ls.done:
		ls.done <- e // kept for the next reader
		return e, true
	default:
		return sessionEnd{}, false
	}
}

// LiveSessions are exec sessions of every kind held open in a container.
type LiveSessions struct {
	f         *Framework
	Container *Container
	// Sessions are the sessions seen running, Broken the ways in that
	// did not give one ("streaming exec: ...": exec's deviation, which
	// its own spec judges).
	Sessions []*LiveSession
	Broken   []string
	all      []*LiveSession
	// From says whose view saw them start ("outside, ..." or InsideNote).
	From     string
	Evidence string
}

// StartLiveSessions starts in c one session of every kind (SessionKinds),
// each running LiveCommand with a marker of its own, and waits, within
// Timeouts.ContainerReady, until each one's shell and child show (from
// the node's /proc where outside is set, through ps in c otherwise) or
// its call returns. Their end is registered right away (DeferCleanup):
// what still carries a session's marker is ended from outside, and each
// call is waited for (the runtime's exec timeout ends it at the latest).
// A session that ended before it showed, or never showed, is Broken; err
// is only a /proc that cannot be read.
func (f *Framework) StartLiveSessions(ctx context.Context, c *Container, outside bool) (*LiveSessions, error) {
	s := &LiveSessions{f: f, Container: c, From: "outside, from the node's /proc"}
	if !outside {
		s.From = InsideNote
	}
	for _, kind := range SessionKinds {
		ls := &LiveSession{Kind: kind, Marker: "ectest-session-" + f.Token + "-" + randomToken(), done: make(chan sessionEnd, 1)}
		s.all = append(s.all, ls)
		go func() {
			out, err := f.runSession(ctx, c, ls.Kind, ls.Marker, LiveCommand(ls.Marker)...)
			ls.done <- sessionEnd{out, err}
		}()
	}
	ginkgo.DeferCleanup(s.end)
	seen := map[*LiveSession][]string{}
	var last string
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		var procs []Process
		if !outside {
			var ps string
			var err error
			if procs, ps, err = f.Processes(ctx, c); err != nil {
				return false, nil
			}
			last = "ps in " + c.Name + ":\n" + ps
		}
		settled := true
		for _, ls := range s.all {
			if _, ok := ls.ended(); ok || seen[ls] != nil {
				continue
			}
			var lines []string
			for _, m := range []string{ls.Marker, ChildMarker(ls.Marker)} {
				var found []string
				if outside {
					ps, err := f.Outside().Find(m)
					if err != nil {
						return false, err
					}
					for _, p := range ps {
						found = append(found, fmt.Sprintf("the %s session's process: %s", ls.Kind, p))
					}
				} else {
					for _, p := range procs {
						if oracle.HasWord(p.Args, m) {
							found = append(found, fmt.Sprintf("the %s session's process: PID %d (inside) %q", ls.Kind, p.PID, p.Args))
						}
					}
				}
				if len(found) == 0 {
					lines = nil
					break
				}
				lines = append(lines, found...)
			}
			if lines == nil {
				settled = false
			} else {
				seen[ls] = lines
			}
		}
		return settled, nil
	})
	if err != nil && ctx.Err() == nil && !wait.Interrupted(err) {
		return s, fmt.Errorf("read the node's /proc for the sessions in %s: %v", c.Name, err)
	}
	var ev []string
	for _, ls := range s.all {
		switch e, ok := ls.ended(); {
		case seen[ls] != nil:
			s.Sessions = append(s.Sessions, ls)
			ev = append(ev, seen[ls]...)
		case ok:
			s.Broken = append(s.Broken, fmt.Sprintf("%s: ended before it showed: %v %s", ls.Kind, e.err, strings.TrimSpace(e.output)))
		default:
			s.Broken = append(s.Broken, fmt.Sprintf("%s: its shell and child (%s) did not show within %s", ls.Kind, ls.Marker, f.Timeouts.ContainerReady))
		}
	}
	s.Evidence = strings.Join(ev, "\n")
	if !outside {
		s.Evidence = last
	}
	return s, nil
}

// Carriers are the sessions seen running as what a stop must end, each
// path naming the session's kind and the container ("the ExecSync session
// in debug").
func (s *LiveSessions) Carriers() []Carrier {
	var out []Carrier
	for _, ls := range s.Sessions {
		out = append(out, Carrier{Path: fmt.Sprintf("the %s session in %s", ls.Kind, s.Container.Name), Marker: ls.Marker})
	}
	return out
}

// Ended says, for each session seen running, what its call answered if it
// has returned (a session the stop ended returns; one still open is not
// waited for).
func (s *LiveSessions) Ended() []string {
	var out []string
	for _, ls := range s.Sessions {
		if e, ok := ls.ended(); ok {
			out = append(out, fmt.Sprintf("the %s session returned: %v %q", ls.Kind, e.err, strings.TrimSpace(e.output)))
		} else {
			out = append(out, fmt.Sprintf("the %s session's call had not returned", ls.Kind))
		}
	}
	return out
}

// end ends, from outside, what still carries a session's marker, then
// waits for each call to return, within the runtime's exec timeout.
func (s *LiveSessions) end(ctx context.Context) {
	f := s.f
	var carriers []Carrier
	for _, ls := range s.all {
		carriers = append(carriers, Carrier{Path: string(ls.Kind), Marker: ls.Marker})
	}
	if left, err := f.Survivors(carriers); err == nil {
		f.EndSurvivors(ctx, left)
	}
	bound := time.NewTimer(f.Timeouts.Exec + f.Timeouts.RuntimeCall)
	defer bound.Stop()
	for _, ls := range s.all {
		select {
		case e := <-ls.done:
			ls.done <- e
		case <-bound.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
