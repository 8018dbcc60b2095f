package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

// File names of the requirement coverage report.
const (
	CoverageJSONFile = "coverage.json"
	CoverageMDFile   = "coverage.md"
)

// Coverage says, for every known requirement, which specs of a run verify
// it and how each ended: a vendor sees what a green run covered and what it
// did not look at.
type Coverage struct {
	// Layers are the suites (by their layer) the coverage is of: a
	// requirement only another suite's specs name is that suite's, not
	// uncovered (none known: every requirement without specs is uncovered).
	Layers       []capability.Layer    `json:"layers,omitempty"`
	Requirements []RequirementCoverage `json:"requirements"`
}

// RequirementCoverage is one requirement with the specs that name it.
type RequirementCoverage struct {
	framework.Requirement
	Specs []CoveredBy `json:"specs"`
	// OtherSuites names, for a requirement this run had no spec for, the
	// suites whose specs verify it when none of them was part of the run
	// (framework.RequirementLayers): WIN-4 is the cluster suite's.
	OtherSuites []capability.Layer `json:"otherSuites,omitempty"`
}

// CoveredBy is one spec that names a requirement.
type CoveredBy struct {
	Suite string `json:"suite"`
	Spec  string `json:"spec"`
	// State is how the spec ended, or "not exercised on a <os> node" when
	// the spec ran but could not verify this requirement there (see
	// ComputeCoverage).
	State string `json:"state"`
	// SelfTest names the CRI proxy's fault or personality when the run was
	// a self-test (the runtime's version carries its marker): what it
	// verified, it verified against no real runtime.
	SelfTest string `json:"selfTest,omitempty"`
}

// notExercised is the state of a requirement a spec names but did not
// exercise on its run's node.
func notExercised(os string) string { return "not exercised on a " + os + " node" }

// RequirementOS is the node OS a requirement is about ("" for every OS):
// the WIN-* requirements and STORY-WIN are about Windows nodes.
func RequirementOS(id string) string {
	if strings.HasPrefix(id, "WIN-") || strings.HasSuffix(id, "-WIN") {
		return "windows"
	}
	return ""
}

// ComputeCoverage builds the coverage of one suite's run against rt (the
// zero value when the run never reached a runtime). A spec covers the
// requirements it names, with two exceptions, each recorded as "not
// exercised on a <os> node": a requirement about another OS than the
// node's (WIN-* on Linux; the node a spec says it exercised, when it says
// so with framework.RecordNodeOS), and, when every observation the spec recorded
// is of its capabilities being absent on the node's OS (Windows' branch
// of the PID specs), the named requirements those observations do not
// carry (CRI-2 on Windows: the spec verified WIN-2 there, not CRI-2).
func ComputeCoverage(r types.Report, rt capability.RuntimeInfo, layers []capability.Layer) Coverage {
	fault, _ := SelfTest(capability.Matrix{Runtime: rt})
	by := map[string][]CoveredBy{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		absentOnly, carried := absentObservations(s)
		nodeOS := rt.OS
		if os := framework.SpecNodeOS(s); os != "" {
			nodeOS = os
		}
		for _, id := range framework.RequirementIDs(s.FullText()) {
			c := CoveredBy{Suite: r.SuiteDescription, Spec: s.FullText(), State: s.State.String(), SelfTest: fault}
			switch {
			case rt.OS == "":
			case RequirementOS(id) != "" && RequirementOS(id) != nodeOS:
				c.State = notExercised(nodeOS)
			case absentOnly && !carried[id]:
				c.State = notExercised(rt.OS)
			}
			by[id] = append(by[id], c)
		}
	}
	return coverageOf(by, layers)
}

// absentObservations reports whether a spec recorded observations and all
// are of capabilities absent on the node's OS, and the requirement IDs
// they carry.
func absentObservations(s types.SpecReport) (absentOnly bool, carried map[string]bool) {
	carried = map[string]bool{}
	n := 0
	for _, e := range s.ReportEntries {
		if e.Name != capability.ReportEntryName {
			continue
		}
		var o capability.Observation
		raw, err := json.Marshal(e.Value.GetRawValue())
		if err != nil || json.Unmarshal(raw, &o) != nil {
			continue
		}
		if o.Outcome != capability.NotOnOS {
			return false, nil
		}
		n++
		for _, id := range o.Requirements {
			carried[id] = true
		}
	}
	return n > 0, carried
}

// MergeCoverage puts several runs' coverage together.
func MergeCoverage(cs ...Coverage) Coverage {
	by := map[string][]CoveredBy{}
	var layers []capability.Layer
	for _, c := range cs {
		for _, r := range c.Requirements {
			by[r.ID] = append(by[r.ID], r.Specs...)
		}
		for _, l := range c.Layers {
			if !slices.Contains(layers, l) {
				layers = append(layers, l)
			}
		}
	}
	return coverageOf(by, layers)
}

// coverageOf lists every known requirement, in order, with its specs, and
// for one without specs whose suites are all outside layers, those suites.
func coverageOf(by map[string][]CoveredBy, layers []capability.Layer) Coverage {
	c := Coverage{Layers: layers}
	for _, q := range framework.Requirements() {
		rc := RequirementCoverage{Requirement: q, Specs: by[q.ID]}
		if own := framework.RequirementLayers(q.ID); len(rc.Specs) == 0 && len(layers) > 0 && len(own) > 0 {
			other := true
			for _, l := range own {
				other = other && !slices.Contains(layers, l)
			}
			if other {
				rc.OtherSuites = own
			}
		}
		c.Requirements = append(c.Requirements, rc)
	}
	return c
}

