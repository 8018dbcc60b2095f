package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

func sampleMatrix() capability.Matrix {
	declared := map[capability.Name]capability.Support{}
	for _, d := range capability.All() {
		declared[d.Name] = capability.Supported
	}
	return capability.Compute(capability.RuntimeInfo{Name: "containerd", Version: "1.6.20", APIVersion: "v1", Endpoint: "unix:///x.sock", OS: "linux", Embedded: true},
		"containerd-runc", declared, []capability.Layer{capability.LayerCRI},
		[]capability.SpecObservations{{
			Spec: capability.SpecRef{Name: "mode 42 [CRI-4]", State: "failed"},
			Observations: []capability.Observation{{Capability: capability.UnknownModeError, Layer: capability.LayerCRI, Outcome: capability.Deviated,
				Observed: "accepted | silently", Evidence: "RunPodSandbox succeeded"}},
		}})
}

func TestMarkdownAndTable(t *testing.T) {
	m := sampleMatrix()
	md := Markdown(m)
	for _, want := range []string{
		"containerd 1.6.20 (CRI v1), embedded by the suite", "profile: containerd-runc",
		"**nonconformant: 1** (unknown-namespace-mode-error)",
		"| unknown-namespace-mode-error | CRI-4 SKEW-3 | supported | accepted \\| silently | **nonconformant** |",
		"| pid-target | CRI-2 | supported |  | not-observed |",
		"RunPodSandbox succeeded",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	tbl := Table(m)
	if !strings.Contains(tbl, "nonconformant capabilities: 1 (unknown-namespace-mode-error)") || len(strings.Split(tbl, "\n")) != len(capability.All())+4 {
		t.Errorf("table:\n%s", tbl)
	}
}

func TestObservationsFromReport(t *testing.T) {
	o := capability.Observation{Capability: capability.PIDTarget, Outcome: capability.Works, Observed: "target namespace"}
	local := types.ReportEntry{Name: capability.ReportEntryName, Value: types.WrapEntryValue(o)}
	// After crossing parallel processes the value is decoded JSON.
	b, _ := json.Marshal(local)
	var remote types.ReportEntry
	if err := json.Unmarshal(b, &remote); err != nil {
		t.Fatal(err)
	}
	r := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "local [CRI-2]", State: types.SpecStatePassed, ReportEntries: types.ReportEntries{local}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "remote", State: types.SpecStateFailed, ReportEntries: types.ReportEntries{remote}},
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStatePassed},
	}}
	got, err := Observations(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !reflect.DeepEqual(got[0].Observations[0], o) || !reflect.DeepEqual(got[1].Observations[0], o) || got[0].Spec.Requirements[0] != "CRI-2" {
		t.Errorf("Observations = %+v", got)
	}
}

// A spec that checks the suite through a test double judges no runtime:
// observations it recorded are a suite bug, never a matrix cell.
func TestObservationsOfATestDoubleSpecAreASuiteBug(t *testing.T) {
	o := capability.Observation{Capability: capability.PIDTarget, Outcome: capability.Works, Observed: "target namespace"}
	r := types.Report{SpecReports: types.SpecReports{{LeafNodeType: types.NodeTypeIt, LeafNodeText: "TEST DOUBLE: x", LeafNodeLabels: []string{framework.LabelTestDouble},
		State: types.SpecStatePassed, ReportEntries: types.ReportEntries{{Name: capability.ReportEntryName, Value: types.WrapEntryValue(o)}}}}}
	got, err := Observations(r)
	if err == nil || !strings.Contains(err.Error(), "test double") || len(got) != 0 {
		t.Errorf("Observations = %+v, %v; want none and an error", got, err)
	}
}

