package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/runtimes/expected"
	"github.com/onsi/ginkgo/v2/types"
)

// SummaryMDFile renders the summary for people.
const SummaryMDFile = "summary.md"

// Summary is how a run (or several merged) ended: the verdict counts per
// layer, the specs, and which failures are the runtime's (a judge said no)
// and which are the run's own (setup, timeouts, interrupts, leaks). Its
// exit code and line are what the suite binary and make conformance end on.
type Summary struct {
	framework.Outcome
	// Format is the summary.json version (SummaryFormat; 0 before it).
	Format int `json:"format,omitempty"`
	// Ectest is the suite that judged (absent from older summaries).
	Ectest *capability.Build `json:"ectest,omitempty"`
	Layers []LayerSummary    `json:"layers"`
	Specs  SpecCounts        `json:"specs"`
	// Nonconformances are failed specs whose judge said no.
	Nonconformances []string `json:"nonconformances,omitempty"`
	// RunErrors are failures of the run itself: no verdict either way.
	RunErrors []string `json:"runErrors,omitempty"`
	// Judged are the verdicts of the specs that did not pass (failed or
	// skipped), as JudgeSpecReport decided them; absent from summaries
	// written before it was (ReadRun then decides them from the run's
	// ginkgo-report.json, by the same rule).
	Judged    []SpecVerdict `json:"judged,omitempty"`
	ReportDir string        `json:"reportDir"`
	// Probe is set for a probe (-profile=probe): nothing but what every
	// runtime must support was judged, and the run wrote what it observed.
	Probe *ProbeSummary `json:"probe,omitempty"`
	// Expectations is set for a run with -expect: its verdicts compared
	// with the known deviations of the runtime's expectation file. Such a
	// run never says "conformant": exit 0 means "as expected".
	Expectations *Expectations `json:"expectations,omitempty"`
}

// Expectations compares a run with the expectation files it was given
// (runtimes/expected's format).
type Expectations struct {
	// Files are the files applied, per layer ("cri: builtin:containerd-2.yaml"),
	// or the layer's runtime that no file is about.
	Files []string `json:"files"`
	// Known are the expected deviations observed again, each with the
	// upstream code or issue behind it.
	Known []string `json:"known,omitempty"`
	// New are nonconformances no file expects: the run changed (exit 1).
	New []string `json:"new,omitempty"`
	// Fixed are expected deviations observed conformant: the run changed
	// (exit 1), and the entry should leave its file.
	Fixed []string `json:"fixed,omitempty"`
	// Unchecked are expected deviations this run did not judge (a label
	// filter, another layer): neither known nor fixed.
	Unchecked []string `json:"unchecked,omitempty"`
}

// Changed says whether the run differs from its expectations.
func (e *Expectations) Changed() bool { return len(e.New) > 0 || len(e.Fixed) > 0 }

// ApplyExpectations compares the summary with the expectation files (each
// layer with the file about its runtime) and recomputes its outcome: exit 0
// "as expected" when the nonconformances are exactly the known deviations
// observed, 1 "CHANGED" with what is new and what was fixed. A nonconformant
// spec is listed by the nonconformant capability it observed (known or
// new), and by itself when it observed none. Run
// errors still end the run with exit 3: they have no verdict to compare.
func ApplyExpectations(s *Summary, files []*expected.File) {
	e := &Expectations{}
	// counted are the capabilities whose nonconformance is listed (known
	// or new): a nonconformant spec that observed one is listed with it.
	counted := map[capability.Name]bool{}
	for _, l := range s.Layers {
		for _, n := range l.Nonconformant {
			counted[n] = true
		}
		f := expected.For(files, l.Runtime)
		if f == nil {
			e.Files = append(e.Files, fmt.Sprintf("%s: none for %s %s (every nonconformance is new)", l.Layer, l.Runtime.Name, l.Runtime.Version))
			for _, n := range l.Nonconformant {
				e.New = append(e.New, fmt.Sprintf("%s (%s layer)", n, l.Layer))
			}
			continue
		}
		e.Files = append(e.Files, fmt.Sprintf("%s: %s", l.Layer, f.Path))
		dev := map[capability.Name]bool{}
		for _, n := range f.Deviations() {
			dev[n] = true
		}
		nc := map[capability.Name]bool{}
		for _, n := range l.Nonconformant {
			nc[n] = true
			if dev[n] {
				e.Known = append(e.Known, fmt.Sprintf("%s (%s layer; %s)", n, l.Layer, f.Verdicts[n].Upstream))
			} else {
				e.New = append(e.New, fmt.Sprintf("%s (%s layer)", n, l.Layer))
			}
		}
		conformant := map[capability.Name]bool{}
		for _, n := range l.ConformantCapabilities {
			conformant[n] = true
		}
		for _, n := range f.Deviations() {
			switch {
			case !capability.AtLayer(n, l.Layer):
				// judged at another layer only: nothing to compare here
			case nc[n]:
			case conformant[n]:
				e.Fixed = append(e.Fixed, fmt.Sprintf("%s (%s layer: conformant now; remove it from %s)", n, l.Layer, f.Path))
			default:
				e.Unchecked = append(e.Unchecked, fmt.Sprintf("%s (%s layer)", n, l.Layer))
			}
		}
	}
	for _, sv := range s.Judged {
		if sv.Verdict != capability.Nonconformant {
			continue
		}
		explained := false
		for _, n := range sv.Capabilities {
			explained = explained || counted[n]
		}
		if !explained {
			e.New = append(e.New, "spec "+sv.Spec)
		}
	}
	s.Expectations = e
	s.Outcome = s.outcome()
}

