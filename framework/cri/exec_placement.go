package cri

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework/oracle"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ExecPlacement is where an exec session ran, against the container's own
// process: runtimes build an exec's process from their own copy of the
// container's spec (and sandboxed runtimes route it through an agent), so
// the two can differ, and an exec that lands elsewhere makes every
// observation made through exec wrong.
type ExecPlacement struct {
	// Differences list where the session differs from the container's own
	// process's landing record (oracle.Differences); none when it runs
	// where the container does.
	Differences []string
	// From says whose view it was ("outside, ..." or InsideNote).
	From     string
	Evidence string
}

// ObserveExec starts an exec session in c that stays until it has been
// read, reads it and the container's own process from the node's /proc,
// ends it, and compares the two. Where the container's processes are not
// visible from the node (a kernel of its own), the session compares its
// own namespace links with the container's process's from inside.
func (f *Framework) ObserveExec(ctx context.Context, c *Container) (ExecPlacement, error) {
	own, err := f.OwnSettled(ctx, c)
	if err != nil {
		return ExecPlacement{}, err
	}
	if len(own) == 0 {
		return f.observeExecInside(ctx, c)
	}
	marker := "ectest-exec-" + f.Token + "-" + randomToken()
	type result struct {
		r   ExecResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := f.Exec(ctx, c, "sh", "-c", "sleep 60; : "+marker)
		done <- result{r, err}
	}()
	var session []oracle.Process
	var early *result
	pollErr := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(context.Context) (bool, error) {
		select {
		case r := <-done:
			early = &r
			return true, nil
		default:
		}
		session, err = f.Outside().Find(marker)
		return err != nil || len(session) > 0, err
	})
	// End the session and what it started (its sleep holds the exec's
	// output open: the call would last until the runtime's exec timeout).
	// (Find may have seen the shell's child before it became the sleep,
	// with the same argv: ended as a descendant, it is not ended again.)
	ended := map[int]bool{}
	for _, p := range session {
		if !ended[p.PID] {
			for _, pid := range f.endSession(ctx, p.PID) {
				ended[pid] = true
			}
		}
	}
	if early == nil {
		r := <-done
		early = &r
	}
	switch {
	case pollErr != nil && len(session) == 0:
		return ExecPlacement{}, fmt.Errorf("the exec session (marker %s) never showed in the node's /proc within %s: %v; the exec: %v %s", marker, f.Timeouts.ContainerReady, pollErr, early.err, early.r)
	case len(session) == 0:
		return ExecPlacement{}, fmt.Errorf("the exec session ended before it could be read: %v\n%s", early.err, early.r)
	}
	p := ExecPlacement{From: "outside, from the node's /proc"}
	var ev []string
	ev = append(ev, fmt.Sprintf("the container's own process: %s", own[0]))
	for _, s := range session {
		ev = append(ev, fmt.Sprintf("the exec session's process: %s", s))
		for _, d := range oracle.Differences(own[0], s) {
			p.Differences = append(p.Differences, fmt.Sprintf("PID %d: %s", s.PID, d))
		}
	}
	p.Evidence = strings.Join(ev, "\n")
	return p, nil
}

// observeExecInside compares, from inside, an exec session's landing with
// that of the container's own process (found by its marker): the
// namespace links, status (user, groups, capabilities, no_new_privs,
// seccomp), cgroup and oom_score_adj of each, as the sandbox's kernel
// shows them (oracle.Differences; what it does not show is not compared).
func (f *Framework) observeExecInside(ctx context.Context, c *Container) (ExecPlacement, error) {
	procs, raw, err := f.Processes(ctx, c)
	if err != nil {
		return ExecPlacement{}, err
	}
	pid := 0
	for _, p := range procs {
		if strings.Contains(p.Args, c.Marker) {
			pid = p.PID
			break
		}
	}
	if pid == 0 {
		return ExecPlacement{}, fmt.Errorf("the container's own process (marker %s) is not visible from its exec session:\n%s", c.Marker, raw)
	}
	r, err := f.Exec(ctx, c, "sh", "-c", insideLandingScript, "ectest", fmt.Sprint(pid))
	if err != nil {
		return ExecPlacement{}, err
	}
	session, own, err := parseInsideLanding(r.Stdout)
	if err != nil {
		return ExecPlacement{}, fmt.Errorf("read the exec session's landing from inside: %v\n%s", err, r.Stdout)
	}
	p := ExecPlacement{From: InsideNote, Evidence: fmt.Sprintf("the exec session (its shell) and the container's own process (PID %d inside), as the container's kernel shows them:\n%s", pid, r.Stdout)}
	p.Differences = oracle.Differences(own, session)
	return p, nil
}

// insideLandingScript prints, for the exec session's shell ($$) and the
// container's own process ($1), each namespace link and its status, cgroup
// and oom_score_adj, under "=== <who> <what>" headers.
const insideLandingScript = `for w in session own; do
  p=$$; [ "$w" = own ] && p=$1
  for k in pid net ipc mnt uts user cgroup; do echo "=== $w ns/$k"; readlink /proc/$p/ns/$k; done
  for f in status cgroup oom_score_adj; do echo "=== $w $f"; cat /proc/$p/$f; done
done`

// parseInsideLanding reads insideLandingScript's output into the session's
// and the container's own process's landing records.
func parseInsideLanding(out string) (session, own oracle.Process, err error) {
	sections := map[string]string{}
	var key string
	for _, line := range strings.Split(out, "\n") {
		if k, ok := strings.CutPrefix(line, "=== "); ok {
			key = k
			continue
		}
		if key != "" {
			sections[key] += line + "\n"
		}
	}
	read := func(who string) (oracle.Process, error) {
		if sections[who+" status"] == "" {
			return oracle.Process{}, fmt.Errorf("no status of the %s", who)
		}
		links := map[oracle.Kind]string{}
		for _, k := range oracle.Kinds {
			links[k] = strings.TrimSpace(sections[who+" ns/"+string(k)])
		}
		return oracle.FromInside(sections[who+" status"], sections[who+" cgroup"], sections[who+" oom_score_adj"], links)
	}
	if session, err = read("session"); err != nil {
		return
	}
	if own, err = read("own"); err != nil {
		return
	}
	// A link one side could not read is compared on neither.
	for _, k := range oracle.Kinds {
		if session.Namespaces[k] == "" || own.Namespaces[k] == "" {
			delete(session.Namespaces, k)
			delete(own.Namespaces, k)
		}
	}
	return session, own, nil
}

// endSession kills an exec session's process and every process below it,
// frozen first (oracle.Proc.EndTree), and returns their PIDs.
func (f *Framework) endSession(ctx context.Context, pid int) []int {
	return f.Outside().Proc.EndTree(ctx, pid, f.Timeouts.Poll, f.Timeouts.ProcessStop)
}
