package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

// ReadRun gives the verdicts the run decided: from the summary, or, for a
// summary written before it carried them, decided from ginkgo-report.json
// by the same rule.
func TestReadRunOldAndNewSummaries(t *testing.T) {
	dir := t.TempDir()
	rt := capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", OS: "linux"}
	declared := map[capability.Name]capability.Support{capability.UnknownModeError: capability.Supported}
	failed := spec("mode 42 [CRI-4]", types.SpecStateFailed, types.NodeTypeIt)
	failed.ReportEntries = types.ReportEntries{{Name: capability.ReportEntryName, Value: types.WrapEntryValue(capability.Observation{
		Capability: capability.UnknownModeError, Layer: capability.LayerCRI, Outcome: capability.Deviated, Observed: "accepted",
		Declared: capability.Supported, Verdict: capability.Nonconformant, Reason: "deviated, but every runtime must support this"})}}
	env := spec("pull [LIFE-6]", types.SpecStateFailed, types.NodeTypeIt)
	env.Failure.Message = capability.EnvironmentErrorPrefix + "the registry does not answer"
	r := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{failed, env, spec("ok [CRI-2]", types.SpecStatePassed, 0)}}
	if err := AfterSuite(dir, r, &Subject{Runtime: rt, Profile: "p", Declared: declared}, capability.LayerCRI, ""); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		run, err := ReadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		if run.ExitCode() != framework.ExitRunFailed || run.Matrix == nil || run.Coverage == nil {
			t.Errorf("%s: exit %d, matrix %v, coverage %v", what, run.ExitCode(), run.Matrix != nil, run.Coverage != nil)
		}
		if got := run.Specs[failed.FullText()].Verdict; got != capability.Nonconformant {
			t.Errorf("%s: %s: %s, want nonconformant", what, failed.FullText(), got)
		}
		if got := run.Specs[env.FullText()].Verdict; got != capability.VerdictError {
			t.Errorf("%s: %s: %s, want error", what, env.FullText(), got)
		}
		if nc := run.Nonconformant(); len(nc) != 1 || nc[0] != capability.UnknownModeError {
			t.Errorf("%s: nonconformant %v", what, nc)
		}
	}
	check("summary format 2")
	// A summary of before the format: no verdicts of its specs.
	var raw map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, framework.OutcomeFile))
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "format")
	delete(raw, "judged")
	b, _ = json.Marshal(raw)
	if err := os.WriteFile(filepath.Join(dir, framework.OutcomeFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	check("summary before format 2")
	if dirs := RunDirs(filepath.Dir(dir)); len(dirs) != 1 || dirs[0] != dir {
		t.Errorf("RunDirs = %v", dirs)
	}
}