func TestWriteAllReports(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, types.Report{SuiteDescription: "s"}, sampleMatrix()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{JUnitFile, JSONFile, MatrixJSONFile, MatrixMDFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 20; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := Percentile(ds, 50); p != 10*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := Percentile(ds, 95); p != 19*time.Millisecond {
		t.Errorf("p95 = %v", p)
	}
	if p := Percentile(ds, 100); p != 20*time.Millisecond {
		t.Errorf("p100 = %v", p)
	}
	if Percentile(nil, 50) != 0 {
		t.Error("empty")
	}
}

func TestMergeSideBySide(t *testing.T) {
	cri := sampleMatrix()
	declared := map[capability.Name]capability.Support{}
	for _, d := range capability.All() {
		declared[d.Name] = capability.Supported
	}
	cluster := capability.Compute(capability.RuntimeInfo{Name: "containerd"}, "containerd-runc", declared, []capability.Layer{capability.LayerCluster},
		[]capability.SpecObservations{{Spec: capability.SpecRef{Name: "t"}, Observations: []capability.Observation{{Capability: capability.PIDTarget, Layer: capability.LayerCluster, Outcome: capability.Works, Observed: "target namespace"}}}})
	m := Merge(cri, cluster)
	if len(m.Layers) != 2 || len(m.Rows) != len(capability.All()) || m.Runtime.Version != "1.6.20" {
		t.Fatalf("merged: layers %v rows %d runtime %+v", m.Layers, len(m.Rows), m.Runtime)
	}
	for _, r := range m.Rows {
		if r.Capability == capability.PIDTarget && (r.Layers[capability.LayerCluster].Verdict != capability.Conformant || r.Layers[capability.LayerCRI].Verdict != capability.NotObserved) {
			t.Errorf("pid-target cells: %+v", r.Layers)
		}
		if r.Capability == capability.UnknownModeError && r.Layers[capability.LayerCRI].Verdict != capability.Nonconformant {
			t.Errorf("unknown mode cri cell lost: %+v", r.Layers)
		}
	}
	if !strings.Contains(Table(m), "CLUSTER VERDICT") || !strings.Contains(Markdown(m), "cluster: verdict") {
		t.Errorf("both layers must be rendered:\n%s", Table(m))
	}
	// The layers ran on different runtimes: each header line names its own.
	if !strings.Contains(Table(m), "  cri layer: containerd 1.6.20") || !strings.Contains(Table(m), "  cluster layer: containerd  (CRI )") ||
		!strings.Contains(Markdown(m), "- cluster layer: containerd") {
		t.Errorf("per-layer runtimes missing:\n%s\n%s", Table(m), Markdown(m))
	}
	dir := t.TempDir()
	if err := WriteMatrix(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadMatrix(dir)
	if err != nil || len(back.Layers) != 2 {
		t.Errorf("round trip: %+v %v", back.Layers, err)
	}
}

func TestCoverage(t *testing.T) {
	spec := func(text string, st types.SpecState) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: st}
	}
	cri := ComputeCoverage(types.Report{SuiteDescription: "cri", SpecReports: types.SpecReports{
		spec("targets [CRI-2]", types.SpecStatePassed), spec("unknown mode [CRI-4] [SKEW-3]", types.SpecStateFailed),
	}}, capability.RuntimeInfo{}, nil)
	cluster := ComputeCoverage(types.Report{SuiteDescription: "cluster", SpecReports: types.SpecReports{
		spec("kubelet targets [CRI-2] [CRI-7]", types.SpecStateSkipped),
	}}, capability.RuntimeInfo{}, nil)
	c := MergeCoverage(cri, cluster)
	got := map[string]string{}
	for _, r := range c.Requirements {
		got[r.ID] = r.Result()
	}
	for id, want := range map[string]string{"CRI-2": "1 passed, 1 skipped", "CRI-4": "1 failed", "CRI-7": "1 skipped", "API-1": "not covered"} {
		if got[id] != want {
			t.Errorf("%s: got %q, want %q", id, got[id], want)
		}
	}
	md := CoverageMarkdown(c)
	if !strings.Contains(md, "| CRI-2 |") || !strings.Contains(md, "Not covered by this run: API-1,") || !strings.Contains(md, "- failed: unknown mode [CRI-4] [SKEW-3] (cri)") {
		t.Errorf("markdown:\n%s", md)
	}
}

