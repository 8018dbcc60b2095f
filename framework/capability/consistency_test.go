package capability

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

func declaredAll(s Support, except map[Name]Support) map[Name]Support {
	d := map[Name]Support{}
	for _, def := range All() {
		d[def.Name] = s
	}
	for n, v := range except {
		d[n] = v
	}
	return d
}

// "blocked by X" holds only with X nonconformant at the same layer: a
// matrix where it points at a conformant cell, or at another layer's
// deviation, is inconsistent; the one BlockOn makes is not.
func TestInconsistencies(t *testing.T) {
	decl := declaredAll(Supported, nil)
	blocked := Observation{Capability: PtraceRules, Layer: LayerCRI, Outcome: Blocked, BlockedBy: Exec, Observed: "exec: elsewhere"}
	execAt := func(l Layer, o Outcome) Observation {
		return Observation{Capability: Exec, Layer: l, Outcome: o, Observed: string(o)}
	}
	for _, c := range []struct {
		name  string
		specs []SpecObservations
		want  string // "" consistent
	}{
		{"blocked by a nonconformant exec", []SpecObservations{
			{Spec: SpecRef{Name: "exec [CRI-8]", State: "passed"}, Observations: []Observation{execAt(LayerCRI, Works)}},
			{Spec: SpecRef{Name: "ptrace [SEC-3]", State: "failed"}, Observations: []Observation{execAt(LayerCRI, Deviated), blocked}},
		}, ""},
		{"blocked by a conformant exec", []SpecObservations{
			{Spec: SpecRef{Name: "exec [CRI-8]", State: "passed"}, Observations: []Observation{execAt(LayerCRI, Works)}},
			{Spec: SpecRef{Name: "ptrace [SEC-3]", State: "skipped"}, Observations: []Observation{blocked}},
		}, "ptrace-rules (cri layer): the cell is blocked by exec, but exec's cri cell is conformant"},
		{"blocked by an exec never observed", []SpecObservations{
			{Spec: SpecRef{Name: "ptrace [SEC-3]", State: "skipped"}, Observations: []Observation{blocked}},
		}, "exec's cri cell is not-observed"},
		{"blocked by exec nonconformant at another layer", []SpecObservations{
			{Spec: SpecRef{Name: "exec [API-10]", State: "failed"}, Observations: []Observation{execAt(LayerCluster, Deviated)}},
			{Spec: SpecRef{Name: "ptrace [SEC-3]", State: "skipped"}, Observations: []Observation{blocked}},
		}, "exec's cri cell is not-observed"},
		{"a blocked observation in a conformant cell", []SpecObservations{
			{Spec: SpecRef{Name: "exec [CRI-8]", State: "passed"}, Observations: []Observation{execAt(LayerCRI, Works)}},
			{Spec: SpecRef{Name: "ptrace 1 [SEC-3]", State: "passed"}, Observations: []Observation{{Capability: PtraceRules, Layer: LayerCRI, Outcome: Works}}},
			{Spec: SpecRef{Name: "ptrace 2 [SEC-3]", State: "skipped"}, Observations: []Observation{blocked}},
		}, "ptrace-rules (cri layer): an observation is blocked by exec, but exec's cri cell is conformant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := Compute(RuntimeInfo{}, "p", decl, []Layer{LayerCRI, LayerCluster}, c.specs)
			got := m.Inconsistencies()
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("inconsistent: %q", got)
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Errorf("Inconsistencies() = %q, want one with %q", got, c.want)
			}
		})
	}
	// A probe judges no optional capability: blocked by a probed one holds.
	probe := declaredAll(Probed, nil)
	m := Compute(RuntimeInfo{}, "probe", probe, []Layer{LayerCRI}, []SpecObservations{{Spec: SpecRef{Name: "ptrace", State: "skipped"},
		Observations: []Observation{{Capability: PIDTarget, Layer: LayerCRI, Outcome: Refused}, {Capability: PtraceRules, Layer: LayerCRI, Outcome: Blocked, BlockedBy: PIDTarget}}}})
	if got := m.Inconsistencies(); len(got) != 0 {
		t.Errorf("probe: %q", got)
	}
}

