package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/runtimes"
	"github.com/onsi/ginkgo/v2/types"
)

func spec(text string, state types.SpecState, failedIn types.NodeType) types.SpecReport {
	r := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: state}
	if state.Is(types.SpecStateFailureStates) {
		r.Failure = types.Failure{Message: "judge: runtime is nonconformant\nmore", FailureNodeType: failedIn}
	}
	return r
}

// A judge failing in an It is the runtime's nonconformance (exit 1); any
// other failure is the run's own (exit 3) and wins, since such a run has no
// trustworthy verdict; a clean run exits 0.
func TestSummaryTellsNonconformanceFromRunErrors(t *testing.T) {
	m := sampleMatrix() // unknown-namespace-mode-error nonconformant
	clean := sampleMatrix()
	clean.Rows = nil
	for _, c := range []struct {
		name  string
		specs types.SpecReports
		m     bool
		want  int
		line  string
	}{
		{"all passed", types.SpecReports{spec("a [CRI-2]", types.SpecStatePassed, 0), spec("b [CRI-2]", types.SpecStateSkipped, 0)}, false, framework.ExitConformant, "ectest: conformant;"},
		{"a judge said no", types.SpecReports{spec("a [CRI-4]", types.SpecStateFailed, types.NodeTypeIt), spec("b [CRI-2]", types.SpecStatePassed, 0)}, true, framework.ExitNonconformant, "ectest: NONCONFORMANT"},
		{"setup failed", types.SpecReports{spec("a [CRI-4]", types.SpecStateFailed, types.NodeTypeBeforeEach)}, false, framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"timed out", types.SpecReports{spec("a [CRI-4]", types.SpecStateTimedout, types.NodeTypeIt), spec("c [CRI-4]", types.SpecStateFailed, types.NodeTypeIt)}, true, framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"environment broke in a judge", types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "pull [LIFE-6]", State: types.SpecStateFailed,
			Failure: types.Failure{Message: capability.EnvironmentErrorPrefix + "the loopback registry 127.0.0.1:1 does not answer", FailureNodeType: types.NodeTypeIt}}}, false, framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"interrupted", types.SpecReports{spec("a [CRI-4]", types.SpecStateInterrupted, types.NodeTypeIt)}, false, framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"a check of the suite through a test double failed", types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "TEST DOUBLE: the judge says no [SEC-2]", LeafNodeLabels: []string{framework.LabelTestDouble}, State: types.SpecStateFailed,
			Failure: types.Failure{Message: "the judge said yes through the double", FailureNodeType: types.NodeTypeIt}}, spec("b [CRI-2]", types.SpecStatePassed, 0)}, false, framework.ExitRunFailed, "ectest: RUN FAILED"},
		{"suite setup failed", types.SpecReports{{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed, Failure: types.Failure{Message: "environment: no containerd", FailureNodeType: types.NodeTypeSynchronizedBeforeSuite}}}, false, framework.ExitRunFailed, "ectest: RUN FAILED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mm := clean
			if c.m {
				mm = m
			}
			s := SummarizeRun(types.Report{SpecReports: c.specs, SuiteSucceeded: c.want == 0}, mm, "out")
			if s.ExitCode != c.want || !strings.HasPrefix(s.Line, c.line) || !strings.HasSuffix(s.Line, "reports in out/ (exit "+string(rune('0'+c.want))+")") {
				t.Errorf("exit %d, line %q; want exit %d, line starting %q", s.ExitCode, s.Line, c.want, c.line)
			}
			// A run that failed names no verdict, even where a cell was
			// reached ("timed out" has a nonconformant one).
			if c.want == framework.ExitRunFailed && (strings.Contains(s.Line, " conformant, ") || !strings.Contains(s.Line, "6.20: no verdict")) {
				t.Errorf("a failed run's line names a verdict: %q", s.Line)
			}
		})
	}
}

func TestMergedSummaryKeepsTheWorstOutcome(t *testing.T) {
	nc := SummarizeRun(types.Report{SpecReports: types.SpecReports{spec("a [CRI-4]", types.SpecStateFailed, types.NodeTypeIt)}}, sampleMatrix(), "cri")
	missing := Summary{RunErrors: []string{"cluster: the suite wrote no reports"}}
	if got := MergeSummaries("all", nc).ExitCode; got != framework.ExitNonconformant {
		t.Errorf("nonconformant alone: %d", got)
	}
	merged := MergeSummaries("all", nc, missing)
	if merged.ExitCode != framework.ExitRunFailed || !strings.Contains(merged.Line, "containerd 1.6.20: ") {
		t.Errorf("merged: %d %q", merged.ExitCode, merged.Line)
	}
	if md := SummaryMarkdown(merged); !strings.Contains(md, "the suite wrote no reports") || !strings.Contains(md, "Exit codes") {
		t.Errorf("markdown:\n%s", md)
	}
}