// Windows requirements named by specs are not "uncovered": on a Linux node
// they are not exercised; through the windows self-test they are verified,
// and the report says it was only a self-test. A spec whose observations
// are all of capabilities absent on the node's OS verified what they carry,
// not the rest of what it names.
func TestCoverageWindows(t *testing.T) {
	spec := func(text string, obs ...capability.Observation) types.SpecReport {
		s := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, State: types.SpecStatePassed}
		for _, o := range obs {
			s.ReportEntries = append(s.ReportEntries, types.ReportEntry{Name: capability.ReportEntryName, Value: types.WrapEntryValue(o)})
		}
		return s
	}
	specs := types.SpecReports{
		spec("targets [CRI-2] [WIN-2]", capability.Observation{Capability: capability.PIDTarget, Outcome: capability.NotOnOS, Requirements: []string{"WIN-1", "WIN-2"}}),
		spec("network [CRI-5] [WIN-1] [STORY-WIN]", capability.Observation{Capability: capability.NetPod, Outcome: capability.Works, Requirements: []string{"CRI-5", "WIN-1", "STORY-WIN"}}),
	}
	linux := ComputeCoverage(types.Report{SuiteDescription: "cri", SpecReports: types.SpecReports{
		spec("targets [CRI-2] [WIN-2]", capability.Observation{Capability: capability.PIDTarget, Outcome: capability.Works, Requirements: []string{"CRI-2"}}),
		spec("network [CRI-5] [WIN-1] [STORY-WIN]", capability.Observation{Capability: capability.NetPod, Outcome: capability.Works}),
	}}, capability.RuntimeInfo{OS: "linux", Version: "1.6.20"}, nil)
	windows := ComputeCoverage(types.Report{SuiteDescription: "cri", SpecReports: specs}, capability.RuntimeInfo{OS: "windows", Version: "1.6.20+ectest-criproxy:windows"}, nil)
	results := func(c Coverage) map[string]string {
		got := map[string]string{}
		for _, r := range c.Requirements {
			got[r.ID] = r.Result()
		}
		return got
	}
	for id, want := range map[string]string{"CRI-2": "1 passed", "WIN-2": "1 not exercised on a linux node", "STORY-WIN": "1 not exercised on a linux node"} {
		if got := results(linux)[id]; got != want {
			t.Errorf("linux %s: %q, want %q", id, got, want)
		}
	}
	for id, want := range map[string]string{"CRI-2": "1 not exercised on a windows node", "WIN-2": "1 passed (self-test only: windows)", "WIN-1": "1 passed (self-test only: windows)", "CRI-5": "1 passed (self-test only: windows)"} {
		if got := results(windows)[id]; got != want {
			t.Errorf("windows %s: %q, want %q", id, got, want)
		}
	}
	md := CoverageMarkdown(linux)
	if strings.Contains(md, "Not covered by this run: API-1, API-2, API-3, API-4, API-5, API-6, API-7, API-8, API-9, API-10, API-11, LIFE-1, LIFE-2, LIFE-3, LIFE-4, LIFE-5, LIFE-6, SEC-1, SEC-2, SEC-3, SEC-4, SEC-5, CRI-1, CRI-3, CRI-4, CRI-6, CRI-7, CRI-8, WIN-1") ||
		!strings.Contains(md, "not exercised on this run's node OS") || !strings.Contains(md, "WIN-1, WIN-2") {
		t.Errorf("linux markdown:\n%s", md)
	}
	merged := CoverageMarkdown(MergeCoverage(linux, windows))
	if !strings.Contains(merged, "Verified only through a self-test") || !strings.Contains(merged, "WIN-2 (windows)") || strings.Contains(merged, "CRI-2 (windows)") {
		t.Errorf("merged markdown:\n%s", merged)
	}
}

