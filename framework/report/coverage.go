package report

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
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
	Requirements []RequirementCoverage `json:"requirements"`
}

// RequirementCoverage is one requirement with the specs that name it.
type RequirementCoverage struct {
	framework.Requirement
	Specs []CoveredBy `json:"specs"`
}

// CoveredBy is one spec that names a requirement.
type CoveredBy struct {
	Suite string `json:"suite"`
	Spec  string `json:"spec"`
	State string `json:"state"`
}

// ComputeCoverage builds the coverage of one suite's run.
func ComputeCoverage(r types.Report) Coverage {
	by := map[string][]CoveredBy{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		for _, id := range framework.RequirementIDs(s.FullText()) {
			by[id] = append(by[id], CoveredBy{Suite: r.SuiteDescription, Spec: s.FullText(), State: s.State.String()})
		}
	}
	return coverageOf(by)
}

// MergeCoverage puts several runs' coverage together.
func MergeCoverage(cs ...Coverage) Coverage {
	by := map[string][]CoveredBy{}
	for _, c := range cs {
		for _, r := range c.Requirements {
			by[r.ID] = append(by[r.ID], r.Specs...)
		}
	}
	return coverageOf(by)
}

// coverageOf lists every known requirement, in order, with its specs.
func coverageOf(by map[string][]CoveredBy) Coverage {
	var c Coverage
	for _, q := range framework.Requirements() {
		c.Requirements = append(c.Requirements, RequirementCoverage{Requirement: q, Specs: by[q.ID]})
	}
	return c
}

// Result counts a requirement's specs by how they ended: "3 passed, 1 skipped".
func (r RequirementCoverage) Result() string {
	if len(r.Specs) == 0 {
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
	return strings.Join(parts, ", ")
}

// CoverageMarkdown renders the coverage as a Markdown document.
func CoverageMarkdown(c Coverage) string {
	var b strings.Builder
	b.WriteString("# Requirement coverage\n\n| requirement | summary | specs |\n|---|---|---|\n")
	var uncovered []string
	for _, r := range c.Requirements {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.ID, r.Summary, r.Result())
		if len(r.Specs) == 0 {
			uncovered = append(uncovered, r.ID)
		}
	}
	if len(uncovered) > 0 {
		fmt.Fprintf(&b, "\nNot covered by this run: %s.\n", strings.Join(uncovered, ", "))
	}
	b.WriteString("\n## Specs by requirement\n")
	for _, r := range c.Requirements {
		if len(r.Specs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", r.ID)
		for _, s := range r.Specs {
			fmt.Fprintf(&b, "- %s: %s (%s)\n", s.State, s.Spec, s.Suite)
		}
	}
	return b.String()
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
