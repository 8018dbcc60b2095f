package report

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

// The run-level consistency check: a run whose matrix says "blocked by
// exec" while exec's cell is conformant is refused as the suite's own bug
// (a run error naming the cell, exit 3), whatever the runtime did; the
// same blocked cell with exec recorded nonconformant, as Checker.BlockOn
// records it, is a nonconformance (exit 1).
func TestSummaryRefusesAnInconsistentMatrix(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "v1", OS: "linux"}
	declared := map[capability.Name]capability.Support{}
	for _, d := range capability.All() {
		declared[d.Name] = capability.Supported
	}
	withEntries := func(s types.SpecReport, obs ...capability.Observation) types.SpecReport {
		for _, o := range obs {
			o.Layer = capability.LayerCRI
			o = capability.Decide(capability.MustLookup(o.Capability), o)
			s.ReportEntries = append(s.ReportEntries, types.ReportEntry{Name: capability.ReportEntryName, Value: types.WrapEntryValue(o)})
		}
		return s
	}
	execWorks := withEntries(spec("exec [CRI-8]", types.SpecStatePassed, 0),
		capability.Observation{Capability: capability.Exec, Outcome: capability.Works, Observed: "works", Declared: capability.Supported})
	blocked := capability.Observation{Capability: capability.PtraceRules, Outcome: capability.Blocked, BlockedBy: capability.Exec,
		Observed: "exec: exec sessions do not run where the container's own process does", Declared: capability.Supported}
	for _, c := range []struct {
		name  string
		specs types.SpecReports
		want  int
		line  string
	}{
		{"planted: blocked by a conformant exec", types.SpecReports{execWorks,
			withEntries(spec("ptrace [SEC-3]", types.SpecStateSkipped, 0), blocked)},
			framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"blocked by exec, nonconformant in the same spec", types.SpecReports{execWorks,
			withEntries(spec("ptrace [SEC-3]", types.SpecStateFailed, types.NodeTypeIt),
				capability.Observation{Capability: capability.Exec, Outcome: capability.Deviated, Observed: "exec sessions do not run where the container's own process does", Declared: capability.Supported},
				blocked)},
			framework.ExitNonconformant, "ectest: NONCONFORMANT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := types.Report{SuiteDescription: "s", SpecReports: c.specs, SuiteSucceeded: c.want != framework.ExitNonconformant}
			obs, err := Observations(r)
			if err != nil {
				t.Fatal(err)
			}
			m := capability.Compute(rt, "containerd-runc", declared, []capability.Layer{capability.LayerCRI}, obs)
			s := SummarizeRun(r, m, "out")
			if s.ExitCode != c.want || !strings.HasPrefix(s.Line, c.line) {
				t.Errorf("exit %d, line %q; want exit %d, line starting %q", s.ExitCode, s.Line, c.want, c.line)
			}
			t.Logf("exit %d: %s; run errors %q", s.ExitCode, s.Line, s.RunErrors)
			bug := false
			if c.want == framework.ExitRunFailed && len(s.RunErrors) != 1 {
				t.Errorf("run errors %q: want only the inconsistency", s.RunErrors)
			}
			for _, e := range s.RunErrors {
				bug = bug || strings.Contains(e, "the suite's own bug") && strings.Contains(e, "ptrace-rules (cri layer)") && strings.Contains(e, "exec's cri cell is conformant")
			}
			if want := c.want == framework.ExitRunFailed; bug != want {
				t.Errorf("run errors %q: want the inconsistency named: %v", s.RunErrors, want)
			}
		})
	}
}
