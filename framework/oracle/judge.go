package oracle

import (
	"fmt"
	"strings"
)

// View is which PID namespace a container is in.
type View string

// The views. Their texts are API: reports and expected-verdict files use them.
const (
	// ViewOwn: a namespace of the container's own, whose PID 1 is its process.
	ViewOwn View = "own namespace"
	// ViewTarget: the target's namespace, which no sibling shares.
	ViewTarget View = "target namespace"
	// ViewPod: the sandbox's namespace, shared by its containers, PID 1 its infra process.
	ViewPod View = "pod namespace"
	// ViewNode: the node's namespace.
	ViewNode View = "node namespace"
	// ViewOther: none of the above; the reason says what was seen.
	ViewOther View = "unrecognized namespace"
	// ViewUndecided: the facts at hand cannot decide (the node's
	// namespaces are unknown here): no verdict either way.
	ViewUndecided View = ""
)

// PIDSubjects are the processes a PID judgement compares, all read from
// outside the containers under test.
type PIDSubjects struct {
	// Observer are the observing container's own processes (those carrying
	// its marker): normally one; several must agree.
	Observer []Process
	// Target is the target container's process (nil: no target).
	Target *Process
	// Siblings are one process of each other container of the sandbox.
	Siblings []Process
	// Node is the node's reference process (nil: not established).
	Node *Node
	// Init is PID 1 of the observer's namespace (nil: not visible).
	Init *Process
}

// JudgePID decides, from namespace identities alone, which PID namespace
// the observer is in. Equal links and unequal links both decide: a
// namespace that shows the target's processes but is not the target's is
// not the target's.
func JudgePID(s PIDSubjects) (View, string) {
	if len(s.Observer) == 0 {
		return ViewOther, "no process of the observing container is visible"
	}
	self := s.Observer[0]
	d := self.Namespaces[PID]
	for _, o := range s.Observer[1:] {
		if o.Namespaces[PID] != d {
			return ViewOther, fmt.Sprintf("the container's own processes are in different PID namespaces: %s is in %s, %s in %s", brief(self), d, brief(o), o.Namespaces[PID])
		}
	}
	if s.Node != nil && d == s.Node.Namespaces[PID] {
		return ViewNode, fmt.Sprintf("its PID namespace %s is the node's (%s)", d, s.Node.How)
	}
	shareT := s.Target != nil && s.Target.Namespaces[PID] == d
	shared := 0
	var apart []string
	for _, sib := range s.Siblings {
		if sib.Namespaces[PID] == d {
			shared++
		} else {
			apart = append(apart, fmt.Sprintf("%s in %s", brief(sib), sib.Namespaces[PID]))
		}
	}
	n := len(s.Siblings)
	isContainerProcess := func(p Process) bool {
		if s.Target != nil && p.PID == s.Target.PID {
			return true
		}
		for _, o := range append(append([]Process(nil), s.Observer...), s.Siblings...) {
			if p.PID == o.PID {
				return true
			}
		}
		return false
	}
	notNode := ""
	if s.Node != nil {
		notNode = fmt.Sprintf(", not the node's %s", s.Node.Namespaces[PID])
	}
	switch {
	case shareT && n > 0 && shared == n, s.Target == nil && n > 0 && shared == n, s.Target == nil && n == 0 && self.InnerPID() != 1:
		if s.Init == nil {
			return ViewOther, fmt.Sprintf("it shares %s with every container of the sandbox, but no process is PID 1 of it", d)
		}
		if isContainerProcess(*s.Init) {
			return ViewOther, fmt.Sprintf("it shares %s with the sandbox's containers, but PID 1 of it is a container's process (%s), not the infra process", d, brief(*s.Init))
		}
		return ViewPod, fmt.Sprintf("it shares %s with the target and every sibling%s; PID 1 of it is the infra process (%s)", d, notNode, brief(*s.Init))
	case shareT && shared == 0:
		if n == 0 && s.Target.InnerPID() != 1 {
			return ViewPod, fmt.Sprintf("it shares the target's %s, whose PID 1 is not the target (%s)", d, brief(*s.Target))
		}
		return ViewTarget, fmt.Sprintf("it shares the target's %s and no sibling does (%s)%s", d, strings.Join(apart, "; "), notNode)
	case shareT || shared > 0:
		return ViewOther, fmt.Sprintf("it shares %s with the target: %v, and with %d of %d siblings (apart: %s)", d, shareT, shared, n, strings.Join(apart, "; "))
	case s.Target != nil && self.InnerPID() != 1:
		init := ""
		if s.Init != nil && !isContainerProcess(*s.Init) {
			// An infra process, or an init the runtime put before a
			// container's workload (WorkloadFirst): either way not the
			// target's namespace.
			init = fmt.Sprintf(", whose PID 1 is no container's workload (%s)", brief(*s.Init))
		}
		return ViewOther, fmt.Sprintf("it is not in the target's %s, nor in a namespace of its own: its process is PID %d of %s%s", s.Target.Namespaces[PID], self.InnerPID(), d, init)
	}
	// Nobody shares d.
	if self.InnerPID() != 1 {
		return ViewOther, fmt.Sprintf("it shares %s with no other container, yet its process is PID %d there, not PID 1", d, self.InnerPID())
	}
	if s.Node == nil {
		// Without the node's identity an own namespace and the node's
		// cannot be told apart here only if the observer could be the
		// node's PID 1, which a container's process is not: still, say so.
		return ViewOwn, fmt.Sprintf("its process is PID 1 of %s, which no other container shares (the node's namespaces are unknown here)", d)
	}
	return ViewOwn, fmt.Sprintf("its process is PID 1 of %s, which no other container shares%s", d, notNode)
}