// A probe writes the profile it observed, judges only what every runtime
// must support, and never exits 0: 4 when it was done and that conformed,
// 1 when a capability every runtime must support did not.
func TestProbeWritesTheObservedProfileAndSaysItWasAProbe(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "v1", OS: "linux", Handler: "default", OCIRuntime: "runc 1.5.2"}
	probe := runtimes.ProbeProfile("linux")
	entry := func(o capability.Observation) types.ReportEntries {
		o.Layer = capability.LayerCRI
		return types.ReportEntries{{Name: capability.ReportEntryName, Value: types.WrapEntryValue(o)}}
	}
	passed := func(text string, o capability.Observation) types.SpecReport {
		s := spec(text, types.SpecStatePassed, 0)
		s.ReportEntries = entry(o)
		return s
	}
	optional := passed("ptrace [SEC-3]", capability.Observation{Capability: capability.PtraceRules, Outcome: capability.Refused, Observed: "refused: Unimplemented"})
	for _, c := range []struct {
		name  string
		specs types.SpecReports
		want  int
		line  string
	}{
		{"done", types.SpecReports{optional, passed("target [CRI-2]", capability.Observation{Capability: capability.PIDTarget, Outcome: capability.Works})},
			framework.ExitProbed, "ectest: PROBE done, not a conformance result"},
		{"a mandatory capability failed", types.SpecReports{optional, func() types.SpecReport {
			s := spec("mode 42 [CRI-4]", types.SpecStateFailed, types.NodeTypeIt)
			s.ReportEntries = entry(capability.Observation{Capability: capability.UnknownModeError, Outcome: capability.Deviated, Observed: "accepted"})
			return s
		}()}, framework.ExitNonconformant, "ectest: PROBE, not a conformance result: NONCONFORMANT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := types.Report{SuiteDescription: "s", SpecReports: c.specs, SuiteSucceeded: c.want != framework.ExitNonconformant}
			if err := AfterSuite(dir, r, &Subject{Runtime: rt, Profile: probe.Name, Declared: probe.Capabilities}, capability.LayerCRI, ""); err != nil {
				t.Fatal(err)
			}
			s, err := ReadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.ExitCode != c.want || !strings.HasPrefix(s.Line, c.line) || !strings.Contains(s.Line, runtimes.ObservedFile) || !strings.Contains(s.Line, "1 probed (ptrace-rules)") {
				t.Errorf("exit %d, line %q; want exit %d, line starting %q", s.ExitCode, s.Line, c.want, c.line)
			}
			b, err := os.ReadFile(filepath.Join(dir, runtimes.ObservedFile))
			if err != nil {
				t.Fatal(err)
			}
			p, err := runtimes.Parse(b, "observed")
			if err != nil || p.Capabilities[capability.PtraceRules] != capability.Unsupported || p.Name != "containerd-runc" {
				t.Errorf("observed profile %+v, %v:\n%s", p, err, b)
			}
		})
	}
}

// Every report of a run names the suite that judged it (framework.Build):
// summary.json and .md, matrix.json and .md, and the JUnit testsuite.
func TestReportsNameTheSuiteThatJudged(t *testing.T) {
	defer func(v, c string) { framework.Version, framework.Commit = v, c }(framework.Version, framework.Commit)
	framework.Version, framework.Commit = "v9.8.7", "fedcba9876543210fedcba9876543210fedcba98"
	dir := t.TempDir()
	r := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{spec("a [CRI-2]", types.SpecStatePassed, 0)}, SuiteSucceeded: true}
	rt := capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "v1", OS: "linux"}
	if err := AfterSuite(dir, r, &Subject{Runtime: rt, Profile: "p"}, capability.LayerCRI, ""); err != nil {
		t.Fatal(err)
	}
	want := "v9.8.7 (commit fedcba987654)"
	s, err := ReadSummary(dir)
	if err != nil || s.Ectest == nil || s.Ectest.String() != want {
		t.Errorf("summary.json names %+v (%v), want %s", s.Ectest, err, want)
	}
	for _, f := range []string{SummaryMDFile, "matrix.md", MatrixJSONFile, JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "v9.8.7") || !strings.Contains(string(b), "fedcba987654") {
			t.Errorf("%s does not name ectest v9.8.7 and its commit:\n%.600s", f, b)
		}
	}
}

// The other parallel processes' "failed on process #1" echoes of a failed
// setup are not run errors of their own: process 1's failure says why.
func TestSetupEchoesAreOneRunError(t *testing.T) {
	sbs := func(msg string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeSynchronizedBeforeSuite, State: types.SpecStateFailed,
			Failure: types.Failure{Message: msg, FailureNodeType: types.NodeTypeSynchronizedBeforeSuite}}
	}
	echo := sbs("\x1b[1mSynchronizedBeforeSuite failed on Ginkgo parallel process #1\x1b[0m")
	s := SummarizeRun(types.Report{SpecReports: types.SpecReports{echo, echo, sbs("environment: the runtime is not ready: NetworkReady=false (NetworkPluginNotReady: cni plugin not initialized)"), echo}}, capability.Matrix{}, "out")
	if len(s.RunErrors) != 1 || !strings.Contains(s.RunErrors[0], "NetworkReady=false") || !strings.Contains(s.Line, "NetworkPluginNotReady") {
		t.Errorf("run errors %q, line %q", s.RunErrors, s.Line)
	}
}
