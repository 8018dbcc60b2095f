// Package report writes a run's reports from the suite's merged Ginkgo
// report: JUnit (testgrid-compatible) and JSON through Ginkgo's own
// reporters (the JUnit report adapted to the suite's contract: see JUnit),
// and the capability matrix as matrix.json and matrix.md.
package report

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/ectest/ectest/runtimes"
	"github.com/ectest/ectest/runtimes/expected"
	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/apimachinery/pkg/util/version"
)

// File names in the report directory.
const (
	JUnitFile      = "junit_01.xml"
	JSONFile       = "ginkgo-report.json"
	MatrixJSONFile = "matrix.json"
	MatrixMDFile   = "matrix.md"
)

// Observations collects every spec's observations from the merged report.
func Observations(r types.Report) ([]capability.SpecObservations, error) {
	var out []capability.SpecObservations
	var errs []error
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		so := capability.SpecObservations{Spec: capability.SpecRef{
			Name: s.FullText(), State: s.State.String(), Requirements: framework.RequirementIDs(s.FullText()),
		}}
		var oerrs []error
		so.Observations, oerrs = decodeObservations(s)
		errs = append(errs, oerrs...)
		if len(so.Observations) > 0 && framework.IsTestDouble(s.Labels()) {
			// It judged a test double, not the system under test: a suite
			// bug, never a cell of the matrix.
			errs = append(errs, fmt.Errorf("spec %q checks the suite through a test double (label %s) yet recorded observations of capabilities", s.FullText(), framework.LabelTestDouble))
			continue
		}
		if len(so.Observations) > 0 {
			out = append(out, so)
		}
	}
	return out, errors.Join(errs...)
}

// specObservations are the observations a spec recorded, as judged when
// recorded (those that cannot be decoded are left out).
func specObservations(s types.SpecReport) []capability.Observation {
	obs, _ := decodeObservations(s)
	return obs
}

// decodeObservations decodes the observations a spec's report entries carry.
func decodeObservations(s types.SpecReport) ([]capability.Observation, []error) {
	var out []capability.Observation
	var errs []error
	for _, e := range s.ReportEntries {
		if e.Name != capability.ReportEntryName {
			continue
		}
		// The raw value is an Observation in the process that recorded
		// it and decoded JSON after crossing processes: re-encode either.
		var o capability.Observation
		raw, err := json.Marshal(e.Value.GetRawValue())
		if err == nil {
			err = json.Unmarshal(raw, &o)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("spec %q: observation: %w", s.FullText(), err))
			continue
		}
		out = append(out, o)
	}
	return out, errs
}

// Write writes the reports into dir: JUnit, JSON, the matrix and the
// requirement coverage.
func Write(dir string, r types.Report, m capability.Matrix) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	errs = append(errs, WriteJUnit(filepath.Join(dir, JUnitFile), r))
	errs = append(errs, writeGinkgoJSON(filepath.Join(dir, JSONFile), r))
	errs = append(errs, WriteMatrix(dir, m))
	errs = append(errs, WriteCoverage(dir, ComputeCoverage(r, m.Runtime, m.Layers)))
	return errors.Join(errs...)
}

// selfTestMarker is what the fault-injecting CRI proxy (a self-test tool,
// fixtures/criproxy) puts in the runtime version it reports, followed by
// ':' or '.' and the fault: "2.4.2+ectest-criproxy.none", or
// "2.4.2+unknown.ectest-criproxy.none" (semver build metadata, which a
// kubelet keeps in the node's containerRuntimeVersion), or
// "1.6.20+ectest-criproxy:none" (older reports).
const selfTestMarker = "ectest-criproxy"

// selfTestFault finds the marker in a runtime version and names the fault.
func selfTestFault(version string) (string, bool) {
	for rest := version; ; {
		i := strings.Index(rest, selfTestMarker)
		if i < 0 {
			return "", false
		}
		rest = rest[i+len(selfTestMarker):]
		if rest != "" && (rest[0] == ':' || rest[0] == '.') && i > 0 {
			return rest[1:], true
		}
	}
}

// SelfTest names the fault when a matrix was made through the
// fault-injecting CRI proxy: such a report is a self-test of the suite,
// never a conformance result.
func SelfTest(m capability.Matrix) (fault string, ok bool) {
	rts := []capability.RuntimeInfo{m.Runtime}
	for _, rt := range m.LayerRuntimes {
		rts = append(rts, rt)
	}
	for _, rt := range rts {
		if fault, ok := selfTestFault(rt.Version); ok {
			return fault, true
		}
	}
	return "", false
}

