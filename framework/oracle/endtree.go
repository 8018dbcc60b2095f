package oracle

import (
	"context"
	"strings"
	"time"
)

// EndTree kills a process and every process below it, as Root shows them,
// and returns their PIDs. The process is frozen first (SIGSTOP) and its
// children listed only once Root shows it stopped (polled every poll, for
// at most bound): an exec session is found the moment it starts, before it
// may have forked its sleep, and a child forked after the children were
// listed would outlive the kill, holding the session's output open (seen:
// an ExecSync that lasted 25 s, until containerd's exec timeout, "failed to
// drain exec process"). A zombie or a process gone ends the wait at once;
// one that never shows stopped within bound has what is below it killed
// all the same. PID 0 and 1 (a process group, the namespace's init) and
// the caller itself (Self) are never ended. The CRI layer ends sessions
// from the host's /proc with it; the cluster layer's node observer through
// ectest-helper's end-tree mode.
func (p Proc) EndTree(ctx context.Context, pid int, poll, bound time.Duration) []int {
	if pid <= 1 || (p.Self != 0 && pid == p.Self) {
		return nil
	}
	if stopProcess(pid) == nil {
		p.waitStopped(ctx, pid, poll, bound)
	}
	var ended []int
	for _, d := range append(p.Descendants(pid), pid) {
		if d != p.Self {
			_ = killProcess(d)
			ended = append(ended, d)
		}
	}
	return ended
}

// waitStopped waits until pid shows stopped, or gone (exited, a zombie),
// for at most bound.
func (p Proc) waitStopped(ctx context.Context, pid int, poll, bound time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		state, err := p.State(pid)
		if err != nil || state == "" || strings.ContainsAny(state[:1], "TtZX") {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
