package selftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
	"github.com/onsi/ginkgo/v2/types"
	"sigs.k8s.io/yaml"
)

// windowsExpectation is suites/selftest/expected/windows/windows-selftest.yaml.
type windowsExpectation struct {
	Profile      string                             `json:"profile"`
	WindowsBuild uint16                             `json:"windowsBuild"`
	Verdicts     map[capability.Name]windowsVerdict `json:"verdicts"`
	Skips        []struct{ Reason, Why string }     `json:"skips"`
	SharedPID    struct {
		Verdicts map[capability.Name]windowsVerdict
	} `json:"sharedPID"`
}

type windowsVerdict struct {
	Verdict  capability.Verdict `json:"verdict"`
	Observed string             `json:"observed"`
	Reason   string             `json:"reason"`
}

// windowsRun is what ectest-windows-selftest wrote (its run.json).
type windowsRun struct {
	Runs []struct {
		Personality    string   `json:"personality"`
		ReportDir      string   `json:"reportDir"`
		ExitCode       int      `json:"exitCode"`
		Seconds        int      `json:"seconds"`
		NotAsOnWindows []string `json:"notAsOnWindows"`
	} `json:"runs"`
}

// The Windows self-test's matrix says what a Windows run must say (make
// windows-selftest sets ECTEST_WINDOWS_SELFTEST_DIR): the network
// capabilities conformant, PID, IPC and the target's files "not supported on
// this OS" with the observation recorded, containerd on Windows'
// acceptance of unknown network modes nonconformant, nothing skipped
// without one of the stated reasons, every request sent as the kubelet
// sends it on Windows, and every report marked SELF-TEST. The negative
// control (one PID namespace per sandbox) must turn the Windows branch's
// judge to no.
func TestWindowsSelfTest(t *testing.T) {
	dir := os.Getenv("ECTEST_WINDOWS_SELFTEST_DIR")
	if dir == "" {
		t.Skip("ECTEST_WINDOWS_SELFTEST_DIR is not set: no Windows self-test run to check (make windows-selftest sets it)")
	}
	var exp windowsExpectation
	data, err := os.ReadFile("expected/windows/windows-selftest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, &exp); err != nil {
		t.Fatalf("expected/windows/windows-selftest.yaml: %v", err)
	}
	for _, d := range capability.All() {
		if _, ok := exp.Verdicts[d.Name]; !ok {
			t.Fatalf("expected/windows/windows-selftest.yaml does not state %s: every capability must be", d.Name)
		}
	}
	var run windowsRun
	readJSON(t, filepath.Join(dir, "run.json"), &run)
	if len(run.Runs) != 2 {
		t.Fatalf("run.json: %d runs, want the windows run and the shared-pid control", len(run.Runs))
	}
	for _, r := range run.Runs {
		for _, req := range r.NotAsOnWindows {
			t.Errorf("%s: the suite sent a request the kubelet does not send on Windows: %s", r.Personality, req)
		}
	}

	t.Run("windows", func(t *testing.T) {
		r := run.Runs[0]
		m := checkWindowsMatrix(t, r.ReportDir, exp.Verdicts)
		if m.Profile != exp.Profile || m.Runtime.OS != "windows" || m.Runtime.WindowsBuild != exp.WindowsBuild {
			t.Errorf("profile %s, OS %s, build %d; want %s picked by -profile=auto for windows %d", m.Profile, m.Runtime.OS, m.Runtime.WindowsBuild, exp.Profile, exp.WindowsBuild)
		}
		if !strings.Contains(m.Runtime.OSEvidence, `C:\\ProgramData\\containerd\\root`) {
			t.Errorf("the OS must be told from the runtime's Status answer: %q", m.Runtime.OSEvidence)
		}
		sum, err := report.ReadSummary(r.ReportDir)
		if err != nil {
			t.Fatal(err)
		}
		if sum.ExitCode != framework.ExitNonconformant || r.ExitCode != framework.ExitNonconformant || len(sum.RunErrors) > 0 {
			t.Errorf("exit %d (summary %d), run errors %v; want %d: the one nonconformance is unknown network modes", r.ExitCode, sum.ExitCode, sum.RunErrors, framework.ExitNonconformant)
		}
		if !strings.HasPrefix(sum.Line, "ectest: SELF-TEST through the CRI proxy's windows personality") {
			t.Errorf("summary line must say SELF-TEST: %q", sum.Line)
		}
		md, err := os.ReadFile(filepath.Join(r.ReportDir, report.MatrixMDFile))
		if err != nil || !strings.Contains(string(md), "**SELF-TEST: made through the CRI proxy's windows personality") || !strings.Contains(string(md), "not supported on this OS") {
			t.Errorf("matrix.md must carry the SELF-TEST banner and the not-supported cells (%v)", err)
		}
		checkSkips(t, r.ReportDir, exp)
		// Coverage: no Windows requirement is uncovered. The CRI suite's are
		// verified, through this self-test only (the report says so); WIN-4,
		// the API server's HostProcess rules, is the cluster suite's.
		var cov report.Coverage
		readJSON(t, filepath.Join(r.ReportDir, report.CoverageJSONFile), &cov)
		for _, q := range cov.Requirements {
			switch q.ID {
			case "WIN-1", "WIN-2", "WIN-3", "WIN-5", "STORY-WIN":
				if len(q.SelfTestOnly()) == 0 {
					t.Errorf("coverage of %s: %q; want verified, through the self-test only", q.ID, q.Result())
				}
			case "WIN-4":
				if len(q.OtherSuites) != 1 || q.OtherSuites[0] != capability.LayerCluster {
					t.Errorf("coverage of WIN-4: %q; want the cluster suite's (not part of this run)", q.Result())
				}
			}
		}
		covMD, err := os.ReadFile(filepath.Join(r.ReportDir, report.CoverageMDFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(covMD), "\n") {
			if !strings.HasPrefix(line, "Not covered by this run:") {
				continue
			}
			for _, id := range framework.RequirementIDs("[" + strings.Join(strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "Not covered by this run: "), "."), ", "), "] [") + "]") {
				if report.RequirementOS(id) == "windows" {
					t.Errorf("coverage.md lists %s as not covered: %s", id, line)
				}
			}
		}
		if !strings.Contains(string(covMD), "Verified only through a self-test") {
			t.Error("coverage.md must say which requirements were verified only through the self-test")
		}
	})
	t.Run("shared-pid", func(t *testing.T) {
		r := run.Runs[1]
		want := map[capability.Name]windowsVerdict{}
		for n, v := range exp.SharedPID.Verdicts {
			want[n] = v
		}
		m := checkWindowsMatrix(t, r.ReportDir, want)
		for _, n := range m.Nonconformant() {
			if _, ok := want[n]; !ok {
				t.Errorf("%s nonconformant under windows-shared-pid, not expected", n)
			}
		}
		if r.ExitCode != framework.ExitNonconformant {
			t.Errorf("exit %d, want %d", r.ExitCode, framework.ExitNonconformant)
		}
	})
}

