package oracle

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Report is what an observer on a node (a process in the node's PID
// namespace: the cluster layer's hostPID observer pod) reads of the
// processes carrying some markers: the cluster layer's oracle, read where
// the suite itself is not.
type Report struct {
	// Node is the node's reference process (nil: not found; NoNode says why).
	Node   *Node  `json:"node,omitempty"`
	NoNode string `json:"noNode,omitempty"`
	// Found are the processes carrying each marker.
	Found map[string][]Process `json:"found"`
	// Inits are PID 1 of each found process's PID namespace, by link.
	Inits map[string]Process `json:"inits"`
}

// NodeByProgram takes the node agent (the kubelet) as the node's reference:
// it runs in the node's namespaces by definition. It must be visible in p:
// an observer whose PID namespace is not the node's does not see it.
func (p Proc) NodeByProgram(program string) (Node, error) {
	pids, err := p.pids()
	if err != nil {
		return Node{}, err
	}
	for _, pid := range pids {
		proc, err := p.Read(pid)
		if err != nil || proc.Args == "" {
			continue
		}
		if filepath.Base(strings.Fields(proc.Args)[0]) == program {
			return Node{Process: proc, How: fmt.Sprintf("the node's %s (PID %d on the node), read by an observer in the node's PID namespace", program, pid)}, nil
		}
	}
	return Node{}, fmt.Errorf("%w: no %s process is visible from the observer: its PID namespace is not the node's", ErrNoNode, program)
}

// Observe reads the report for markers, with program's process as the
// node's reference.
func (p Proc) Observe(program string, markers []string) (Report, error) {
	r := Report{Found: map[string][]Process{}, Inits: map[string]Process{}}
	if node, err := p.NodeByProgram(program); err != nil {
		r.NoNode = err.Error()
	} else {
		r.Node = &node
	}
	for _, m := range markers {
		found, err := p.Find(m)
		if err != nil {
			return r, err
		}
		r.Found[m] = found
		for _, f := range found {
			link := f.Namespaces[PID]
			if _, ok := r.Inits[link]; ok || link == "" {
				continue
			}
			if init, ok, err := p.InitOf(link); err == nil && ok {
				r.Inits[link] = init
			}
		}
	}
	return r, nil
}

// Subjects are the PID subjects of a report: the observer's processes by
// its marker, the target's and each sibling's first process ("" target:
// none). missing names markers with no process.
func (r Report) Subjects(self, target string, siblings ...string) (s PIDSubjects, missing []string) {
	s.Observer = r.Found[self]
	if len(s.Observer) == 0 {
		missing = append(missing, self)
	} else if init, ok := r.Inits[s.Observer[0].Namespaces[PID]]; ok {
		s.Init = &init
	}
	if target != "" {
		if t := r.Found[target]; len(t) > 0 {
			s.Target = &t[0]
		} else {
			missing = append(missing, target)
		}
	}
	for _, m := range siblings {
		if p := r.Found[m]; len(p) > 0 {
			s.Siblings = append(s.Siblings, p[0])
		} else {
			missing = append(missing, m)
		}
	}
	s.Node = r.Node
	return s, missing
}