// Differences lists where b's landing differs from a's: namespaces, user
// and groups, every capability set, no_new_privs, seccomp, id maps,
// oom_score_adj and the cgroups it is charged to. An exec session must land
// where its container's own process is: the CRI runs it in the container
// (ExecSync, Exec), and runc builds it from the container's own config.
// runc's setns process gets the container's oom_score_adj in its bootstrap
// data (bootstrapData writes config.OomScoreAdj for the setns init too) and
// joins every one of the container's cgroups (cgroups.EnterPid with the
// container's paths): neither may legitimately differ. A cgroup below the
// container's is accepted (runc exec --cgroup takes a sub-cgroup of it; its
// resources are still charged to the container's), and only the cgroups
// that charge resources are compared (ChargedCgroups: not the named or
// controller-less unified hierarchy of a hybrid host, which a runtime need
// not join). oom_score_adj and cgroups are compared only when both were read.
func Differences(a, b Process) []string {
	var out []string
	for _, k := range Kinds {
		if a.Namespaces[k] != b.Namespaces[k] {
			out = append(out, fmt.Sprintf("%s namespace %s, not %s", k, orNone(b.Namespaces[k]), orNone(a.Namespaces[k])))
		}
	}
	diff := func(what, x, y string) {
		if x != y {
			out = append(out, fmt.Sprintf("%s %q, not %q", what, y, x))
		}
	}
	diff("uid", a.UID, b.UID)
	diff("gid", a.GID, b.GID)
	diff("supplementary groups", a.Groups, b.Groups)
	diff("effective capabilities", a.CapEff, b.CapEff)
	diff("permitted capabilities", a.CapPrm, b.CapPrm)
	diff("inheritable capabilities", a.CapInh, b.CapInh)
	diff("ambient capabilities", a.CapAmb, b.CapAmb)
	diff("bounding capabilities", a.CapBnd, b.CapBnd)
	diff("no_new_privs", a.NoNewPrivs, b.NoNewPrivs)
	diff("seccomp mode", a.Seccomp, b.Seccomp)
	diff("seccomp filters", a.SeccompFilters, b.SeccompFilters)
	diff("uid map", a.UIDMap, b.UIDMap)
	diff("gid map", a.GIDMap, b.GIDMap)
	if a.OOMScoreAdj != "" && b.OOMScoreAdj != "" {
		diff("oom_score_adj", a.OOMScoreAdj, b.OOMScoreAdj)
	}
	return append(out, cgroupDifferences(a, b)...)
}

// Same reports whether a and b are in the same namespace of kind k (both
// links known).
func Same(k Kind, a, b Process) bool {
	return a.Namespaces[k] != "" && a.Namespaces[k] == b.Namespaces[k]
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func brief(p Process) string {
	args := p.Args
	if len(args) > 60 {
		args = args[:57] + "..."
	}
	return fmt.Sprintf("PID %d %q", p.PID, args)
}
