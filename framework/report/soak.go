package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
)

// SoakDiff is one thing that was not the same in every run of a flake
// campaign (make soak): a spec's verdict, a capability's cell or the exit
// code, with what each run said.
type SoakDiff struct {
	// What is "spec <full text>", "capability <name> (<layer> layer)" or
	// "exit code".
	What string `json:"what"`
	// Runs are what each run said, in run order ("passed", a verdict with
	// its reason, an exit code).
	Runs []string `json:"runs"`
	// Logs are the report folders of the runs that differ from what most
	// runs said (their logs and failure messages are there).
	Logs []string `json:"logs,omitempty"`
}

// Soak compares the runs of one flake campaign: runs of the same suite, on
// the same runtime, randomized. Nothing may differ: every spec with the
// same verdict (a spec absent from a run's judged list passed there),
// every capability with the same cell verdict, the same exit code.
func Soak(runs []Run) []SoakDiff {
	var diffs []SoakDiff
	add := func(what string, says func(Run) string) {
		var out []string
		for _, r := range runs {
			out = append(out, says(r))
		}
		// The runs that differ from what most runs said.
		count := map[string]int{}
		common := out[0]
		for _, s := range out {
			count[s]++
			if count[s] > count[common] {
				common = s
			}
		}
		var logs []string
		for i, s := range out {
			if s != common {
				logs = append(logs, runs[i].Dir)
			}
		}
		if len(logs) > 0 {
			diffs = append(diffs, SoakDiff{What: what, Runs: out, Logs: logs})
		}
	}
	add("exit code", func(r Run) string { return fmt.Sprint(r.ExitCode()) })
	specs := map[string]bool{}
	for _, r := range runs {
		for s := range r.Specs {
			specs[s] = true
		}
	}
	for _, s := range sortedKeys(specs) {
		add("spec "+s, func(r Run) string {
			v, ok := r.Specs[s]
			if !ok {
				return "passed"
			}
			if v.Verdict == capability.Conformant || v.Verdict == capability.NotObserved {
				return v.State
			}
			// The message is evidence, not the outcome: it names the
			// run's own namespaces and pods.
			return fmt.Sprintf("%s (%s)", v.Verdict, v.Why)
		})
	}
	cells := map[string]bool{}
	for _, r := range runs {
		if r.Matrix == nil {
			continue
		}
		for _, row := range r.Matrix.Rows {
			for l := range row.Layers {
				cells[string(row.Capability)+"\x00"+string(l)] = true
			}
		}
	}
	for _, k := range sortedKeys(cells) {
		n, l, _ := strings.Cut(k, "\x00")
		add(fmt.Sprintf("capability %s (%s layer)", n, l), func(r Run) string {
			return string(r.Cell(capability.Name(n), capability.Layer(l)).Verdict)
		})
	}
	return diffs
}

// SoakMarkdown is a flake campaign's report: each run's line, then what
// differed (nothing, for a steady suite).
func SoakMarkdown(title string, runs []Run, diffs []SoakDiff) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%d runs; %d things differed between them.\n\n| run | exit | line |\n|---|---|---|\n", title, len(runs), len(diffs))
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", filepath.Base(r.Dir), r.ExitCode(), strings.ReplaceAll(r.Summary.Line, "|", "/"))
	}
	if len(diffs) == 0 {
		b.WriteString("\nEvery run gave every spec and every capability the same verdict.\n")
		return b.String()
	}
	b.WriteString("\n## What differed\n")
	for _, d := range diffs {
		fmt.Fprintf(&b, "\n### %s\n\n", d.What)
		for i, s := range d.Runs {
			fmt.Fprintf(&b, "- run %d: %s\n", i+1, s)
		}
		fmt.Fprintf(&b, "\nlogs: %s\n", strings.Join(d.Logs, ", "))
	}
	return b.String()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