func selfTestBanner(m capability.Matrix) string {
	if fault, ok := SelfTest(m); ok {
		return "SELF-TEST: " + selfTestWhat(fault) + "; not a conformance result\n"
	}
	return ""
}

// windowsPersonality is the CRI proxy's personality that plays containerd
// on Windows (fixtures/criproxy/windows.go).
const windowsPersonality = "windows"

// selfTestWhat says how a self-test report was made.
func selfTestWhat(fault string) string {
	if strings.HasPrefix(fault, windowsPersonality) {
		return fmt.Sprintf("made through the CRI proxy's %s personality (the embedded Linux containerd playing containerd on Windows), a test of the suite's Windows code path, never Windows conformance", fault)
	}
	return fmt.Sprintf("made through the fault-injecting CRI proxy with fault %q", fault)
}

// Markdown renders the matrix as a Markdown document.
func Markdown(m capability.Matrix) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Capability matrix\n\n")
	if m.Ectest != nil {
		fmt.Fprintf(&b, "Judged by ectest %s.\n\n", m.Ectest)
	}
	if banner := selfTestBanner(m); banner != "" {
		fmt.Fprintf(&b, "**%s**\n", strings.TrimSpace(banner))
	}
	if runtimes.IsProbe(m.Profile) {
		fmt.Fprintf(&b, "**PROBE: no declaration; only what every runtime must support is judged, the rest is recorded as probed (see %s)**\n\n", runtimes.ObservedFile)
	}
	if layered(m) {
		for _, l := range m.Layers {
			rt := m.LayerRuntimes[l]
			fmt.Fprintf(&b, "- %s layer: %s %s (CRI %s)%s, endpoint `%s` (%s)%s\n", l, rt.Name, rt.Version, rt.APIVersion, embeddedNote(rt), rt.Endpoint, rt.OS, stackNote(rt))
		}
	} else {
		fmt.Fprintf(&b, "- runtime: %s %s (CRI %s)%s\n", m.Runtime.Name, m.Runtime.Version, m.Runtime.APIVersion, embeddedNote(m.Runtime))
		fmt.Fprintf(&b, "- endpoint: `%s` (%s)\n", m.Runtime.Endpoint, m.Runtime.OS)
		if st := m.Runtime.Stack(); st != "" {
			fmt.Fprintf(&b, "- stack: %s\n", st)
		}
	}
	fmt.Fprintf(&b, "- profile: %s\n", m.Profile)
	if nc := m.Nonconformant(); len(nc) > 0 {
		fmt.Fprintf(&b, "- **nonconformant: %d** (%s)\n", len(nc), joinNames(nc))
	} else {
		fmt.Fprintf(&b, "- nonconformant: 0\n")
	}
	fmt.Fprintf(&b, "\n| capability | requirements | declared |")
	for _, l := range m.Layers {
		fmt.Fprintf(&b, " %s: observed | %s: verdict |", l, l)
	}
	fmt.Fprintf(&b, "\n|---|---|---|")
	for range m.Layers {
		fmt.Fprintf(&b, "---|---|")
	}
	b.WriteString("\n")
	for _, row := range m.Rows {
		reqs := capability.MustLookup(row.Capability).Requirements
		fmt.Fprintf(&b, "| %s | %s | %s |", row.Capability, strings.Join(reqs, " "), row.Declared)
		for _, l := range m.Layers {
			c := row.Layers[l]
			v := verdictText(row.Capability, c)
			if c.Verdict == capability.Nonconformant || c.Verdict == capability.VerdictError || c.Verdict == capability.Unverified {
				v = "**" + v + "**"
			}
			if c.ProfileMismatch {
				v += " (profile mismatch: declared unsupported, works)"
			}
			fmt.Fprintf(&b, " %s | %s |", mdEscape(strings.Join(c.Observed, "; ")), v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Evidence\n")
	for _, row := range m.Rows {
		for _, l := range m.Layers {
			c := row.Layers[l]
			if len(c.Observations) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n### %s (%s): %s\n\n", row.Capability, l, verdictText(row.Capability, c))
			for _, s := range c.Specs {
				fmt.Fprintf(&b, "- spec (%s): %s\n", s.State, s.Name)
			}
			for _, o := range c.Observations {
				name := o.Observed
				if o.Case != "" {
					name = o.Case + ": " + o.Observed
				}
				fmt.Fprintf(&b, "- %s: %s (%s)\n", o.Verdict, name, o.Reason)
				if o.Evidence != "" && (o.Verdict == capability.Nonconformant || o.Verdict == capability.VerdictError || o.Verdict == capability.VerdictBlocked || o.Verdict == capability.NotSupportedOnOS) {
					fmt.Fprintf(&b, "\n```\n%s\n```\n", strings.TrimRight(o.Evidence, "\n"))
				}
			}
		}
	}
	return b.String()
}

// verdictText is a cell's verdict as reports print it: a blocked cell names
// what blocked it.
func verdictText(n capability.Name, c capability.Cell) string {
	switch c.Verdict {
	case capability.VerdictBlocked:
		return "blocked by " + string(c.BlockedBy(n))
	case capability.OtherLayer:
		return "judged at the " + string(capability.OnlyAt(n)) + " layer only"
	}
	return c.Verdict.Text()
}

// Table renders the matrix for a terminal.
func Table(m capability.Matrix) string {
	rows := [][]string{{"CAPABILITY", "DECLARED"}}
	for _, l := range m.Layers {
		rows[0] = append(rows[0], strings.ToUpper(string(l))+" OBSERVED", strings.ToUpper(string(l))+" VERDICT")
	}
	for _, row := range m.Rows {
		r := []string{string(row.Capability), string(row.Declared)}
		for _, l := range m.Layers {
			c := row.Layers[l]
			r = append(r, truncate(strings.Join(c.Observed, "; "), 48), verdictText(row.Capability, c))
		}
		rows = append(rows, r)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if len(c) > widths[i] {
				widths[i] = len(c)
			}
		}
	}
	var b strings.Builder
	b.WriteString(selfTestBanner(m))
	if layered(m) {
		fmt.Fprintf(&b, "Capability matrix, profile %s\n", m.Profile)
		for _, l := range m.Layers {
			rt := m.LayerRuntimes[l]
			fmt.Fprintf(&b, "  %s layer: %s %s (CRI %s)%s\n", l, rt.Name, rt.Version, rt.APIVersion, embeddedNote(rt))
		}
	} else {
		fmt.Fprintf(&b, "Capability matrix: %s %s (CRI %s), profile %s\n", m.Runtime.Name, m.Runtime.Version, m.Runtime.APIVersion, m.Profile)
	}
	for _, r := range rows {
		for i, c := range r {
			fmt.Fprintf(&b, "%-*s  ", widths[i], c)
		}
		b.WriteString("\n")
	}
	nc := m.Nonconformant()
	fmt.Fprintf(&b, "nonconformant capabilities: %d", len(nc))
	if len(nc) > 0 {
		fmt.Fprintf(&b, " (%s)", joinNames(nc))
	}
	b.WriteString("\n")
	return b.String()
}

// layered reports whether a merged matrix's layers were observed on
// different runtimes, which the headers must then name one by one.
func layered(m capability.Matrix) bool {
	for _, rt := range m.LayerRuntimes {
		if rt != m.Runtime {
			return true
		}
	}
	return false
}

func stackNote(rt capability.RuntimeInfo) string {
	if st := rt.Stack(); st != "" {
		return "; " + st
	}
	return ""
}

func embeddedNote(rt capability.RuntimeInfo) string {
	if rt.Embedded {
		return ", embedded by the suite"
	}
	return ""
}

func joinNames(ns []capability.Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// FullRun reports whether a run selected every spec: no focus, skip or
// label filter beyond the suite's default (benchmarks out).
func FullRun(r types.Report) bool {
	c := r.SuiteConfig
	return !r.SuiteHasProgrammaticFocus && len(c.FocusStrings) == 0 && len(c.SkipStrings) == 0 &&
		len(c.FocusFiles) == 0 && len(c.SkipFiles) == 0 && (c.LabelFilter == "" || c.LabelFilter == framework.DefaultLabelFilter)
}

// CapabilityLabels are the capabilities the run's specs carry as labels,
// whether they ran or not: what the suite has specs for. Specs a full run
// leaves out by design (framework.SelectedOnly) do not count: a capability
// only they judge is not observed, never unverified, in a full run.
func CapabilityLabels(r types.Report) map[capability.Name]bool {
	out := map[capability.Name]bool{}
	for _, sr := range r.SpecReports {
		if slices.ContainsFunc(sr.Labels(), func(l string) bool { return slices.Contains(framework.SelectedOnly, l) }) {
			continue
		}
		for _, l := range sr.Labels() {
			if _, err := capability.Lookup(l); err == nil {
				out[capability.Name(l)] = true
			}
		}
	}
	return out
}

// Subject is what a suite run judged: the runtime and its declared profile.
type Subject struct {
	Runtime  capability.RuntimeInfo
	Profile  string
	Declared map[capability.Name]capability.Support
	// KubeletLayers are the columns of a version-skew cluster besides the
	// suite's own layer: one per kubelet release (capability.KubeletLayer),
	// with the runtime of the node that runs it.
	KubeletLayers map[capability.Layer]capability.RuntimeInfo
}

// layers are the subject's matrix columns: the suite's layer, then the
// kubelet layers, oldest kubelet last (as versions.yaml lists them).
func (s *Subject) layers(layer capability.Layer) []capability.Layer {
	out := []capability.Layer{layer}
	var extra []capability.Layer
	for l := range s.KubeletLayers {
		extra = append(extra, l)
	}
	sort.Slice(extra, func(i, j int) bool {
		si, _ := extra[i].Kubelet()
		sj, _ := extra[j].Kubelet()
		vi, ei := version.ParseGeneric(si)
		vj, ej := version.ParseGeneric(sj)
		if ei != nil || ej != nil {
			return si > sj
		}
		return vi.GreaterThan(vj)
	})
	return append(out, extra...)
}

// AfterSuite is a suite's ReportAfterSuite body: it writes the run's reports
// (JUnit, JSON, the matrix of its layer, the requirement coverage) and
// prints the matrix. With a nil subject (the environment never came up) the
// matrix is empty. A dry run (a preview or --dry-run) ran nothing and
// writes nothing. expect is -expect: the run's verdicts are compared with
// the expectation files it names ("" for none).
func AfterSuite(dir string, r types.Report, s *Subject, layer capability.Layer, expect string) error {
	if r.SuiteConfig.DryRun {
		return nil
	}
	m := capability.Matrix{}
	build := framework.Build()
	if s != nil {
		obs, err := Observations(r)
		if err != nil {
			return err
		}
		m = capability.Compute(s.Runtime, s.Profile, s.Declared, s.layers(layer), obs)
		if len(s.KubeletLayers) > 0 {
			m.LayerRuntimes = map[capability.Layer]capability.RuntimeInfo{layer: s.Runtime}
			for l, rt := range s.KubeletLayers {
				m.LayerRuntimes[l] = rt
			}
		}
		if FullRun(r) {
			m.MarkUnverified(layer, CapabilityLabels(r))
		}
	}
	m.Ectest = &build
	if err := Write(dir, r, m); err != nil {
		return err
	}
	if s != nil {
		fmt.Print("\n" + Table(m) + "reports in " + dir + "\n")
	}
	times, err := WriteBenchmark(dir, "spec-times.json", SpecTimes(r), nil)
	if err != nil {
		return err
	}
	fmt.Println(SpecTimesLine(times))
	sum := SummarizeRun(r, m, dir)
	sum.Ectest = &build
	if (s != nil && runtimes.IsProbe(s.Profile)) || probeRequested() {
		sum.Probe = &ProbeSummary{}
		if s != nil {
			o, err := runtimes.ObservedProfile(m, layer)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, runtimes.ObservedFile)
			if err := atomicfile.WriteFile(path, o.YAML, 0o644); err != nil {
				return err
			}
			sum.Probe.ObservedProfiles = []string{path}
			sum.Probe.Comparisons = []string{fmt.Sprintf("%s layer: %s", layer, o.Comparison())}
			fmt.Printf("observed profile (%s) in %s\n", o.Comparison(), path)
		}
		sum.Outcome = sum.outcome()
	}
	if expect != "" {
		files, err := expected.Load(expect)
		if err != nil {
			return err
		}
		ApplyExpectations(&sum, files)
	}
	return WriteSummary(dir, sum)
}

// probeRequested says whether this process was told -profile=probe, for a
// run whose environment never came up (no subject): its summary must still
// say it was a probe.
func probeRequested() bool {
	f := flag.Lookup("profile")
	return f != nil && runtimes.IsProbe(f.Value.String())
}