// Verified reports whether a spec judged the requirement (it passed, or
// failed with its judge's verdict).
func (c CoveredBy) Verified() bool { return c.State == "passed" || c.State == "failed" }

// SelfTestOnly names the self-tests (the CRI proxy's faults or
// personalities) that verified the requirement, when no run against a real
// runtime did; nil otherwise.
func (r RequirementCoverage) SelfTestOnly() []string {
	seen := map[string]bool{}
	for _, s := range r.Specs {
		if !s.Verified() {
			continue
		}
		if s.SelfTest == "" {
			return nil
		}
		seen[s.SelfTest] = true
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// NotExercised reports whether specs name the requirement but none could
// exercise it on its run's node (WIN-* against Linux).
func (r RequirementCoverage) NotExercised() bool {
	if len(r.Specs) == 0 {
		return false
	}
	for _, s := range r.Specs {
		if !strings.HasPrefix(s.State, "not exercised") {
			return false
		}
	}
	return true
}

// Result counts a requirement's specs by how they ended: "3 passed, 1 skipped".
func (r RequirementCoverage) Result() string {
	if len(r.Specs) == 0 {
		if len(r.OtherSuites) > 0 {
			return "the " + suiteNames(r.OtherSuites) + " suite's: not part of this run"
		}
		return "not covered"
	}
	counts := map[string]int{}
	var order []string
	for _, s := range r.Specs {
		if counts[s.State] == 0 {
			order = append(order, s.State)
		}
		counts[s.State]++
	}
	var parts []string
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	out := strings.Join(parts, ", ")
	if st := r.SelfTestOnly(); len(st) > 0 {
		out += " (self-test only: " + strings.Join(st, ", ") + ")"
	}
	return out
}

// CoverageMarkdown renders the coverage as a Markdown document.
func CoverageMarkdown(c Coverage) string {
	var b strings.Builder
	b.WriteString("# Requirement coverage\n\n| requirement | summary | specs |\n|---|---|---|\n")
	var uncovered, selfTestOnly, notExercisedHere []string
	otherSuites := map[string][]string{}
	var otherOrder []string
	for _, r := range c.Requirements {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.ID, r.Summary, r.Result())
		switch {
		case len(r.Specs) == 0 && len(r.OtherSuites) > 0:
			k := suiteNames(r.OtherSuites)
			if otherSuites[k] == nil {
				otherOrder = append(otherOrder, k)
			}
			otherSuites[k] = append(otherSuites[k], r.ID)
		case len(r.Specs) == 0:
			uncovered = append(uncovered, r.ID)
		case r.NotExercised():
			notExercisedHere = append(notExercisedHere, r.ID)
		case len(r.SelfTestOnly()) > 0:
			selfTestOnly = append(selfTestOnly, fmt.Sprintf("%s (%s)", r.ID, strings.Join(r.SelfTestOnly(), ", ")))
		}
	}
	if len(uncovered) > 0 {
		fmt.Fprintf(&b, "\nNot covered by this run: %s.\n", strings.Join(uncovered, ", "))
	}
	for _, k := range otherOrder {
		fmt.Fprintf(&b, "\nVerified by the %s suite, which was not part of this run: %s.\n", k, strings.Join(otherSuites[k], ", "))
	}
	if len(notExercisedHere) > 0 {
		fmt.Fprintf(&b, "\nNamed by specs but not exercised on this run's node OS (WIN-* and STORY-WIN need a Windows node, or make windows-selftest; the Linux namespace modes a Linux node): %s.\n", strings.Join(notExercisedHere, ", "))
	}
	if len(selfTestOnly) > 0 {
		fmt.Fprintf(&b, "\nVerified only through a self-test of the suite (the CRI proxy's fault or personality in parentheses), never against a real runtime: %s.\n", strings.Join(selfTestOnly, ", "))
	}
	b.WriteString("\n## Specs by requirement\n")
	for _, r := range c.Requirements {
		if len(r.Specs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", r.ID)
		for _, s := range r.Specs {
			selfTest := ""
			if s.SelfTest != "" {
				selfTest = ", SELF-TEST " + s.SelfTest
			}
			fmt.Fprintf(&b, "- %s: %s (%s%s)\n", s.State, s.Spec, s.Suite, selfTest)
		}
	}
	return b.String()
}

// suiteNames names suites by their layers: "cluster", "cri or cluster".
func suiteNames(ls []capability.Layer) string {
	var out []string
	for _, l := range ls {
		out = append(out, string(l))
	}
	return strings.Join(out, " or ")
}

// WriteCoverage writes coverage.json and coverage.md into dir.
func WriteCoverage(dir string, c Coverage) error {
	return writeJSONAndMarkdown(dir, CoverageJSONFile, CoverageMDFile, c, CoverageMarkdown(c))
}

// ReadCoverage reads a run's coverage.json from its report directory.
func ReadCoverage(dir string) (Coverage, error) {
	var c Coverage
	return c, readJSON(dir, CoverageJSONFile, &c)
}
