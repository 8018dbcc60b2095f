package matrix

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
	"github.com/ectest/ectest/runtimes/embedded"
	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/net/html"
)

// spec is one fixture spec: its text (with requirement IDs), how it ended,
// and what it observed.
type spec struct {
	text    string
	state   types.SpecState
	message string
	obs     []capability.Observation
}

// writeRun writes a suite run's reports into dir, as the suites'
// AfterSuite does: JUnit, JSON, matrix, coverage and summary.
func writeRun(t *testing.T, dir string, layer capability.Layer, rt capability.RuntimeInfo, declared map[capability.Name]capability.Support, specs []spec) {
	t.Helper()
	var r types.Report
	r.SuiteDescription = "ectest " + string(layer) + " conformance"
	r.SuiteSucceeded = true
	var so []capability.SpecObservations
	for _, s := range specs {
		sr := types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: s.text, State: s.state}
		if s.state != types.SpecStatePassed {
			sr.Failure = types.Failure{Message: s.message, FailureNodeType: types.NodeTypeIt}
			if s.state != types.SpecStateSkipped {
				r.SuiteSucceeded = false
			}
		}
		r.SpecReports = append(r.SpecReports, sr)
		for i := range s.obs {
			s.obs[i].Layer = layer
		}
		so = append(so, capability.SpecObservations{Spec: capability.SpecRef{Name: s.text, State: s.state.String(), Requirements: framework.RequirementIDs(s.text)}, Observations: s.obs})
	}
	m := capability.Compute(rt, "fixture", declared, []capability.Layer{layer}, so)
	if err := report.Write(dir, r, m); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteSummary(dir, report.SummarizeRun(r, m, dir)); err != nil {
		t.Fatal(err)
	}
}

func declaredAll(s capability.Support, except map[capability.Name]capability.Support) map[capability.Name]capability.Support {
	out := map[capability.Name]capability.Support{}
	for _, d := range capability.All() {
		out[d.Name] = s
	}
	for n, v := range except {
		out[n] = v
	}
	return out
}

var (
	containerd2 = capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "v1", OS: "linux", Embedded: true, Flavor: "containerd-2", OCIRuntime: "runc 1.5.2"}
	kubelet     = capability.RuntimeInfo{Name: "containerd", Version: "1.6.20", APIVersion: "kubelet v1.36.3", OS: "linux"}
)

// criRun is a CRI cell's run; with pidTargetBroken the runtime lands a
// PID TARGET container in the pod's namespace, and the judge says no.
func criRun(t *testing.T, dir string, pidTargetBroken bool) {
	t.Helper()
	target := spec{text: "a debug container targeting an isolated container sees only its processes [CRI-2]", state: types.SpecStatePassed,
		obs: []capability.Observation{{Capability: capability.PIDTarget, Outcome: capability.Works, Observed: "target namespace"}}}
	ptrace := spec{text: "a debug container ptraces the target [SEC-3]", state: types.SpecStatePassed,
		obs: []capability.Observation{{Capability: capability.PtraceRules, Outcome: capability.Works, Observed: "ptrace as the kernel allows"}}}
	if pidTargetBroken {
		// Blocked by pid-target, which is nonconformant in the same run
		// (the only way a run may say blocked: Matrix.Inconsistencies).
		ptrace.state, ptrace.message = types.SpecStateSkipped, "ptrace-rules is blocked by pid-target"
		ptrace.obs = []capability.Observation{{Capability: capability.PtraceRules, Outcome: capability.Blocked, Observed: "pid-target: pod namespace"}}
		target.state = types.SpecStateFailed
		target.message = "pid-target is nonconformant (CRI-2) for an isolated target:\n  observed: pod namespace (deviated)\n  evidence: ps ..."
		target.obs = []capability.Observation{{Capability: capability.PIDTarget, Outcome: capability.Deviated, Observed: "pod namespace", Evidence: "PID USER COMMAND\n1 root /pause"}}
	}
	writeRun(t, filepath.Join(dir, "cri"), capability.LayerCRI, containerd2, declaredAll(capability.Supported, map[capability.Name]capability.Support{capability.PIDNode: capability.Unsupported}), []spec{
		target,
		{text: "PID NODE is refused when unsupported [CRI-1]", state: types.SpecStatePassed,
			obs: []capability.Observation{{Capability: capability.PIDNode, Outcome: capability.Refused, Observed: "refused: InvalidArgument"}}},
		ptrace,
		{text: "windows only [WIN-2]", state: types.SpecStateSkipped, message: "needs a Windows node"},
	})
}

