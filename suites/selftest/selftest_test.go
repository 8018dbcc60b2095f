package selftest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
	"github.com/ectest/ectest/runtimes/expected"
	"github.com/onsi/ginkgo/v2/types"
)

// Runs to check are named by the environment that hack/selftest.sh sets:
// ECTEST_SELFTEST_RUNS="dir=exitcode dir=exitcode".
func runs(t *testing.T) map[string]int {
	t.Helper()
	spec := os.Getenv("ECTEST_SELFTEST_RUNS")
	if spec == "" {
		t.Skip("ECTEST_SELFTEST_RUNS is not set: no suite run to check (make test sets it)")
	}
	out := map[string]int{}
	for _, item := range strings.Fields(spec) {
		dir, code, ok := strings.Cut(item, "=")
		n, err := strconv.Atoi(code)
		if !ok || err != nil {
			t.Fatalf("ECTEST_SELFTEST_RUNS item %q: want dir=exitcode", item)
		}
		out[dir] = n
	}
	return out
}

// expectationFor is the project's expectation file for the runtime
// (runtimes/expected, built into the suite binaries for -expect=builtin).
func expectationFor(t *testing.T, rt capability.RuntimeInfo) *expected.File {
	t.Helper()
	if f := expected.For(expected.BuiltinFiles(), rt); f != nil {
		return f
	}
	t.Fatalf("no expectation file in runtimes/expected/ for runtime %s %s (handler %s): the suite's verdicts for this runtime version are not stated", rt.Name, rt.Version, handler(rt))
	return nil
}

// handler is the run's runtime handler, "default" for the runtime's own.
func handler(rt capability.RuntimeInfo) string {
	if rt.Handler == "" {
		return "default"
	}
	return rt.Handler
}

func TestVerdictsMatchExpectations(t *testing.T) {
	for dir, exitCode := range runs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var m capability.Matrix
			readJSON(t, filepath.Join(dir, report.MatrixJSONFile), &m)
			if !m.Runtime.Embedded {
				t.Fatalf("run %s was not against the embedded runtime", dir)
			}
			exp := expectationFor(t, m.Runtime)
			if m.Profile != exp.Profile {
				t.Errorf("profile: got %s, want %s", m.Profile, exp.Profile)
			}
			wantNonconformant := false
			for _, row := range m.Rows {
				want := capability.Conformant
				reason := "every capability not listed in the expectation file must be conformant"
				if v, ok := exp.Verdicts[row.Capability]; ok {
					want, reason = v.Verdict, v.Reason
				}
				// An expected deviation of another layer (the kubelet's,
				// in the same file for the cluster runs on that runtime's
				// node) is not this layer's: as -expect compares it.
				if !capability.AtLayer(row.Capability, capability.LayerCRI) {
					want, reason = capability.OtherLayer, "judged at the "+string(capability.OnlyAt(row.Capability))+" layer only"
				}
				wantNonconformant = wantNonconformant || want == capability.Nonconformant
				got := row.Layers[capability.LayerCRI]
				if got.Verdict != want {
					t.Errorf("%s: verdict %s, want %s (%s)\n  observed: %v\n  reasons: %v", row.Capability, got.Verdict, want, reason, got.Observed, got.Reasons)
				}
			}
			wantCode := framework.ExitConformant
			if wantNonconformant {
				wantCode = framework.ExitNonconformant
			}
			sum, err := report.ReadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			if sum.ExitCode != wantCode || !strings.HasPrefix(sum.Line, "ectest: ") {
				t.Errorf("summary: exit code %d, line %q; want exit code %d (nonconformant capabilities expected: %v)", sum.ExitCode, sum.Line, wantCode, wantNonconformant)
			}
			// The suite binary itself exits with the summary's code; the
			// ginkgo CLI of a parallel run exits 1 on any failure.
			if filepath.Base(dir) == "serial" && exitCode != wantCode {
				t.Errorf("suite binary exit code %d, want %d: a vendor relies on 1 exactly when the runtime is nonconformant, 3 when the run could not be done", exitCode, wantCode)
			}
			if wantNonconformant != (exitCode != 0) {
				t.Errorf("suite exit code %d, but nonconformant capabilities expected: %v (a vendor relies on a non-zero exit exactly when a capability is nonconformant)", exitCode, wantNonconformant)
			}
		})
	}
}

// Every failed spec must be one that observed a nonconformance; no setup,
// teardown or report node may fail.
func TestOnlyNonconformanceFailsSpecs(t *testing.T) {
	for dir := range runs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ran := 0
			for _, s := range suiteReport(t, dir).SpecReports {
				if s.State.Is(types.SpecStatePassed | types.SpecStateFailed) {
					ran++
				}
				if !s.State.Is(types.SpecStateFailureStates) {
					continue
				}
				if s.LeafNodeType != types.NodeTypeIt {
					t.Errorf("%s node failed: %s", s.LeafNodeType, s.Failure.Message)
					continue
				}
				if !strings.Contains(s.Failure.Message, "is nonconformant") {
					t.Errorf("spec %q failed for another reason than a nonconformance:\n%s", s.FullText(), s.Failure.Message)
				}
			}
			if ran < 20 {
				t.Errorf("only %d specs ran", ran)
			}
		})
	}
}

func TestNothingLeftBehind(t *testing.T) {
	runs(t)
	entries, err := os.ReadDir("/var/lib/ectest/embedded")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("embedded runtime state left behind: /var/lib/ectest/embedded/%s", e.Name())
	}
	if procs := processesMentioning("/var/lib/ectest/embedded"); len(procs) > 0 {
		t.Errorf("processes of the embedded runtime left running:\n%s", strings.Join(procs, "\n"))
	}
	// The runs had a temporary directory of their own (hack/selftest.sh):
	// directories other ectest runs on this machine left in /tmp are theirs.
	tmp := os.Getenv("ECTEST_SELFTEST_RUNS_TMPDIR")
	if tmp == "" {
		t.Skip("ECTEST_SELFTEST_RUNS_TMPDIR is not set: the runs' temporary directory is not known")
	}
	leftovers, _ := os.ReadDir(tmp)
	for _, e := range leftovers {
		t.Errorf("left behind in the runs' temporary directory: %s", filepath.Join(tmp, e.Name()))
	}
	logs, _ := filepath.Glob(filepath.Join(tmp, "ectest-logs-*"))
	for _, l := range logs {
		t.Errorf("log directory left behind: %s", l)
	}
}

// suiteReport is the Ginkgo report of the run in dir, which has one suite.
func suiteReport(t *testing.T, dir string) types.Report {
	t.Helper()
	var reports []types.Report
	readJSON(t, filepath.Join(dir, report.JSONFile), &reports)
	if len(reports) != 1 {
		t.Fatalf("want one suite report, got %d", len(reports))
	}
	return reports[0]
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func processesMentioning(s string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), s) {
			out = append(out, fmt.Sprintf("%s: %s", filepath.Dir(p), strings.ReplaceAll(string(b), "\x00", " ")))
		}
	}
	return out
}
