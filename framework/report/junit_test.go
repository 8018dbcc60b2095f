package report

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

// junitRun is a parallel run with every way a spec or a setup node ends.
func junitRun() types.Report {
	nc := capability.Observation{Capability: capability.PIDTarget, Layer: capability.LayerCRI, Outcome: capability.Deviated, Verdict: capability.Nonconformant, Observed: "own namespace"}
	ncEntry := types.ReportEntry{Name: capability.ReportEntryName, Value: types.WrapEntryValue(nc)}
	it := func(text string, state types.SpecState, node types.NodeType, msg string, labels ...string) types.SpecReport {
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, ContainerHierarchyTexts: []string{"debug container"}, LeafNodeText: text,
			LeafNodeLabels: labels, State: state, RunTime: 1500 * time.Millisecond, ParallelProcess: 1}
		if state.Is(types.SpecStateFailureStates | types.SpecStateSkipped) {
			sr.Failure = types.Failure{Message: msg, FailureNodeType: node}
		}
		if state == types.SpecStatePanicked {
			sr.Failure.ForwardedPanic = msg
		}
		return sr
	}
	setup := func(t types.NodeType, proc int, state types.SpecState, msg string) types.SpecReport {
		sr := types.SpecReport{LeafNodeType: t, State: state, ParallelProcess: proc}
		if msg != "" {
			sr.Failure = types.Failure{Message: msg, FailureNodeType: t}
		}
		return sr
	}
	judged := it("shares the target's PID namespace [CRI-2]", types.SpecStateFailed, types.NodeTypeIt, "pid-target: nonconformant", "pid-target", "cri")
	judged.ReportEntries = types.ReportEntries{ncEntry}
	return types.Report{
		SuiteDescription: "ectest CRI", SuitePath: "/src/suites/cri", SuiteSucceeded: false, RunTime: time.Minute,
		SuiteConfig: types.SuiteConfig{ParallelTotal: 4},
		SpecReports: types.SpecReports{
			setup(types.NodeTypeSynchronizedBeforeSuite, 1, types.SpecStatePassed, ""),
			setup(types.NodeTypeSynchronizedBeforeSuite, 2, types.SpecStatePassed, ""),
			it("sees the target's processes [CRI-2] [CRI-3]", types.SpecStatePassed, 0, "", "pid-target", "cri"),
			judged,
			it("an assertion of the body [CRI-5]", types.SpecStateFailed, types.NodeTypeIt, "expected refusal", "unknown-namespace-mode-error"),
			it("setup failed [CRI-5]", types.SpecStateFailed, types.NodeTypeBeforeEach, "pod would not start", "ipc"),
			it("environment [CRI-5]", types.SpecStateFailed, types.NodeTypeIt, capability.EnvironmentErrorPrefix+" the runtime went away", "ipc"),
			it("panics [CRI-6]", types.SpecStatePanicked, types.NodeTypeIt, "nil map", "ipc"),
			it("times out [CRI-6]", types.SpecStateTimedout, types.NodeTypeIt, "timed out", "ipc"),
			it("interrupted [CRI-6]", types.SpecStateInterrupted, types.NodeTypeIt, "interrupted by user"),
			it("aborted [CRI-6]", types.SpecStateAborted, types.NodeTypeIt, "aborted"),
			it("not applicable [CRI-7]", types.SpecStateSkipped, types.NodeTypeIt, "declared not applicable", "windows"),
			it("pending [CRI-7]", types.SpecStatePending, 0, ""),
			setup(types.NodeTypeSynchronizedAfterSuite, 2, types.SpecStatePassed, ""),
			setup(types.NodeTypeSynchronizedAfterSuite, 3, types.SpecStateFailed, "cleanup failed"),
		},
	}
}

func writeJUnitRun(t *testing.T, r types.Report) (reporters.JUnitTestSuites, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), JUnitFile)
	if err := WriteJUnit(path, r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s reporters.JUnitTestSuites
	if err := xml.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s, string(b)
}