// fixture makes a cells folder with every kind of cell the page must show.
func fixture(t *testing.T) (cells []CellConfig, cellsDir, pageDir string) {
	t.Helper()
	pageDir = t.TempDir()
	cellsDir = filepath.Join(pageDir, CellsDir)
	cells = []CellConfig{
		{Name: "cri-good", Layer: "cri", Command: "make conformance-cri RUNTIME=containerd-2"},
		{Name: "cri-bad", Layer: "cri", Command: "make conformance-cri RUNTIME=containerd-1.6"},
		{Name: "cluster-err", Layer: "cluster", Command: "make conformance-cluster"},
		{Name: "bad-flag", Layer: "cri", Command: "make conformance-cri ECTEST_FLAGS=-runtime-endpoint=unix:///nope"},
		{Name: "crashed", Layer: "cri", Command: "make conformance-cri"},
		{Name: "skew-cluster", Layer: "cluster", Skip: "not built yet"},
		{Name: "absent", Layer: "cluster", Describe: "a cell whose CI job uploaded nothing", Command: "make conformance-cluster"},
	}
	criRun(t, filepath.Join(cellsDir, "cri-good"), false)
	criRun(t, filepath.Join(cellsDir, "cri-bad"), true)
	writeRun(t, filepath.Join(cellsDir, "cluster-err", "cluster"), capability.LayerCluster, kubelet, declaredAll(capability.Supported, nil), []spec{
		{text: "a stale resourceVersion gets a Conflict [API-7]", state: types.SpecStateTimedout, message: "timed out waiting for the pod"},
		{text: "logs by name [API-10] [LIFE-4]", state: types.SpecStatePassed,
			obs: []capability.Observation{{Capability: capability.Logs, Outcome: capability.Works, Observed: "output in the log"}}},
	})
	for name, log := range map[string]string{
		"bad-flag": "ectest: -runtime-endpoint unix:///nope: no such socket\nmake: *** [Makefile:33: conformance-cri] Error 2\n",
		"crashed":  "ectest: runtime containerd-2: building containerd: signal: killed\nmake: *** [Makefile:33: conformance-cri] Error 3\n",
	} {
		dir := filepath.Join(cellsDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, CellLogFile), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteCellRun(dir, CellRun{Name: name, Layer: "cri", CommandExit: 2, Seconds: 12}); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteCellRun(filepath.Join(cellsDir, "cri-good"), CellRun{Name: "cri-good", Layer: "cri", CommandExit: 0, Seconds: 192, PrepareSeconds: 3}); err != nil {
		t.Fatal(err)
	}
	return cells, cellsDir, pageDir
}

func TestCombineReadsEveryKindOfCell(t *testing.T) {
	cells, cellsDir, pageDir := fixture(t)
	m := Combine(cells, cellsDir, pageDir, false, time.Now())
	wantExit := map[string]int{"cri-good": 0, "cri-bad": 1, "cluster-err": 3, "bad-flag": 2, "crashed": 3}
	for _, c := range m.Cells {
		want, ran := wantExit[c.Name]
		if c.Ran != ran || (ran && c.ExitCode != want) {
			t.Errorf("cell %s: ran %v exit %d (%s, note %q); want ran %v exit %d", c.Name, c.Ran, c.ExitCode, c.Exit, c.Note, ran, want)
		}
	}
	if m.ExitCode != framework.ExitBadInput || !strings.Contains(m.Line, "2 not run (skew-cluster, absent)") {
		t.Errorf("matrix exit %d, line %q", m.ExitCode, m.Line)
	}
	want := map[string]map[string]Status{
		"capability:pid-target":   {"cri-good": Conformant, "cri-bad": Nonconformant, "cluster-err": NotObserved, "bad-flag": Error, "skew-cluster": NotRun, "absent": NotRun},
		"capability:pid-node":     {"cri-good": NotSupported},
		"capability:ptrace-rules": {"cri-good": Conformant, "cri-bad": Blocked},
		"capability:logs":         {"cluster-err": Conformant, "cri-good": NotObserved},
		"requirement:CRI-2":       {"cri-good": Conformant, "cri-bad": Nonconformant, "cluster-err": None},
		"requirement:API-7":       {"cluster-err": Error, "cri-good": None},
		"requirement:WIN-2":       {"cri-good": NotSupported},
		"requirement:SKEW-1":      {"cri-good": None, "crashed": Error},
	}
	for _, r := range m.Rows {
		for cell, st := range want[r.Key()] {
			if got := r.Cells[cell]; got.Status() != st {
				t.Errorf("%s in %s: %s (%s: %s), want %s", r.Key(), cell, got.Status(), got.Verdict, got.Why, st)
			}
		}
	}
	f := m.Failing("cri-bad")
	if len(f.Rows) == 0 || f.Rows[0].Row.ID != "pid-target" || !strings.Contains(f.Rows[0].Result.Why, "pod namespace") {
		t.Errorf("cri-bad's failures: %+v", f.Rows)
	}
	if len(f.Covered) != 1 || f.Covered[0].Row.ID != "CRI-2" {
		t.Errorf("cri-bad's requirement IDs explained by its capabilities: %+v", f.Covered)
	}
}

// The page renders every cell of every row, links each to evidence that
// is on the page, is self-contained, and says what changed first.
func TestPageShowsEveryCellAndWhatChanged(t *testing.T) {
	cells, cellsDir, pageDir := fixture(t)
	m, err := Write(pageDir, Combine(cells, cellsDir, pageDir, false, time.Now()), "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Previous != nil || len(m.Changes) != 0 {
		t.Errorf("a first run has no previous run: %+v, %d changes", m.Previous, len(m.Changes))
	}
	page := checkPage(t, pageDir, m)
	if !strings.Contains(page, "No previous run") {
		t.Error("the first page does not say there is no previous run")
	}

	// The next night: cri-good breaks PID TARGET, skew-cluster is built,
	// cri-bad is gone from the configuration.
	if err := os.RemoveAll(filepath.Join(cellsDir, "cri-good", "cri")); err != nil {
		t.Fatal(err)
	}
	criRun(t, filepath.Join(cellsDir, "cri-good"), true)
	cells[5].Skip, cells[5].Command = "", "make conformance-cluster SKEW=1"
	criRun(t, filepath.Join(cellsDir, "skew-cluster"), false)
	cells = slices.Delete(cells, 1, 2)
	m, err = Write(pageDir, Combine(cells, cellsDir, pageDir, false, time.Now().Add(24*time.Hour)), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pageDir, PreviousJSONFile)); err != nil {
		t.Errorf("the previous matrix is not kept: %v", err)
	}
	wantChanges := []Change{
		{Cell: "cri-good", From: "exit 0 (conformant)", To: "exit 1 (nonconformant)", Direction: Worse},
		{Cell: "cri-good", Row: "capability:pid-target", From: "conformant", To: "nonconformant", Direction: Worse},
		{Cell: "cri-good", Row: "requirement:CRI-2", From: "conformant", To: "nonconformant", Direction: Worse},
		{Cell: "skew-cluster", From: "not run", To: "exit 0 (conformant)", Direction: Better},
		{Cell: "cri-bad", From: "exit 1 (nonconformant)", To: "absent", Direction: Gone},
	}
	for _, w := range wantChanges {
		found := false
		for _, c := range m.Changes {
			found = found || (c.Cell == w.Cell && c.Row == w.Row && c.From == w.From && c.To == w.To && c.Direction == w.Direction)
		}
		if !found {
			t.Errorf("change %+v missing from %+v", w, m.Changes)
		}
	}
	if m.Changes[0].Direction != Worse {
		t.Errorf("the changes do not start with what got worse: %+v", m.Changes[0])
	}
	page = checkPage(t, pageDir, m)
	changes, heat := strings.Index(page, `id="changes"`), strings.Index(page, `id="heatmap"`)
	if changes < 0 || changes > heat || !strings.Contains(page[changes:heat], "pid-target") {
		t.Error("the page does not list what changed (pid-target in cri-good) before the heatmap")
	}
	md, err := os.ReadFile(filepath.Join(pageDir, MDFile))
	if err != nil || !strings.Contains(string(md), "**worse** cri-good · capability pid-target: conformant → nonconformant") {
		t.Errorf("matrix.md does not list the change: %v\n%s", err, md)
	}
}