// ProbeSummary is what a probe wrote: per layer, the observed profile and
// how it compares with the builtin profile -profile=auto would pick.
type ProbeSummary struct {
	ObservedProfiles []string `json:"observedProfiles,omitempty"`
	Comparisons      []string `json:"comparisons,omitempty"`
}

// LayerSummary counts one layer's capability verdicts.
type LayerSummary struct {
	Layer      capability.Layer       `json:"layer"`
	Runtime    capability.RuntimeInfo `json:"runtime"`
	Conformant int                    `json:"conformant"`
	// ConformantCapabilities names them.
	ConformantCapabilities []capability.Name `json:"conformantCapabilities,omitempty"`
	Nonconformant          []capability.Name `json:"nonconformant,omitempty"`
	NotObserved            int               `json:"notObserved"`
	NotApplicable          int               `json:"notApplicable"`
	// NotSupportedOnOS are declared not applicable because the node's OS
	// has no such thing, and observed so (what a debug container there
	// sees instead is in the matrix).
	NotSupportedOnOS []capability.Name `json:"notSupportedOnOS,omitempty"`
	// Errors are capabilities whose spec failed for a reason of its own
	// after observing them: no verdict.
	Errors []capability.Name `json:"errors,omitempty"`
	// ProfileMismatches are declared unsupported yet observed working.
	ProfileMismatches []capability.Name `json:"profileMismatches,omitempty"`
	// Unverified are declared supported and never observed in a full run.
	Unverified []capability.Name `json:"unverified,omitempty"`
	// Blocked could not be checked because a capability they depend on
	// did not work (that one carries the verdict).
	Blocked []capability.Name `json:"blocked,omitempty"`
	// Probed are capabilities a probe observed and did not judge.
	Probed []capability.Name `json:"probed,omitempty"`
}

// SpecCounts counts the specs of a run by how they ended.
type SpecCounts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// SpecVerdict is one spec's (or setup node's) verdict, decided by
// capability.JudgeSpec from how it ended and what it recorded: a summary
// lists those of the specs that did not pass, and the reports that read a
// run (ReadRun) take them from there.
type SpecVerdict struct {
	Spec    string             `json:"spec"`
	State   string             `json:"state"`
	Verdict capability.Verdict `json:"verdict"`
	// Why is JudgeSpec's reason; Message the failure or skip message.
	Why     string `json:"why,omitempty"`
	Message string `json:"message,omitempty"`
	// Node is where a failure was raised ("It", "BeforeEach", ...).
	Node string `json:"node,omitempty"`
	// Capabilities are those the spec observed.
	Capabilities []capability.Name `json:"capabilities,omitempty"`
}

// maxMessage bounds the failure message a summary keeps per spec; the
// run's ginkgo-report.json has all of it.
const maxMessage = 3000