// A run of one suite reports what only the other suite verifies as that
// suite's, not as uncovered; a merged run of both reports neither; and a
// spec that says it exercised a Windows node (framework.RecordNodeOS: the
// cluster suite's HostProcess specs, on a Linux cluster with a Windows
// Node object) covers the WIN-* requirements it names.
func TestCoverageBySuite(t *testing.T) {
	cri := ComputeCoverage(types.Report{SuiteDescription: "cri", SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "targets [CRI-2]", State: types.SpecStatePassed},
	}}, capability.RuntimeInfo{OS: "linux"}, []capability.Layer{capability.LayerCRI})
	hostProcess := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "hostProcess [WIN-4]", State: types.SpecStatePassed,
		ReportEntries: types.ReportEntries{{Name: framework.NodeOSEntry, Value: types.WrapEntryValue("windows")}}}
	kubelet := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "kubelet [WIN-2]", State: types.SpecStatePassed}
	cluster := ComputeCoverage(types.Report{SuiteDescription: "cluster", SpecReports: types.SpecReports{hostProcess, kubelet}},
		capability.RuntimeInfo{OS: "linux"}, []capability.Layer{capability.LayerCluster})
	result := func(c Coverage, id string) string {
		for _, r := range c.Requirements {
			if r.ID == id {
				return r.Result()
			}
		}
		return "?"
	}
	for id, want := range map[string]string{"WIN-4": "the cluster suite's: not part of this run", "API-1": "the cluster suite's: not part of this run", "SKEW-1": "the cluster suite's: not part of this run", "SKEW-3": "not covered", "CRI-2": "1 passed"} {
		if got := result(cri, id); got != want {
			t.Errorf("cri run, %s: %q, want %q", id, got, want)
		}
	}
	if got := result(cluster, "WIN-4"); got != "1 passed" {
		t.Errorf("cluster run, WIN-4: %q, want 1 passed (its spec exercised a Windows Node object)", got)
	}
	if got := result(cluster, "WIN-2"); got != "1 not exercised on a linux node" {
		t.Errorf("cluster run, WIN-2: %q, want not exercised (its spec says nothing of a Windows node)", got)
	}
	md := CoverageMarkdown(cri)
	if !strings.Contains(md, "Verified by the cluster suite, which was not part of this run: API-1,") || !strings.Contains(md, "WIN-5, SKEW-3, STORY-OPS") ||
		strings.Contains(md, "Not covered by this run: API-1") {
		t.Errorf("cri markdown:\n%s", md)
	}
	merged := MergeCoverage(cri, cluster)
	if got := result(merged, "API-1"); got != "not covered" {
		t.Errorf("merged, API-1: %q, want not covered (the cluster suite ran and named it nowhere)", got)
	}
	if got := result(merged, "WIN-4"); got != "1 passed" {
		t.Errorf("merged, WIN-4: %q", got)
	}
}

// A skew cluster's matrix: the suite's layer first, then one column per
// kubelet, newest first, each headed by the runtime of its node.
func TestKubeletLayersInTheMatrix(t *testing.T) {
	s := &Subject{Runtime: capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.37.1"},
		KubeletLayers: map[capability.Layer]capability.RuntimeInfo{
			capability.KubeletLayer("v1.34.10"): {Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.34.10"},
			capability.KubeletLayer("v1.37.1"):  {Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.37.1", Endpoint: "node w1"},
			capability.KubeletLayer("v1.9.0"):   {Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.9.0"},
		}}
	got := s.layers(capability.LayerCluster)
	want := []capability.Layer{capability.LayerCluster, "kubelet-v1.37.1", "kubelet-v1.34.10", "kubelet-v1.9.0"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layers = %v, want %v", got, want)
	}
	if l := (&Subject{}).layers(capability.LayerCRI); len(l) != 1 {
		t.Errorf("no kubelet layers: %v", l)
	}
}

// A run given no label filter gets framework.DefaultLabelFilter: it is a
// full run (the unverified check applies), and a capability only specs it
// leaves out by design judge is not expected of it.
func TestFullRunWithTheDefaultFilter(t *testing.T) {
	r := types.Report{SuiteConfig: types.SuiteConfig{LabelFilter: framework.DefaultLabelFilter}}
	if !FullRun(r) {
		t.Errorf("label filter %q: a run given none must count as full", framework.DefaultLabelFilter)
	}
	r.SuiteConfig.LabelFilter = "pid"
	if FullRun(r) {
		t.Error("a run selecting by label is not full")
	}
	r.SpecReports = types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeLabels: []string{string(capability.PIDTarget)}},
		{LeafNodeType: types.NodeTypeIt, ContainerHierarchyLabels: [][]string{{string(capability.DebugProfileGrants)}}, LeafNodeLabels: []string{framework.LabelDebugProfiles}},
	}
	got := CapabilityLabels(r)
	if !got[capability.PIDTarget] || got[capability.DebugProfileGrants] {
		t.Errorf("capability labels %v: want pid-target only (the other spec carries %s)", got, framework.LabelDebugProfiles)
	}
}