// checkPage parses matrix.html and checks that every cell has a column
// header and a cell in every row, that every in-page link has its target,
// that each failed cell's evidence is there, and that nothing is loaded
// from elsewhere.
func checkPage(t *testing.T, pageDir string, m Matrix) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pageDir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	checkPageHTML(t, b, m)
	return string(b)
}

// checkPageHTML is checkPage's judge of one page's HTML: the file, or
// what a browser made of it.
func checkPageHTML(t *testing.T, b []byte, m Matrix) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]*html.Node{}
	var hrefs []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch {
				case a.Key == "id":
					ids[a.Val] = n
				case a.Key == "href" && strings.HasPrefix(a.Val, "#"):
					hrefs = append(hrefs, a.Val[1:])
				case a.Key == "src" || (a.Key == "href" && strings.Contains(a.Val, "://")):
					t.Errorf("the page is not self-contained: <%s %s=%q>", n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "link" {
				t.Errorf("the page loads a <link>")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, c := range m.Cells {
		th := ids[ColumnID(c.Name)]
		if th == nil || !strings.Contains(text(th), c.Name) {
			t.Errorf("no column header for cell %s", c.Name)
			continue
		}
		switch {
		case !c.Ran && (!strings.Contains(text(th), "not run") || !strings.Contains(text(th), strings.Join(strings.Fields(c.NotRun), " "))):
			t.Errorf("column %s does not say it did not run and why (%s): %q", c.Name, c.NotRun, text(th))
		case c.Ran && c.Note != "" && !strings.Contains(text(th), strings.Join(strings.Fields(c.Note), " ")):
			t.Errorf("column %s does not say why it ended so (%s): %q", c.Name, c.Note, text(th))
		case c.Ran && !strings.Contains(text(th), "exit "+itoa(c.ExitCode)):
			t.Errorf("column %s does not give its exit %d: %q", c.Name, c.ExitCode, text(th))
		}
	}
	for _, r := range m.Rows {
		tr := ids["row--"+r.Kind+"-"+r.ID]
		if tr == nil {
			t.Errorf("no row %s", r.Key())
			continue
		}
		var tds []*html.Node
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "td" {
				tds = append(tds, c)
			}
		}
		if len(tds) != len(m.Cells) {
			t.Errorf("row %s has %d cells, want %d", r.Key(), len(tds), len(m.Cells))
			continue
		}
		for i, c := range m.Cells {
			res := r.Cells[c.Name]
			if cls := attr(tds[i], "class"); cls != "s-"+string(res.Status()) {
				t.Errorf("row %s, cell %s: class %q, want s-%s", r.Key(), c.Name, cls, res.Status())
			}
			if res.Status().Failed() && ids[EvidenceID(c.Name, r)] == nil {
				t.Errorf("row %s, cell %s: %s without evidence on the page", r.Key(), c.Name, res.Status())
			}
		}
	}
	for _, h := range hrefs {
		if ids[h] == nil {
			t.Errorf("link #%s has no target", h)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestCellExit(t *testing.T) {
	nc := report.Summary{Nonconformances: []string{"a spec [CRI-2]: pid-target is nonconformant"}}
	ok := report.Summary{Specs: report.SpecCounts{Passed: 3}}
	probe := report.Summary{Probe: &report.ProbeSummary{}}
	makeErr := func(n string) string {
		return "ectest: something\nmake: *** [Makefile:31: conformance-cri] Error " + n + "\n"
	}
	for _, c := range []struct {
		name string
		run  *CellRun
		log  string
		sums []report.Summary
		want int
	}{
		{"the reports say nonconformant, make says 2", &CellRun{CommandExit: 2}, makeErr("1"), []report.Summary{nc}, 1},
		{"conformant", &CellRun{}, "", []report.Summary{ok}, 0},
		{"a CI folder without cell.json", nil, "", []report.Summary{nc}, 1},
		{"a probe through make probe", &CellRun{}, "", []report.Summary{probe}, 4},
		{"conformant reports, then the command failed", &CellRun{CommandExit: 2}, makeErr("3"), []report.Summary{ok}, 3},
		{"bad input: no reports, the recipe exited 2", &CellRun{CommandExit: 2}, makeErr("2"), nil, 2},
		{"no reports, the recipe exited 3", &CellRun{CommandExit: 2}, makeErr("3"), nil, 3},
		{"no reports, exit 0", &CellRun{}, "", nil, 3},
		{"bad input without make", &CellRun{CommandExit: 2}, "ectest: bad flag\n", nil, 2},
		{"timed out", &CellRun{CommandExit: -1, TimedOut: true, Timeout: "45m0s"}, "", []report.Summary{ok}, 3},
		{"prepare failed", &CellRun{PrepareFailed: true, PrepareExit: 1}, "", nil, 3},
		{"a CI folder without reports", nil, "", nil, 3},
		{"a nested make", &CellRun{CommandExit: 2}, "make[1]: *** [Makefile:9: x] Error 3\nmake: *** [Makefile:3: y] Error 2\n", nil, 3},
	} {
		if got, note := CellExit(c.run, c.log, c.sums); got != c.want {
			t.Errorf("%s: exit %d (%s), want %d", c.name, got, note, c.want)
		}
	}
}

// The configuration has a CRI cell for every embedded runtime (make
// runtimes' list), and the skew and API-server cells' slots.
func TestConfigCoversEveryRuntime(t *testing.T) {
	cfg, err := LoadConfig("../../../hack/matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	commands := map[string]string{}
	for _, c := range cfg.Cells {
		if c.Layer == LayerCRI {
			commands[c.Name] = c.Command
		}
	}
	for _, f := range embedded.Flavors {
		name := "cri-" + f.Name
		if !strings.Contains(commands[name], "RUNTIME="+f.Name) {
			t.Errorf("hack/matrix.yaml: no cell %s running make conformance-cri RUNTIME=%s (got %q)", name, f.Name, commands[name])
		}
	}
	if _, err := cfg.Select([]string{"cluster-kind", "skew-cluster", "api-v1.37.1", "api-v1.33.13"}); err != nil {
		t.Error(err)
	}
}

func TestConfigRefusesWhatItCannotRun(t *testing.T) {
	for _, c := range []Config{
		{},
		{Cells: []CellConfig{{Name: "a", Layer: "cri"}}},
		{Cells: []CellConfig{{Name: "a", Layer: "api", Command: "true"}}},
		{Cells: []CellConfig{{Name: "A b", Layer: "cri", Command: "true"}}},
		{Cells: []CellConfig{{Name: "a", Layer: "cri", Command: "true"}, {Name: "a", Layer: "cri", Command: "true"}}},
		{Cells: []CellConfig{{Name: "a", Layer: "cri", Command: "true", Timeout: "soon"}}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(path, []byte("cells:\n- name: a\n  layer: cri\n  command: 'true'\n  lock: [kind]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "lock") {
		t.Errorf("a misspelt field (lock for locks) is accepted: %v", err)
	}
}

// A CRI-O cell names the implementation, the OCI runtime and what the
// project stood in for (its pinns).
func TestRanAgainstNamesStandIns(t *testing.T) {
	c := Cell{Runtimes: []LayerRuntime{{Layer: capability.LayerCRI, Runtime: capability.RuntimeInfo{Name: "cri-o", Version: "1.36.3", OCIRuntime: "runc 1.5.2", Note: "pinns is ectest-pinns"}}}}
	if got, want := strings.Join(c.RanAgainst(), "; "), "cri-o 1.36.3, runc 1.5.2, pinns is ectest-pinns"; got != want {
		t.Errorf("RanAgainst = %q, want %q", got, want)
	}
}

// A skew cell ran against one kubelet per worker: its heading names each.
func TestRanAgainstNamesEveryKubelet(t *testing.T) {
	c := Cell{Runtimes: []LayerRuntime{
		{Layer: capability.LayerCluster, Runtime: capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", OCIRuntime: "runc 1.5.2", APIVersion: "kubelet v1.37.1"}},
		{Layer: "kubelet-v1.37.1", Runtime: capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.37.1"}},
		{Layer: "kubelet-v1.34.10", Runtime: capability.RuntimeInfo{Name: "containerd", Version: "2.4.2", APIVersion: "kubelet v1.34.10"}},
	}}
	got := strings.Join(c.RanAgainst(), "; ")
	if want := "containerd 2.4.2, runc 1.5.2, kubelets v1.37.1, v1.34.10"; got != want {
		t.Errorf("RanAgainst = %q, want %q", got, want)
	}
	c.Runtimes = c.Runtimes[:1]
	if got, want := strings.Join(c.RanAgainst(), "; "), "containerd 2.4.2, runc 1.5.2, kubelet v1.37.1"; got != want {
		t.Errorf("one kubelet: RanAgainst = %q, want %q", got, want)
	}
}

// A Linux runtime's failed spec that also names a Windows requirement (the
// coverage says "not exercised on a linux node" for it) fails its other
// requirements, not the Windows one: that row is not supported on the OS.
func TestRequirementOfAnotherOSIsNotFailedByTheSpec(t *testing.T) {
	spec := "Network sharing a NODE network namespace is the host's [CRI-5] [WIN-1]"
	src := source{Run: report.Run{
		Specs: map[string]report.SpecVerdict{spec: {Spec: spec, State: "failed", Message: "does not reach a server on the host's loopback", Verdict: capability.Nonconformant}},
		Coverage: &report.Coverage{Requirements: []report.RequirementCoverage{
			{Requirement: framework.Requirement{ID: "CRI-5"}, Specs: []report.CoveredBy{{Spec: spec, State: "failed"}}},
			{Requirement: framework.Requirement{ID: "WIN-1"}, Specs: []report.CoveredBy{{Spec: spec, State: "not exercised on a linux node"}}},
		}},
	}}
	if r := requirementResult(src, "CRI-5", "cri"); r.Verdict != capability.Nonconformant {
		t.Errorf("CRI-5: %s, want nonconformant", r.Verdict)
	}
	if r := requirementResult(src, "WIN-1", "cri"); r.Verdict != capability.NotSupportedOnOS || r.Status() != NotSupported {
		t.Errorf("WIN-1 on Linux: %s (%s), want not supported on this OS", r.Verdict, r.Why)
	}
}

// A previous page written before results carried verdicts (format 1: a
// status of the page's own and a verdict of free text) still reads, and
// diffs by colour: only a real change is one.
func TestPreviousPageOfFormat1(t *testing.T) {
	old := `{"generated":"2026-01-01T00:00:00Z","line":"x","exitCode":1,"cells":[{"name":"c","layer":"cri","ran":true,"exitCode":1,"exit":"nonconformant","specs":{"passed":0,"failed":0,"skipped":0}}],
"rows":[{"kind":"capability","id":"pid-node","summary":"s","cells":{"c":{"status":"not-supported","verdict":"declared unsupported, refused as it must be"}}},
{"kind":"capability","id":"ptrace-rules","summary":"s","cells":{"c":{"status":"blocked","verdict":"blocked by pid-target"}}},
{"kind":"capability","id":"exec","summary":"s","cells":{"c":{"status":"conformant","verdict":"conformant"}}}],"changes":[]}`
	path := filepath.Join(t.TempDir(), JSONFile)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	prev, err := ReadMatrix(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := prev.Rows[1].Cells["c"]; r.Verdict != capability.VerdictBlocked || r.BlockedBy != capability.PIDTarget || r.Text() != "blocked by pid-target" {
		t.Errorf("blocked: %+v (%s)", r, r.Text())
	}
	cur := prev
	cur.Rows = []Row{
		{Kind: KindCapability, ID: "pid-node", Cells: map[string]Result{"c": {Verdict: capability.Conformant, Refused: true}}},
		{Kind: KindCapability, ID: "ptrace-rules", Cells: map[string]Result{"c": {Verdict: capability.VerdictBlocked, BlockedBy: capability.PIDTarget}}},
		{Kind: KindCapability, ID: "exec", Cells: map[string]Result{"c": {Verdict: capability.Nonconformant}}},
	}
	changes := Diff(prev, cur)
	if len(changes) != 1 || changes[0].Row != "capability:exec" || changes[0].From != "conformant" || changes[0].To != "nonconformant" || changes[0].Direction != Worse {
		t.Errorf("changes %+v, want exec conformant → nonconformant only", changes)
	}
}