// JudgeSpecReport is a Ginkgo spec report's verdict (capability.JudgeSpec).
func JudgeSpecReport(sr types.SpecReport) SpecVerdict {
	isSpec := sr.LeafNodeType == types.NodeTypeIt
	what := sr.FullText()
	if !isSpec {
		what = sr.LeafNodeType.String()
		if sr.LeafNodeText != "" {
			what += " " + sr.LeafNodeText
		}
	}
	end := capability.SpecEnd{IsSpec: isSpec, State: sr.State.String(), Message: sr.Failure.Message,
		FailedInSpecBody: sr.Failure.FailureNodeType == types.NodeTypeIt, Observations: specObservations(sr),
		TestDouble: framework.IsTestDouble(sr.Labels())}
	for _, e := range sr.ReportEntries {
		if e.Name == capability.EnvironmentEntryName {
			end.EnvironmentError = e.StringRepresentation()
		}
	}
	v, why := capability.JudgeSpec(end)
	out := SpecVerdict{Spec: what, State: end.State, Verdict: v, Why: why, Message: truncate(strings.TrimSpace(sr.Failure.Message), maxMessage)}
	for _, o := range end.Observations {
		if !slices.Contains(out.Capabilities, o.Capability) {
			out.Capabilities = append(out.Capabilities, o.Capability)
		}
	}
	if sr.State.Is(types.SpecStateFailureStates) {
		out.Node = sr.Failure.FailureNodeType.String()
	}
	return out
}

// SummarizeRun works out a run's outcome from its merged Ginkgo report and its
// matrix: each spec's verdict (JudgeSpecReport) and each cell's. A failed
// spec is a nonconformance when a judge said no; any other failure (the
// suite's or a spec's setup and cleanup, the environment, a panic, a
// timeout, an interrupt) is the run's own error. Run errors take
// precedence: a run with any has no trustworthy verdict, whatever else it
// found.
func SummarizeRun(r types.Report, m capability.Matrix, dir string) Summary {
	s := Summary{ReportDir: dir, Format: SummaryFormat}
	echoes := setupEchoes(r.SpecReports)
	for i, sr := range r.SpecReports {
		if echoes[i] {
			continue
		}
		isSpec := sr.LeafNodeType == types.NodeTypeIt
		switch {
		case sr.State.Is(types.SpecStatePassed):
			if isSpec {
				s.Specs.Passed++
			}
			continue
		case sr.State.Is(types.SpecStateSkipped | types.SpecStatePending):
			if isSpec {
				s.Specs.Skipped++
				sv := JudgeSpecReport(sr)
				sv.Message = firstLine(sv.Message)
				s.Judged = append(s.Judged, sv)
			}
			continue
		}
		if isSpec {
			s.Specs.Failed++
		}
		sv := JudgeSpecReport(sr)
		s.Judged = append(s.Judged, sv)
		line := fmt.Sprintf("%s: %s", sv.Spec, firstLine(sv.Message))
		if sv.Verdict == capability.Nonconformant {
			s.Nonconformances = append(s.Nonconformances, line)
		} else {
			s.RunErrors = append(s.RunErrors, fmt.Sprintf("%s (%s in %s)", line, sr.State, sr.Failure.FailureNodeType))
		}
	}
	if !r.SuiteSucceeded && len(s.Nonconformances) == 0 && len(s.RunErrors) == 0 {
		s.RunErrors = append(s.RunErrors, "the suite failed: "+strings.Join(r.SpecialSuiteFailureReasons, "; "))
	}
	for _, l := range m.Layers {
		ls := LayerSummary{Layer: l, Runtime: m.LayerRuntimes[l]}
		if ls.Runtime == (capability.RuntimeInfo{}) {
			ls.Runtime = m.Runtime
		}
		for _, row := range m.Rows {
			switch row.Layers[l].Verdict {
			case capability.Conformant:
				ls.Conformant++
				ls.ConformantCapabilities = append(ls.ConformantCapabilities, row.Capability)
			case capability.Nonconformant:
				ls.Nonconformant = append(ls.Nonconformant, row.Capability)
			case capability.VerdictNotApplicable:
				ls.NotApplicable++
			case capability.NotSupportedOnOS:
				ls.NotSupportedOnOS = append(ls.NotSupportedOnOS, row.Capability)
			case capability.VerdictProbed:
				ls.Probed = append(ls.Probed, row.Capability)
			case capability.VerdictError:
				ls.Errors = append(ls.Errors, row.Capability)
				s.RunErrors = append(s.RunErrors, fmt.Sprintf("%s (%s layer): %s: no verdict", row.Capability, l, strings.Join(row.Layers[l].Reasons, "; ")))
			case capability.Unverified:
				ls.Unverified = append(ls.Unverified, row.Capability)
				s.RunErrors = append(s.RunErrors, fmt.Sprintf("%s (%s layer): declared supported but unverified: no spec of this full run observed it", row.Capability, l))
			case capability.VerdictBlocked:
				ls.Blocked = append(ls.Blocked, row.Capability)
			case capability.OtherLayer:
				// nothing to count: the capability has no specs at this layer
			default:
				ls.NotObserved++
			}
			if row.Layers[l].ProfileMismatch {
				ls.ProfileMismatches = append(ls.ProfileMismatches, row.Capability)
			}
		}
		s.Layers = append(s.Layers, ls)
	}
	s.RunErrors = append(s.RunErrors, inconsistencyErrors(m)...)
	s.Outcome = s.outcome()
	return s
}

