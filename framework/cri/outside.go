package cri

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework/oracle"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Outside is the node seen from outside the containers under test: its
// /proc, which the runtime does not control, and the process whose
// namespaces are the node's (oracle.Node). Verdicts on namespaces rest on
// it wherever the sandbox's processes are visible there.
type Outside struct {
	Proc oracle.Proc
	// Node is the node's reference process; nil when it cannot be
	// established from here (NoNode says why): host modes are then not
	// judged.
	Node   *oracle.Node
	NoNode string
}

// Outside is the session's view of the node, established once: the
// node's reference is the server of a unix-socket endpoint (the runtime
// itself, or whatever serves its CRI on the node), read through the
// socket's peer credentials. A remote or named-pipe endpoint has none.
func (s *Session) Outside() *Outside {
	s.outsideOnce.Do(func() {
		o := &Outside{Proc: oracle.Host()}
		path, ok := strings.CutPrefix(s.Endpoint, "unix://")
		switch {
		case s.Windows():
			o.NoNode = "a Windows node has no Linux namespaces to compare"
		case !ok:
			o.NoNode = fmt.Sprintf("the endpoint %s is not a unix socket on this machine: the node's namespaces cannot be read from here", s.Endpoint)
		default:
			node, err := o.Proc.NodeBySocket(path)
			if err != nil {
				o.NoNode = err.Error()
			} else {
				o.Node = &node
			}
		}
		s.outside = o
	})
	return s.outside
}

// NodeLink is the node's namespace link of kind k.
func (o *Outside) NodeLink(k oracle.Kind) (string, bool) {
	if o.Node == nil {
		return "", false
	}
	l, ok := o.Node.Namespaces[k]
	return l, ok && l != ""
}

// Find reads the processes carrying marker (none when the sandbox's
// processes are not visible from here, as with a runtime that has a kernel
// of its own).
func (o *Outside) Find(marker string) ([]oracle.Process, error) {
	if marker == "" {
		return nil, nil
	}
	return o.Proc.Find(marker)
}

// Own reads the container's own processes (its marker) from outside; nil
// when they are not visible from here.
func (f *Framework) Own(c *Container) ([]oracle.Process, error) {
	own, err := f.Outside().Find(c.Marker)
	f.noteNetnsOf(c, own)
	return own, err
}

// OwnSettled is Own for a container just started: runc's init process
// becomes the container's command a moment after StartContainer returns
// (the runtime reports it running before), so where the spec's other
// processes are visible from here (their argv carry its token) it waits,
// within Timeouts.ContainerReady, for c's own process to carry its
// marker. Where none is visible (a kernel of the sandbox's own) it
// returns none at once, and the inside view decides.
func (f *Framework) OwnSettled(ctx context.Context, c *Container) ([]oracle.Process, error) {
	own, err := f.Own(c)
	if err != nil || len(own) > 0 {
		return own, err
	}
	if visible, err := f.Outside().Proc.Carries(f.Token); err != nil || !visible {
		return nil, err
	}
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, false, func(context.Context) (bool, error) {
		own, err = f.Own(c)
		return err != nil || len(own) > 0, err
	})
	return own, err
}

// InsideNote is what a report says when the inside view decided.
const InsideNote = "from inside the containers: none of the sandbox's processes is visible in the /proc this suite reads (a runtime with a kernel of its own hides them, as gVisor's Sentry does; so does running the suite outside the node's PID namespace)"

// SameFromOutside compares the namespace of kind k of a's and b's own
// processes, read from the node's /proc. visible is false when either's
// processes are not visible from here (the inside view must decide then);
// evidence names both processes.
func (f *Framework) SameFromOutside(k oracle.Kind, a, b *Container) (same, visible bool, evidence string, err error) {
	pa, err := f.Own(a)
	if err != nil {
		return false, false, "", err
	}
	pb, err := f.Own(b)
	if err != nil {
		return false, false, "", err
	}
	if len(pa) == 0 || len(pb) == 0 {
		return false, false, InsideNote, nil
	}
	evidence = fmt.Sprintf("from the node's /proc: %s's process %s\n%s's process %s", a.Name, pa[0], b.Name, pb[0])
	return oracle.Same(k, pa[0], pb[0]), true, evidence, nil
}

// Infra finds, from outside, the infra (pause) process of c's sandbox (one
// whose network is POD: in the node's network the node's init would do): a
// process in the network namespace of c's own process that is PID 1 of a
// PID namespace and carries none of the spec's markers (no container of
// the spec's). ok is false when c's processes are not visible from here or
// no such process is (a runtime without an infra process).
func (f *Framework) Infra(c *Container) (infra oracle.Process, ok bool, err error) {
	own, err := f.Own(c)
	if err != nil || len(own) == 0 {
		return oracle.Process{}, false, err
	}
	procs, err := f.Outside().Proc.InNamespace(oracle.Net, own[0].Namespaces[oracle.Net])
	if err != nil {
		return oracle.Process{}, false, err
	}
	for _, p := range procs {
		if p.InnerPID() == 1 && !strings.Contains(p.Args, f.Token) {
			return p, true, nil
		}
	}
	return oracle.Process{}, false, nil
}
