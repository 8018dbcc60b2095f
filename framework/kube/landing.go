package kube

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/oracle"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The landing of an ephemeral container's processes beyond its namespaces
// at the cluster layer: the cgroup they are charged to and the credentials
// they hold, on every way in through the API server (its own process, exec
// without and with a TTY, attach), read on the node by the node observer
// (NodeReport).

// SessionKind is a way into a running container through the API server.
type SessionKind string

// The exec kinds the cluster layer judges, as kubectl uses them.
const (
	// ExecSession: exec with stdin, no TTY (kubectl exec -i).
	ExecSession SessionKind = "exec"
	// ExecTTYSession: exec with stdin and a TTY (kubectl exec -it).
	ExecTTYSession SessionKind = "exec with a TTY"
)

// SessionKinds are every exec kind, in a fixed order.
var SessionKinds = []SessionKind{ExecSession, ExecTTYSession}

// NoProcessOnNode is NodeReport's "unavailable" for a container whose
// processes the node observer does not see.
const NoProcessOnNode = "the node observer sees no process of the container (a runtime with a kernel of its own hides them)"

// SessionLanding is where one exec session landed, read on the node while
// it ran, with the container's own process read in the same report.
type SessionLanding struct {
	Kind SessionKind
	// Processes are the session's processes carrying its marker.
	Processes []oracle.Process
	// Own is the container's own process.
	Own      oracle.Process
	Evidence string
}

// NodeProcesses reads, on the pod's node, the first process carrying each
// marker, waiting (Timeouts.ContainerReady) for every marker to show.
// unavailable says why the node cannot tell (NodeReport's reasons, or
// NoProcessOnNode when a marker's process never shows there).
func (f *Framework) NodeProcesses(ctx context.Context, pod *corev1.Pod, markers ...string) (procs map[string]oracle.Process, unavailable string) {
	var report oracle.Report
	missing := ""
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		report, unavailable = f.NodeReport(ctx, pod, markers...)
		if unavailable != "" {
			return true, nil
		}
		missing = ""
		for _, m := range markers {
			if len(report.Found[m]) == 0 {
				missing = m
				return false, nil
			}
		}
		return true, nil
	})
	if unavailable != "" {
		return nil, unavailable
	}
	if missing != "" {
		return nil, fmt.Sprintf("%s: none carries %s", NoProcessOnNode, missing)
	}
	procs = map[string]oracle.Process{}
	for _, m := range markers {
		procs[m] = report.Found[m][0]
	}
	return procs, ""
}

// ObserveSession starts a session of kind in container (whose own process
// carries ownMarker) with stdin open, as kubectl exec -i or -it does, that
// stays until the node observer has read it; then ends it from the node
// and returns both landing records. unavailable says why the node could
// not tell (see NodeProcesses); err is a session that could not be seen
// (the way in does not work).
func (f *Framework) ObserveSession(ctx context.Context, pod *corev1.Pod, container, ownMarker string, kind SessionKind) (l SessionLanding, unavailable string, err error) {
	marker := "ectest-session-" + f.Token + "-" + container + "-" + strings.ReplaceAll(string(kind), " ", "-")
	execCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// stdin stays open while the session runs: a TTY's stdin closed hangs
	// the session up.
	stdin, typing := io.Pipe()
	defer func() { _ = typing.Close() }()
	done := make(chan error, 1)
	var output string
	go func() {
		out, stderr, err := f.Exec(execCtx, pod.Name, container, stdin, kind == ExecTTYSession, "sh", "-c", "sleep 60; : "+marker)
		output = out + stderr
		done <- err
	}()
	var report oracle.Report
	var ended error
	pollErr := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			ended = fmt.Errorf("the %s session ended before the node observer saw it: %v %s", kind, err, output)
			return false, ended
		default:
		}
		report, unavailable = f.NodeReport(ctx, pod, ownMarker, marker)
		return unavailable != "" || len(report.Found[marker]) > 0, nil
	})
	session, own := report.Found[marker], report.Found[ownMarker]
	f.endOnNode(ctx, pod, session)
	switch {
	case unavailable != "":
		return l, unavailable, nil
	case ended != nil:
		return l, "", ended
	case pollErr != nil:
		return l, "", fmt.Errorf("the %s session (marker %s) never showed on the node within %s: %v", kind, marker, f.Timeouts.ContainerReady, pollErr)
	case len(own) == 0:
		return l, NoProcessOnNode, nil
	}
	l = SessionLanding{Kind: kind, Processes: session, Own: own[0]}
	ev := []string{"the container's own process: " + own[0].String()}
	for _, s := range session {
		ev = append(ev, fmt.Sprintf("the %s session's process: %s", kind, s))
	}
	l.Evidence = strings.Join(ev, "\n")
	return l, "", nil
}

// endOnNode ends the session processes from the node, with what they
// started (their sleep holds the session's output open), frozen first
// (oracle's EndTree): seen as soon as it started, a shell may not have
// forked yet.
func (f *Framework) endOnNode(ctx context.Context, pod *corev1.Pod, procs []oracle.Process) {
	if len(procs) == 0 {
		return
	}
	argv := []string{helper.Path, helper.ModeEndTree, f.Timeouts.ProcessStop.String()}
	for _, p := range procs {
		argv = append(argv, strconv.Itoa(p.PID))
	}
	if ns, name, why := f.nodeObserver(ctx, pod); why == "" {
		_, _, _ = f.execIn(ctx, ns, name, "observer", nil, false, argv...)
	}
}