// setupEchoes marks the failures of the other parallel processes that only
// say process 1's setup failed ("SynchronizedBeforeSuite failed on Ginkgo
// parallel process #1"), when process 1's own failure, which says why, is
// in the report: one cause is one run error.
func setupEchoes(srs types.SpecReports) map[int]bool {
	const echo = "failed on Ginkgo parallel process #1"
	own := false
	for _, sr := range srs {
		if sr.LeafNodeType == types.NodeTypeSynchronizedBeforeSuite && sr.State.Is(types.SpecStateFailureStates) && !strings.Contains(sr.Failure.Message, echo) {
			own = true
		}
	}
	out := map[int]bool{}
	for i, sr := range srs {
		if own && sr.LeafNodeType == types.NodeTypeSynchronizedBeforeSuite && strings.Contains(sr.Failure.Message, echo) {
			out[i] = true
		}
	}
	return out
}

// MergeSummaries adds the summaries of several runs (make conformance's
// suites) into one, with one outcome for them all.
func MergeSummaries(dir string, ss ...Summary) Summary {
	out := Summary{ReportDir: dir, Format: SummaryFormat}
	for _, s := range ss {
		if s.Format < out.Format {
			out.Format = s.Format // one run's verdicts are not in its summary
		}
		if out.Ectest == nil {
			out.Ectest = s.Ectest
		}
		out.Layers = append(out.Layers, s.Layers...)
		out.Specs.Passed += s.Specs.Passed
		out.Specs.Failed += s.Specs.Failed
		out.Specs.Skipped += s.Specs.Skipped
		out.Nonconformances = append(out.Nonconformances, s.Nonconformances...)
		out.RunErrors = append(out.RunErrors, s.RunErrors...)
		out.Judged = append(out.Judged, s.Judged...)
		if s.Expectations != nil {
			if out.Expectations == nil {
				out.Expectations = &Expectations{}
			}
			e := out.Expectations
			e.Files = append(e.Files, s.Expectations.Files...)
			e.Known = append(e.Known, s.Expectations.Known...)
			e.New = append(e.New, s.Expectations.New...)
			e.Fixed = append(e.Fixed, s.Expectations.Fixed...)
			e.Unchecked = append(e.Unchecked, s.Expectations.Unchecked...)
		}
		if s.Probe != nil {
			if out.Probe == nil {
				out.Probe = &ProbeSummary{}
			}
			out.Probe.ObservedProfiles = append(out.Probe.ObservedProfiles, s.Probe.ObservedProfiles...)
			out.Probe.Comparisons = append(out.Probe.Comparisons, s.Probe.Comparisons...)
		}
	}
	if out.Expectations != nil {
		// A run compared with nothing among runs that were: its
		// nonconformances are all new.
		for _, s := range ss {
			if s.Expectations == nil {
				for _, l := range s.Layers {
					for _, n := range l.Nonconformant {
						out.Expectations.New = append(out.Expectations.New, fmt.Sprintf("%s (%s layer, a run without -expect)", n, l.Layer))
					}
				}
			}
		}
	}
	out.Outcome = out.outcome()
	return out
}