func props(tc reporters.JUnitTestCase, name string) []string {
	var out []string
	if tc.Properties == nil {
		return nil
	}
	for _, p := range tc.Properties.Properties {
		if p.Name == name {
			out = append(out, p.Value)
		}
	}
	return out
}

func TestJUnitErrorsFailuresAndNames(t *testing.T) {
	s, raw := writeJUnitRun(t, junitRun())
	if len(s.TestSuites) != 1 {
		t.Fatalf("%d testsuites", len(s.TestSuites))
	}
	suite := s.TestSuites[0]
	want := map[string]string{ // name: failure, error or skipped (and its type)
		"debug container sees the target's processes [CRI-2] [CRI-3]": "",
		"debug container shares the target's PID namespace [CRI-2]":   "failure nonconformant",
		"debug container an assertion of the body [CRI-5]":            "failure nonconformant",
		"debug container setup failed [CRI-5]":                        "error failed",
		"debug container environment [CRI-5]":                         "error failed",
		"debug container panics [CRI-6]":                              "error panicked",
		"debug container times out [CRI-6]":                           "error timedout",
		"debug container interrupted [CRI-6]":                         "error interrupted",
		"debug container aborted [CRI-6]":                             "error aborted",
		"debug container not applicable [CRI-7]":                      "skipped",
		"debug container pending [CRI-7]":                             "skipped",
		"[SynchronizedAfterSuite] process 3":                          "error failed",
	}
	got := map[string]string{}
	for _, tc := range suite.TestCases {
		if tc.Name == "" || tc.Classname != "ectest CRI" {
			t.Errorf("testcase name %q classname %q", tc.Name, tc.Classname)
		}
		if strings.Contains(tc.Name, "pid-target") || strings.Contains(tc.Name, "ipc") {
			t.Errorf("a label in the name %q", tc.Name)
		}
		switch {
		case tc.Failure != nil && tc.Error != nil:
			t.Errorf("%s: both failure and error", tc.Name)
		case tc.Failure != nil:
			got[tc.Name] = "failure " + tc.Failure.Type
			if tc.Failure.Message == "" {
				t.Errorf("%s: failure without a message", tc.Name)
			}
		case tc.Error != nil:
			got[tc.Name] = "error " + tc.Error.Type
			if tc.Error.Message == "" {
				t.Errorf("%s: error without a message", tc.Name)
			}
		case tc.Skipped != nil:
			got[tc.Name] = "skipped"
		default:
			got[tc.Name] = ""
		}
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: got %q (present %v), want %q", name, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("testcases %v, want %v", got, want)
	}
	if suite.Tests != 12 || suite.Failures != 2 || suite.Errors != 7 || suite.Skipped != 1 || suite.Disabled != 1 {
		t.Errorf("suite counts: tests %d failures %d errors %d skipped %d disabled %d", suite.Tests, suite.Failures, suite.Errors, suite.Skipped, suite.Disabled)
	}
	if s.Tests != 12 || s.Failures != 2 || s.Errors != 7 || s.Disabled != 2 {
		t.Errorf("testsuites counts: tests %d failures %d errors %d disabled %d", s.Tests, s.Failures, s.Errors, s.Disabled)
	}
	// What testgrid and prow read.
	for _, attr := range []string{`<testsuites tests="12"`, `<testsuite name="ectest CRI"`, `classname="ectest CRI"`, `time="1.5"`, `<failure message="pid-target: nonconformant" type="nonconformant">`, `<error message="nil map" type="panicked">`} {
		if !strings.Contains(raw, attr) {
			t.Errorf("junit lacks %s", attr)
		}
	}
}