// ShellLoop is the command of a container that attach can drive: a shell
// that runs each line typed at it, with marker in its argv (the debug
// marker: the container's own process is the one attached to). Its
// container needs stdin and a TTY.
func ShellLoop(marker string) []string {
	return []string{"sh", "-c", `while read -r l; do eval "$l"; done`, marker}
}

// AttachedPID attaches with stdin and a TTY to container, whose process
// runs ShellLoop, has the shell print its own PID, and drops the session
// (the shell stays). It returns the PID the shell has in its own PID
// namespace, and what the session showed.
func (f *Framework) AttachedPID(ctx context.Context, pod, container string) (int, string, error) {
	// The terminal echoes what is typed, which holds $$ and $((1+1)), not
	// the numbers: only the shell's answer ends in "-<token>-2".
	answer := regexp.MustCompile(`at-(\d+)-` + f.Token + `-2`)
	out := framework.NewBuffer()
	out.Until("-" + f.Token + "-2")
	actx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	r, w := io.Pipe()
	go func() {
		defer func() { _ = w.Close() }()
		// Type something harmless until the shell answers (framework.Prompt
		// says why), then the question, then wait for the answer: closing
		// a TTY's stdin would hang the shell up.
		if !framework.Prompt(actx, w, "echo ready-$((2*3))\n", f.Timeouts.Keystroke, func() bool { return out.Holds("ready-6") }) {
			return
		}
		_, _ = io.WriteString(w, "echo at-$$-"+f.Token+"-$((1+1))\n")
		select {
		case <-out.Seen():
		case <-actx.Done():
		}
		// The answer is in: drop the session, as a client that goes away.
		cancel()
	}()
	err := f.AttachTo(actx, pod, container, r, true, out, nil)
	_ = r.Close()
	text := strings.ReplaceAll(out.String(), "\r", "")
	m := answer.FindStringSubmatch(text)
	if m == nil {
		return 0, text, fmt.Errorf("attach with a TTY to %s/%s: no answer with the shell's PID (err %v); the session showed %q", pod, container, err, text)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid, text, nil
}

// PodCgroups are the cgroups of the pod whose UID is uid, by hierarchy
// (oracle.Process.ChargedCgroups' keys), as p, a process of one of its
// regular containers, shows them: in each hierarchy the ancestor of p's
// cgroup whose name carries the pod's UID (the kubelet's pod cgroup:
// cgroupfs ".../pod<uid>", systemd "...-pod<uid, - as _>.slice"). how
// says what was found. An error when p's cgroups were not read or none
// carries the UID (the kubelet's cgroups per QoS class off, or a runtime
// placing containers elsewhere): then the parent of p's own cgroup is
// taken, where the kubelet puts the pod's containers, and how says so.
func PodCgroups(p oracle.Process, uid types.UID) (parents map[string]string, how string, err error) {
	if p.Cgroups == nil {
		return nil, "", fmt.Errorf("the cgroups of PID %d were not read", p.PID)
	}
	charged := p.ChargedCgroups()
	if len(charged) == 0 {
		return nil, "", fmt.Errorf("PID %d is charged to no cgroup hierarchy: %q", p.PID, p.Cgroups)
	}
	names := []string{"pod" + string(uid), "pod" + strings.ReplaceAll(string(uid), "-", "_")}
	parents = map[string]string{}
	var notFound []string
	for k, path := range charged {
		parts := strings.Split(path, "/")
		at := -1
		for i, part := range parts {
			if strings.Contains(part, names[0]) || strings.Contains(part, names[1]) {
				at = i
				break
			}
		}
		if at < 0 {
			notFound = append(notFound, path)
			i := strings.LastIndex(path, "/")
			if i <= 0 {
				parents[k] = "/"
			} else {
				parents[k] = path[:i]
			}
			continue
		}
		parents[k] = strings.Join(parts[:at+1], "/")
	}
	if len(notFound) > 0 {
		sort.Strings(notFound)
		return parents, fmt.Sprintf("no cgroup of the pod's container carries the pod's UID %s (%s): the parent of its own cgroup taken as the pod's", uid, strings.Join(notFound, ", ")), nil
	}
	return parents, fmt.Sprintf("the cgroup named for the pod's UID %s, the ancestor of its container's", uid), nil
}

// CgroupsOutsidePod lists where q is charged outside the pod's cgroups
// (PodCgroups): each hierarchy that charges resources whose path is
// neither the pod's nor below it, or that the pod has none in. An error
// when q's cgroups were not read.
func CgroupsOutsidePod(q oracle.Process, pod map[string]string) ([]string, error) {
	if q.Cgroups == nil {
		return nil, fmt.Errorf("the cgroups of PID %d were not read", q.PID)
	}
	charged := q.ChargedCgroups()
	if len(charged) == 0 {
		return nil, fmt.Errorf("PID %d is charged to no cgroup hierarchy: %q", q.PID, q.Cgroups)
	}
	keys := make([]string, 0, len(charged))
	for k := range charged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		name := k
		if k == "" {
			name = "unified"
		}
		got, parent := charged[k], pod[k]
		switch {
		case parent == "":
			out = append(out, fmt.Sprintf("%s cgroup %q: the pod's container is charged to no %s cgroup", name, got, name))
		case got == parent || strings.HasPrefix(got, parent+"/"):
		default:
			out = append(out, fmt.Sprintf("%s cgroup %q is not below the pod's %q", name, got, parent))
		}
	}
	return out, nil
}