func (s Summary) outcome() framework.Outcome {
	var parts []string
	for _, l := range s.Layers {
		if len(s.RunErrors) > 0 {
			// A run that failed names no verdict, not even the cells it
			// reached: the reports have them, for what they are worth.
			parts = append(parts, fmt.Sprintf("%s %s %s: no verdict", l.Layer, l.Runtime.Name, l.Runtime.Version))
			continue
		}
		p := fmt.Sprintf("%s %s %s: %d conformant, %d nonconformant", l.Layer, l.Runtime.Name, l.Runtime.Version, l.Conformant, len(l.Nonconformant))
		if len(l.Nonconformant) > 0 {
			p += " (" + joinNames(l.Nonconformant) + ")"
		}
		if len(l.NotSupportedOnOS) > 0 {
			p += fmt.Sprintf(", %d not supported on this OS (%s)", len(l.NotSupportedOnOS), joinNames(l.NotSupportedOnOS))
		}
		if l.NotObserved > 0 {
			p += fmt.Sprintf(", %d not observed", l.NotObserved)
		}
		if len(l.Errors) > 0 {
			p += fmt.Sprintf(", %d error (%s)", len(l.Errors), joinNames(l.Errors))
		}
		if len(l.Unverified) > 0 {
			p += fmt.Sprintf(", %d unverified (%s)", len(l.Unverified), joinNames(l.Unverified))
		}
		if len(l.Blocked) > 0 {
			p += fmt.Sprintf(", %d blocked (%s)", len(l.Blocked), joinNames(l.Blocked))
		}
		if len(l.Probed) > 0 {
			p += fmt.Sprintf(", %d probed (%s)", len(l.Probed), joinNames(l.Probed))
		}
		if len(l.ProfileMismatches) > 0 {
			p += fmt.Sprintf(", profile mismatch: %s declared unsupported but works", joinNames(l.ProfileMismatches))
		}
		parts = append(parts, p)
	}
	parts = append(parts, fmt.Sprintf("specs: %d passed, %d failed, %d skipped", s.Specs.Passed, s.Specs.Failed, s.Specs.Skipped))
	code, verdict := framework.ExitConformant, "conformant"
	switch e := s.Expectations; {
	case len(s.RunErrors) > 0:
		code, verdict = framework.ExitRunFailed, fmt.Sprintf("RUN FAILED (%d errors of the run itself, no verdict; first: %s)", len(s.RunErrors), truncate(s.RunErrors[0], 200))
	case e != nil && e.Changed():
		var what []string
		if len(e.New) > 0 {
			what = append(what, fmt.Sprintf("%d new nonconformances: %s", len(e.New), truncate(strings.Join(e.New, ", "), 300)))
		}
		if len(e.Fixed) > 0 {
			what = append(what, fmt.Sprintf("%d fixed, to leave the expectation file: %s", len(e.Fixed), truncate(strings.Join(e.Fixed, ", "), 300)))
		}
		code, verdict = framework.ExitNonconformant, "CHANGED from expectations ("+strings.Join(what, "; ")+")"
	case e != nil:
		verdict = fmt.Sprintf("as expected: %d known deviations", len(e.Known))
		if len(e.Known) > 0 {
			var names []string
			for _, k := range e.Known {
				names = append(names, strings.SplitN(k, " (", 2)[0])
			}
			verdict += " (" + strings.Join(names, ", ") + ")"
		}
	case len(s.Nonconformances) > 0 || s.nonconformantCells() > 0:
		code, verdict = framework.ExitNonconformant, fmt.Sprintf("NONCONFORMANT (%d failed requirement checks)", max(len(s.Nonconformances), s.nonconformantCells()))
	}
	dir := relDir(s.ReportDir)
	if s.Probe != nil {
		// A probe judged only what every runtime must support: it is never
		// a conformance result, and says so first.
		what := "observed profile not written"
		if len(s.Probe.ObservedProfiles) > 0 {
			var files []string
			for _, f := range s.Probe.ObservedProfiles {
				files = append(files, relDir(f))
			}
			what = "observed profile in " + strings.Join(files, ", ")
			if len(s.Probe.Comparisons) > 0 {
				what += " (" + strings.Join(s.Probe.Comparisons, "; ") + ")"
			}
		}
		switch code {
		case framework.ExitConformant:
			code, verdict = framework.ExitProbed, "PROBE done, not a conformance result: only what every runtime must support was judged, and it conformed; "+what
		case framework.ExitNonconformant:
			verdict = "PROBE, not a conformance result: " + verdict + " in what every runtime must support; " + what
		default:
			verdict = "PROBE, not a conformance result: " + verdict
		}
	}
	line := fmt.Sprintf("ectest: %s; %s; reports in %s/ (exit %d)", verdict, strings.Join(parts, "; "), dir, code)
	for _, l := range s.Layers {
		if p, ok := selfTestFault(l.Runtime.Version); ok {
			what := "through the fault-injecting CRI proxy"
			if strings.HasPrefix(p, windowsPersonality) {
				what = fmt.Sprintf("through the CRI proxy's %s personality (Linux containerd playing containerd on Windows)", p)
			}
			line = "ectest: SELF-TEST " + what + ", not a conformance result: " + strings.TrimPrefix(line, "ectest: ")
			break
		}
	}
	return framework.Outcome{ExitCode: code, Line: line}
}