func TestJUnitProperties(t *testing.T) {
	s, _ := writeJUnitRun(t, junitRun())
	by := map[string]reporters.JUnitTestCase{}
	for _, tc := range s.TestSuites[0].TestCases {
		by[tc.Name] = tc
	}
	pass := by["debug container sees the target's processes [CRI-2] [CRI-3]"]
	if l := props(pass, JUnitLabelProperty); strings.Join(l, ",") != "pid-target,cri" {
		t.Errorf("labels %v", l)
	}
	if r := props(pass, JUnitRequirementProperty); strings.Join(r, ",") != "CRI-2,CRI-3" {
		t.Errorf("requirements %v", r)
	}
	if v := props(pass, JUnitVerdictProperty); v != nil {
		t.Errorf("a passed spec has a verdict property %v", v)
	}
	judged := by["debug container shares the target's PID namespace [CRI-2]"]
	if v := props(judged, JUnitVerdictProperty); len(v) != 1 || v[0] != string(capability.Nonconformant) {
		t.Errorf("verdict %v", v)
	}
	if v := props(judged, capability.ReportEntryName); len(v) != 1 || !strings.Contains(v[0], "own namespace") {
		t.Errorf("the observation's report entry is gone: %v", v)
	}
	setup := by["debug container setup failed [CRI-5]"]
	if v := props(setup, JUnitVerdictProperty); len(v) != 1 || v[0] != string(capability.VerdictError) {
		t.Errorf("verdict %v", v)
	}
}

// Everything but what the contract changes is Ginkgo's own output.
func TestJUnitKeepsGinkgosReport(t *testing.T) {
	r := junitRun()
	path := filepath.Join(t.TempDir(), "ginkgo.xml")
	if err := reporters.GenerateJUnitReportWithConfig(r, path, junitConfig); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var g reporters.JUnitTestSuites
	if err := xml.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	// Decoding and encoding Ginkgo's report changes nothing.
	if enc, err := EncodeJUnit(g); err != nil || string(enc) != string(b) {
		t.Fatalf("re-encoded Ginkgo's report differs (%v):\n%s\n---\n%s", err, enc, b)
	}
	ours, _ := writeJUnitRun(t, r)
	// Ginkgo's suite properties, then the suite that judged.
	gp, op := g.TestSuites[0].Properties, ours.TestSuites[0].Properties
	added := 1 // the version, and the commit when it is known
	if framework.Build().Commit != "" {
		added++
	}
	if ours.TestSuites[0].Name != g.TestSuites[0].Name || ours.TestSuites[0].Time != g.TestSuites[0].Time || len(op.Properties) != len(gp.Properties)+added {
		t.Errorf("suite attributes changed")
	}
	if v := op.WithName(JUnitEctestVersionProperty); v == "" || v != framework.Build().Version {
		t.Errorf("testsuite property %s = %q, want %q", JUnitEctestVersionProperty, v, framework.Build().Version)
	}
	for _, tc := range g.TestSuites[0].TestCases[2:3] {
		if tc.Name != ours.TestSuites[0].TestCases[0].Name || tc.SystemErr != ours.TestSuites[0].TestCases[0].SystemErr {
			t.Errorf("the passed spec's testcase changed: %+v vs %+v", tc, ours.TestSuites[0].TestCases[0])
		}
	}
}

// A failed setup node on a one-process run is named without a process.
func TestJUnitSerialSetupNode(t *testing.T) {
	r := types.Report{SuiteDescription: "s", SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed, ParallelProcess: 1, Failure: types.Failure{Message: "no runtime", FailureNodeType: types.NodeTypeBeforeSuite}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "x", State: types.SpecStateSkipped},
	}, SuiteConfig: types.SuiteConfig{ParallelTotal: 1}}
	s, _ := writeJUnitRun(t, r)
	tcs := s.TestSuites[0].TestCases
	if len(tcs) != 2 || tcs[0].Name != "[BeforeSuite]" || tcs[0].Error == nil || tcs[0].Error.Message != "no runtime" {
		t.Errorf("testcases %+v", tcs)
	}
}