// An Inapplicable observation (the dependency refused as declared) is not
// applicable, and a cell with a working observation besides is conformant.
func TestInapplicable(t *testing.T) {
	o := Decide(MustLookup(PtraceRules), Observation{Capability: PtraceRules, Outcome: Inapplicable, BlockedBy: PIDTarget, Declared: Supported})
	if o.Verdict != VerdictNotApplicable || !strings.Contains(o.Reason, "pid-target") {
		t.Errorf("Decide = %s (%s)", o.Verdict, o.Reason)
	}
	decl := declaredAll(Supported, map[Name]Support{PIDTarget: Unsupported})
	inapplicable := Observation{Capability: PtraceRules, Layer: LayerCRI, Outcome: Inapplicable, BlockedBy: PIDTarget}
	m := Compute(RuntimeInfo{}, "p", decl, []Layer{LayerCRI}, []SpecObservations{{Spec: SpecRef{Name: "ptrace", State: "skipped"}, Observations: []Observation{inapplicable}}})
	m.MarkUnverified(LayerCRI, map[Name]bool{PtraceRules: true})
	for _, r := range m.Rows {
		if r.Capability == PtraceRules && r.Layers[LayerCRI].Verdict != VerdictNotApplicable {
			t.Errorf("ptrace-rules: %s, want not-applicable (never unverified)", r.Layers[LayerCRI].Verdict)
		}
	}
	m = Compute(RuntimeInfo{}, "p", decl, []Layer{LayerCRI}, []SpecObservations{
		{Spec: SpecRef{Name: "ptrace 1", State: "skipped"}, Observations: []Observation{inapplicable}},
		{Spec: SpecRef{Name: "ptrace 2", State: "passed"}, Observations: []Observation{{Capability: PtraceRules, Layer: LayerCRI, Outcome: Works}}},
	})
	for _, r := range m.Rows {
		if r.Capability == PtraceRules && r.Layers[LayerCRI].Verdict != Conformant {
			t.Errorf("ptrace-rules with a working observation: %s", r.Layers[LayerCRI].Verdict)
		}
	}
}

// Checker.BlockOn, run as specs: the dependency's failure is recorded in
// its own cell (nonconformant, the spec fails), the others blocked by it;
// a dependency refused as declared makes them not applicable (the spec
// skips); one that works records nothing.
var blockOnSpecs = map[string]*Checker{
	"exec deviated": {Layer: LayerCRI, Declared: declaredAll(Supported, nil), Exercises: []Name{PtraceRules}},
	"pid-target refused as declared": {Layer: LayerCRI, Declared: declaredAll(Supported, map[Name]Support{PIDTarget: Unsupported}),
		Exercises: []Name{ProcRootFS}},
	"exec works": {Layer: LayerCRI, Declared: declaredAll(Supported, nil), Exercises: []Name{PtraceRules}},
}

var blockOnReport types.Report

var _ = ginkgo.Describe("BlockOn", func() {
	ginkgo.It("exec deviated", func() {
		blockOnSpecs["exec deviated"].BlockOn(Observation{Capability: Exec, Outcome: Deviated, Observed: "exec sessions do not run where the container's own process does: uts namespace"})
	})
	ginkgo.It("pid-target refused as declared", func() {
		blockOnSpecs["pid-target refused as declared"].BlockOn(Observation{Capability: PIDTarget, Outcome: Refused, Observed: "refused: InvalidArgument"})
	})
	ginkgo.It("exec works", func() {
		blockOnSpecs["exec works"].BlockOn(Observation{Capability: Exec, Outcome: Works})
	})
})

var _ = ginkgo.ReportAfterSuite("BlockOn", func(r types.Report) { blockOnReport = r })

type quietT struct{}

func (quietT) Fail() {}

func TestBlockOn(t *testing.T) {
	ginkgo.RunSpecs(quietT{}, "BlockOn")
	var specs []SpecObservations
	state := map[string]string{}
	for _, sr := range blockOnReport.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		state[sr.LeafNodeText] = sr.State.String()
		s := SpecObservations{Spec: SpecRef{Name: sr.LeafNodeText, State: sr.State.String()}}
		for _, e := range sr.ReportEntries {
			if o, ok := e.GetRawValue().(Observation); ok && e.Name == ReportEntryName {
				s.Observations = append(s.Observations, o)
			}
		}
		specs = append(specs, s)
	}
	if state["exec deviated"] != "failed" || state["pid-target refused as declared"] != "skipped" || state["exec works"] != "passed" {
		t.Fatalf("spec states %v", state)
	}
	verdicts := map[string]map[Name]Verdict{}
	for _, s := range specs {
		verdicts[s.Spec.Name] = map[Name]Verdict{}
		for _, o := range s.Observations {
			verdicts[s.Spec.Name][o.Capability] = o.Verdict
		}
	}
	if v := verdicts["exec deviated"]; len(v) != 2 || v[Exec] != Nonconformant || v[PtraceRules] != VerdictBlocked {
		t.Errorf("exec deviated: %v", v)
	}
	if v := verdicts["pid-target refused as declared"]; len(v) != 2 || v[PIDTarget] != Conformant || v[ProcRootFS] != VerdictNotApplicable {
		t.Errorf("pid-target refused as declared: %v", v)
	}
	if v := verdicts["exec works"]; len(v) != 0 {
		t.Errorf("exec works: %v", v)
	}
	m := Compute(RuntimeInfo{}, "p", declaredAll(Supported, nil), []Layer{LayerCRI}, specs)
	if got := m.Inconsistencies(); len(got) != 0 {
		t.Errorf("the matrix BlockOn makes is inconsistent: %q", got)
	}
}
