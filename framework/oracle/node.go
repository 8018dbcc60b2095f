package oracle

import (
	"errors"
	"fmt"
)

// Node is the process whose namespaces stand for the node's: NODE modes
// are judged against it, never against the reading process's own
// namespaces (a suite in a container with the runtime's socket mounted is
// not in the node's).
type Node struct {
	Process
	// How says how it was found, for the evidence.
	How string
}

// ErrNoNode says the node's namespaces cannot be established from here;
// host modes are then not judged.
var ErrNoNode = errors.New("the node's namespaces cannot be established from here")

// NodeBySocket takes the server of the runtime's CRI unix socket (the
// runtime's own process, found through the socket's peer credentials) as
// the node's reference process. A runtime serves its CRI from the node's
// namespaces: that is what NODE means to it. The server must be visible in
// p, the /proc of the reading process's PID namespace: a suite in a
// container of its own sees PID 0 for a peer outside, and gets ErrNoNode.
func (p Proc) NodeBySocket(socket string) (Node, error) {
	pid, err := peerPID(socket)
	if err != nil {
		return Node{}, fmt.Errorf("%w: the peer of %s: %v", ErrNoNode, socket, err)
	}
	if pid == 0 {
		return Node{}, fmt.Errorf("%w: the server of %s runs in a PID namespace this process cannot see (peer PID 0)", ErrNoNode, socket)
	}
	proc, err := p.Read(pid)
	if err != nil {
		return Node{}, fmt.Errorf("%w: the server of %s is PID %d, which %s cannot read: %v", ErrNoNode, socket, pid, p.Root, err)
	}
	if len(proc.Namespaces) == 0 {
		return Node{}, fmt.Errorf("%w: no namespace links readable for PID %d (%s)", ErrNoNode, pid, proc.Args)
	}
	return Node{Process: proc, How: fmt.Sprintf("the server of the CRI socket %s (PID %d: %s), through the socket's peer credentials", socket, pid, proc.Args)}, nil
}
