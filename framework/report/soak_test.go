package report

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
)

// The soak comparison says no as well as yes: identical runs differ in
// nothing; a spec that failed in one run only, and the capability cell it
// turned, are reported with that run's folder.
func TestSoak(t *testing.T) {
	matrix := func(v capability.Verdict) *capability.Matrix {
		return &capability.Matrix{Rows: []capability.Row{{Capability: capability.Exec, Layers: map[capability.Layer]capability.Cell{capability.LayerCRI: {Verdict: v}}}}}
	}
	steady := func(dir string) Run {
		return Run{Dir: dir, Matrix: matrix(capability.Conformant), Specs: map[string]SpecVerdict{"a skipped spec": {State: "skipped", Verdict: capability.NotObserved}}}
	}
	if d := Soak([]Run{steady("r1"), steady("r2"), steady("r3")}); len(d) != 0 {
		t.Fatalf("identical runs differ: %+v", d)
	}
	flaky := steady("r2")
	flaky.Summary.ExitCode = 1
	flaky.Matrix = matrix(capability.Nonconformant)
	flaky.Specs["exec works"] = SpecVerdict{State: "failed", Verdict: capability.Nonconformant, Why: "a judge said no", Message: "exec failed\nmore"}
	// The odd run out is named even when it is the first.
	if d := Soak([]Run{flaky, steady("r1"), steady("r3")}); len(d) == 0 || d[0].Logs[0] != "r2" {
		t.Errorf("the first run differing: %+v", d)
	}
	d := Soak([]Run{steady("r1"), flaky, steady("r3")})
	var whats []string
	for _, x := range d {
		whats = append(whats, x.What)
		if len(x.Logs) != 1 || x.Logs[0] != "r2" {
			t.Errorf("%s: logs %v, want r2's", x.What, x.Logs)
		}
	}
	if strings.Join(whats, "; ") != "exit code; spec exec works; capability exec (cri layer)" {
		t.Errorf("differences: %q", whats)
	}
	if md := SoakMarkdown("soak", []Run{steady("r1"), flaky}, d); !strings.Contains(md, "run 2: nonconformant (a judge said no)") {
		t.Errorf("markdown:\n%s", md)
	}
}