// relDir shortens a path below the working directory.
func relDir(dir string) string {
	if rel, err := filepath.Rel(".", dir); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return dir
}

func (s Summary) nonconformantCells() int {
	n := 0
	for _, l := range s.Layers {
		n += len(l.Nonconformant)
	}
	return n
}

// SummaryMarkdown renders the summary.
func SummaryMarkdown(s Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Run summary\n\n%s\n\n", s.Line)
	if s.Ectest != nil {
		fmt.Fprintf(&b, "Judged by ectest %s.\n\n", s.Ectest)
	}
	fmt.Fprintf(&b, "| layer | runtime | conformant | nonconformant | not supported on this OS | not observed | not applicable | probed |\n|---|---|---|---|---|---|---|---|\n")
	for _, l := range s.Layers {
		fmt.Fprintf(&b, "| %s | %s %s | %d | %d %s | %d %s | %d | %d | %d %s |\n", l.Layer, l.Runtime.Name, l.Runtime.Version, l.Conformant, len(l.Nonconformant), joinNames(l.Nonconformant),
			len(l.NotSupportedOnOS), joinNames(l.NotSupportedOnOS), l.NotObserved, l.NotApplicable, len(l.Probed), joinNames(l.Probed))
	}
	for _, l := range s.Layers {
		if l.Runtime.Note != "" {
			fmt.Fprintf(&b, "\nNote on the %s layer's runtime %s: %s.\n", l.Layer, l.Runtime.Name, l.Runtime.Note)
		}
	}
	if s.Probe != nil {
		fmt.Fprintf(&b, "\nA probe (-profile=probe): the capabilities every runtime must support were judged; the others were recorded, not judged (probed).\n")
		for _, f := range s.Probe.ObservedProfiles {
			fmt.Fprintf(&b, "Observed profile: `%s`.\n", f)
		}
		for _, c := range s.Probe.Comparisons {
			fmt.Fprintf(&b, "Compared: %s.\n", c)
		}
	}
	fmt.Fprintf(&b, "\nSpecs: %d passed, %d failed, %d skipped.\n", s.Specs.Passed, s.Specs.Failed, s.Specs.Skipped)
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		sorted := append([]string(nil), items...)
		sort.Strings(sorted)
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		for _, it := range sorted {
			fmt.Fprintf(&b, "- %s\n", it)
		}
	}
	if e := s.Expectations; e != nil {
		fmt.Fprintf(&b, "\nCompared with expectations: %s.\n", strings.Join(e.Files, "; "))
		list("Known deviations (expected, observed again)", e.Known)
		list("New nonconformances (not expected: the run changed)", e.New)
		list("Fixed (expected nonconformant, observed conformant: remove from the file)", e.Fixed)
		list("Expected deviations not judged in this run", e.Unchecked)
	}
	list("Nonconformances (a judge said no)", s.Nonconformances)
	list("Errors of the run itself (no verdict)", s.RunErrors)
	fmt.Fprintf(&b, "\nExit codes: 0 conformant, 1 nonconformant, 2 bad input, 3 the run could not be done, 4 a probe was done.\n")
	return b.String()
}

// WriteSummary writes summary.json and summary.md into dir.
func WriteSummary(dir string, s Summary) error {
	return writeJSONAndMarkdown(dir, framework.OutcomeFile, SummaryMDFile, s, SummaryMarkdown(s))
}

// ReadSummary reads a run's summary.json.
func ReadSummary(dir string) (Summary, error) {
	var s Summary
	return s, readJSON(dir, framework.OutcomeFile, &s)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 300)
}