// checkWindowsMatrix checks the verdicts want names (all of them for the
// full run) and that each not-supported cell carries its observation.
func checkWindowsMatrix(t *testing.T, dir string, want map[capability.Name]windowsVerdict) capability.Matrix {
	t.Helper()
	var m capability.Matrix
	readJSON(t, filepath.Join(dir, report.MatrixJSONFile), &m)
	if fault, ok := report.SelfTest(m); !ok || !strings.HasPrefix(fault, "windows") {
		t.Errorf("runtime version %q does not carry the windows personality's self-test marker", m.Runtime.Version)
	}
	for _, row := range m.Rows {
		w, ok := want[row.Capability]
		if !ok {
			continue
		}
		c := row.Layers[capability.LayerCRI]
		if c.Verdict != w.Verdict {
			t.Errorf("%s: %s, want %s (%s)\n  observed: %v\n  reasons: %v", row.Capability, c.Verdict, w.Verdict, strings.TrimSpace(w.Reason), c.Observed, c.Reasons)
		}
		if w.Observed != "" && !strings.Contains(strings.Join(c.Observed, "; "), w.Observed) {
			t.Errorf("%s: observed %v, want it to say %q", row.Capability, c.Observed, w.Observed)
		}
		if c.Verdict == capability.NotSupportedOnOS {
			for _, o := range c.Observations {
				if o.Evidence == "" || !strings.Contains(strings.Join(o.Requirements, " "), "WIN-1") {
					t.Errorf("%s: a not-supported cell must carry the observation's evidence and WIN-1: %+v", row.Capability, o)
				}
			}
		}
	}
	return m
}

// Nothing is skipped silently: every skipped spec says why with a reason
// the expectation file states.
func checkSkips(t *testing.T, dir string, exp windowsExpectation) {
	t.Helper()
	ran := 0
	for _, s := range suiteReport(t, dir).SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		if s.State.Is(types.SpecStatePassed | types.SpecStateFailed) {
			ran++
		}
		if !s.State.Is(types.SpecStateSkipped) {
			continue
		}
		if strings.Contains(strings.Join(s.Labels(), " "), framework.LabelBenchmark) {
			continue // benchmarks run only when selected
		}
		ok := false
		for _, k := range exp.Skips {
			ok = ok || strings.Contains(s.Failure.Message, k.Reason)
		}
		if !ok {
			t.Errorf("spec %q skipped without a stated reason: %q", s.FullText(), s.Failure.Message)
		}
	}
	if ran < 15 {
		t.Errorf("only %d specs ran on the Windows path", ran)
	}
}
