package report

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/runtimes/expected"
)

func TestApplyExpectations(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "2.4.2+unknown"}
	files := expected.BuiltinFiles()
	mk := func(nonconformant, conformant []capability.Name, judged ...SpecVerdict) Summary {
		s := Summary{Layers: []LayerSummary{{Layer: capability.LayerCRI, Runtime: rt, Nonconformant: nonconformant, ConformantCapabilities: conformant, Conformant: len(conformant)}}, Judged: judged}
		for _, j := range judged {
			s.Nonconformances = append(s.Nonconformances, j.Spec)
		}
		s.Outcome = s.outcome()
		return s
	}
	spec := func(name string, caps ...capability.Name) SpecVerdict {
		return SpecVerdict{Spec: name, State: "failed", Verdict: capability.Nonconformant, Capabilities: caps}
	}
	tid, unk, pid := capability.Name("target-id-validation"), capability.Name("unknown-namespace-mode-error"), capability.Name("pid-target")

	// Exactly the known deviations: exit 0, "as expected", never "conformant".
	s := mk([]capability.Name{tid, unk}, []capability.Name{pid}, spec("sandbox TARGET", tid), spec("mode 42", unk))
	if s.ExitCode != framework.ExitNonconformant {
		t.Fatalf("without expectations: %d", s.ExitCode)
	}
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitConformant || !strings.HasPrefix(s.Line, "ectest: as expected: 2 known deviations (target-id-validation, unknown-namespace-mode-error)") || strings.Contains(s.Line, "conformant;") {
		t.Errorf("as expected: %d %q", s.ExitCode, s.Line)
	}
	if md := SummaryMarkdown(s); !strings.Contains(md, "Known deviations") || !strings.Contains(md, "containerd#5008") {
		t.Errorf("summary.md lists no known deviations:\n%s", md)
	}

	// A new one: exit 1, CHANGED, named.
	// A nonconformant spec is listed by its capability; one that observed
	// no nonconformant capability is listed by itself.
	s = mk([]capability.Name{tid, unk, pid}, nil, spec("sandbox TARGET", tid), spec("mode 42", unk), spec("targets", pid), spec("no capability"))
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitNonconformant || !strings.Contains(s.Line, "CHANGED from expectations (2 new nonconformances: pid-target (cri layer), spec no capability)") || strings.Contains(s.Line, "spec targets") {
		t.Errorf("new: %d %q", s.ExitCode, s.Line)
	}

	// A fixed one: exit 1, to leave the file.
	s = mk([]capability.Name{unk}, []capability.Name{tid}, spec("mode 42", unk))
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitNonconformant || !strings.Contains(s.Line, "1 fixed") || !strings.Contains(s.Line, "remove it from builtin:containerd-2.yaml") {
		t.Errorf("fixed: %d %q", s.ExitCode, s.Line)
	}

	// Not judged (a label filter): unchecked, not fixed.
	s = mk(nil, []capability.Name{pid})
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitConformant || len(s.Expectations.Unchecked) != 2 || !strings.Contains(s.Line, "as expected: 0 known deviations") {
		t.Errorf("unchecked: %d %q %v", s.ExitCode, s.Line, s.Expectations.Unchecked)
	}

	// Run errors still win: no verdict to compare.
	s = mk([]capability.Name{tid, unk}, nil)
	s.RunErrors = []string{"BeforeSuite: the registry is down"}
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitRunFailed {
		t.Errorf("run error: %d %q", s.ExitCode, s.Line)
	}

	// A runtime no file is about: every nonconformance is new.
	s = mk([]capability.Name{pid}, nil)
	s.Layers[0].Runtime = capability.RuntimeInfo{Name: "cri-o", Version: "1.34.0"}
	ApplyExpectations(&s, files)
	if s.ExitCode != framework.ExitNonconformant || !strings.Contains(s.Expectations.Files[0], "none for cri-o") {
		t.Errorf("no file: %d %q %v", s.ExitCode, s.Line, s.Expectations.Files)
	}

	// Merging keeps the comparison (make conformance, make matrix).
	a := mk([]capability.Name{tid, unk}, nil, spec("sandbox TARGET", tid), spec("mode 42", unk))
	ApplyExpectations(&a, files)
	b := Summary{Layers: []LayerSummary{{Layer: capability.LayerCluster, Runtime: rt, Conformant: 16}}}
	ApplyExpectations(&b, files)
	m := MergeSummaries("", a, b)
	if m.ExitCode != framework.ExitConformant || !strings.Contains(m.Line, "as expected: 2 known deviations") {
		t.Errorf("merged: %d %q", m.ExitCode, m.Line)
	}
	m = MergeSummaries("", a, mk([]capability.Name{pid}, nil))
	if m.ExitCode != framework.ExitNonconformant || !strings.Contains(m.Line, "a run without -expect") {
		t.Errorf("merged with a run without -expect: %d %q", m.ExitCode, m.Line)
	}
}
