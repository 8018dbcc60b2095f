package report

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
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
