package capability

import (
	"fmt"
	"strings"
)

// Builder collects one observation: what was seen (evidence) and what was
// wrong (problems). Done turns it into the Observation Checker.Record
// judges: works when nothing was wrong, deviated with every problem
// otherwise. It replaces flipping an Observation's outcome by hand, and
// keeps the recording the last thing a spec does with its judgement.
type Builder struct {
	obs      Observation
	problems []string
	evidence []string
	set      bool
}

// Observe starts an observation of capability n.
func Observe(n Name) *Builder { return &Builder{obs: Observation{Capability: n}} }

// Case tells apart several observations of one capability in one spec.
func (b *Builder) Case(c string) *Builder { b.obs.Case = c; return b }

// Requirements replaces the capability's own requirement IDs.
func (b *Builder) Requirements(ids ...string) *Builder { b.obs.Requirements = ids; return b }

// Evidence adds a line of evidence.
func (b *Builder) Evidence(format string, args ...any) *Builder {
	b.evidence = append(b.evidence, fmt.Sprintf(format, args...))
	return b
}

// Problem records a deviation from the requirement.
func (b *Builder) Problem(format string, args ...any) *Builder {
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
	return b
}

// Check records a problem unless ok.
func (b *Builder) Check(ok bool, format string, args ...any) *Builder {
	if !ok {
		b.Problem(format, args...)
	}
	return b
}

// Outcome fixes the outcome and what was observed (a refusal, a blocked
// dependency), whatever problems were found.
func (b *Builder) Outcome(o Outcome, observed string) *Builder {
	b.obs.Outcome, b.obs.Observed, b.set = o, observed, true
	return b
}

// BlockedBy marks the observation blocked by capability by.
func (b *Builder) BlockedBy(by Name, observed string) *Builder {
	b.obs.BlockedBy = by
	return b.Outcome(Blocked, observed)
}

// Problems are the problems found so far.
func (b *Builder) Problems() []string { return append([]string(nil), b.problems...) }

// Done is the observation: works (observed: works) when no problem was
// found and no outcome was fixed, deviated with the problems otherwise.
func (b *Builder) Done(works string) Observation {
	o := b.obs
	o.Evidence = strings.Join(b.evidence, "\n")
	switch {
	case b.set:
	case len(b.problems) > 0:
		o.Outcome, o.Observed = Deviated, strings.Join(b.problems, "; ")
	default:
		o.Outcome, o.Observed = Works, works
	}
	return o
}
