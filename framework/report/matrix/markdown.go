package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ectest/ectest/framework/capability"
)

// RanAgainst says what a cell ran against, one part per layer of its
// reports ("containerd 2.4.2, runc 1.5.2", with the runtime's note: what
// the project stood in for), or its configured description
// when it has no reports.
func (c Cell) RanAgainst() []string {
	// Layers that ran against the same runtime are one part, naming each
	// kubelet it met (a skew cell's workers: "kubelets v1.37.1, v1.34.10").
	var order []string
	kubelets := map[string][]string{}
	for _, lr := range c.Runtimes {
		rt := lr.Runtime
		s := strings.TrimSpace(rt.Name + " " + rt.Version)
		if rt.OCIRuntime != "" {
			s += ", " + rt.OCIRuntime
		}
		if rt.RuntimeClass != "" {
			s += ", RuntimeClass " + rt.RuntimeClass
		}
		// What the project stood in for (CRI-O's pinns) is part of what
		// the cell ran against.
		if rt.Note != "" {
			s += ", " + rt.Note
		}
		// A cluster layer names its kubelet: the cluster's, or one skew
		// worker's (layers "kubelet-<release>", whose reports give no OCI
		// runtime: they join the part of the same runtime name and version).
		kubelet := ""
		if (lr.Layer == capability.LayerCluster || strings.HasPrefix(string(lr.Layer), "kubelet-")) && strings.HasPrefix(rt.APIVersion, "kubelet ") {
			kubelet = strings.TrimPrefix(rt.APIVersion, "kubelet ")
		}
		if rt.OCIRuntime == "" {
			for _, o := range order {
				if strings.HasPrefix(o, s+",") {
					s = o
					break
				}
			}
		}
		if _, ok := kubelets[s]; !ok {
			order = append(order, s)
			kubelets[s] = nil
		}
		if kubelet != "" && !slices.Contains(kubelets[s], kubelet) {
			kubelets[s] = append(kubelets[s], kubelet)
		}
	}
	var out []string
	for _, s := range order {
		switch k := kubelets[s]; len(k) {
		case 0:
			out = append(out, s)
		case 1:
			out = append(out, s+", kubelet "+k[0])
		default:
			out = append(out, s+", kubelets "+strings.Join(k, ", "))
		}
	}
	if len(out) == 0 && c.Describe != "" {
		out = append(out, c.Describe)
	}
	return out
}

// WallTime is the cell's wall time ("3m12s"), with its prepare step's.
func (c Cell) WallTime() string {
	if !c.Ran || c.Seconds == 0 {
		return ""
	}
	s := Duration(c.Seconds)
	if c.PrepareSeconds >= 1 {
		s += " (+" + Duration(c.PrepareSeconds) + " prepare)"
	}
	return s
}

// Duration renders seconds as the page does: 45s, 3m12s, 1h02m.
func Duration(sec float64) string {
	d := time.Duration(sec * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// Failing lists a cell's rows that failed (nonconformant, error,
// unverified, blocked): the capabilities, and the requirement IDs no
// failed capability of the cell carries, each with why; the requirement
// IDs a failed capability carries are in Covered, which its why explains.
//
// A row whose why is the cell's own note (a cell that wrote no reports is
// an error in every row, for the one reason its note gives) is left out:
// the note says it once.
func (m Matrix) Failing(cell string) Failures {
	var f Failures
	note := ""
	for _, c := range m.Cells {
		if c.Name == cell {
			note = c.Note
		}
	}
	explained := map[string]bool{}
	for _, r := range m.Rows {
		res := r.Cells[cell]
		if !res.Status().Failed() || (note != "" && res.Why == note) {
			continue
		}
		if r.Kind == KindCapability {
			for _, id := range r.Requirements {
				explained[id] = true
			}
		}
		if r.Kind == KindRequirement && explained[r.ID] {
			f.Covered = append(f.Covered, FailingRow{Row: r, Result: res})
			continue
		}
		f.Rows = append(f.Rows, FailingRow{Row: r, Result: res})
	}
	return f
}

// Failures are a cell's failed rows (see Matrix.Failing).
type Failures struct {
	Rows    []FailingRow
	Covered []FailingRow
}

// Failed reports whether a status needs a look: nonconformant, error,
// unverified or blocked.
func (s Status) Failed() bool {
	return s == Nonconformant || s == Error || s == Unverified || s == Blocked
}

// FailingRow is one failed row of a cell.
type FailingRow struct {
	Row    Row
	Result Result
}

// Markdown renders the combined matrix: what changed first, the cells,
// the failing cells with why, then the heatmap as a table.
func Markdown(m Matrix) string {
	var b strings.Builder
	b.WriteString("# ectest matrix\n\n")
	fmt.Fprintf(&b, "%s\n\nGenerated %s. Page with the evidence: [%s](%s).\n\n", m.Line, m.Generated.Format(time.RFC3339), HTMLFile, HTMLFile)
	b.WriteString("## What changed since the previous run\n\n")
	switch {
	case m.Previous == nil:
		b.WriteString("No previous run (no " + PreviousJSONFile + "): nothing to compare with.\n")
	case len(m.Changes) == 0:
		fmt.Fprintf(&b, "Nothing changed since the run of %s.\n", m.Previous.Generated.Format(time.RFC3339))
	default:
		fmt.Fprintf(&b, "Since the run of %s:\n\n", m.Previous.Generated.Format(time.RFC3339))
		for _, c := range m.Changes {
			what := c.Cell
			if c.Row != "" {
				what += " · " + strings.Replace(c.Row, ":", " ", 1)
			}
			fmt.Fprintf(&b, "- **%s** %s: %s → %s", c.Direction, what, c.From, c.To)
			if c.Why != "" {
				fmt.Fprintf(&b, ": %s", mdEscape(c.Why))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n## Cells\n\n| cell | layer | ran against | exit | wall time | reports |\n|---|---|---|---|---|---|\n")
	for _, c := range m.Cells {
		exit := "not run: " + c.NotRun
		if c.Ran {
			exit = fmt.Sprintf("%d %s", c.ExitCode, c.Exit)
		}
		if c.SelfTest != "" {
			exit += " (SELF-TEST " + c.SelfTest + ")"
		}
		var links []string
		for _, r := range c.Reports {
			for _, l := range [][2]string{{"summary", r.Summary}, {"matrix", r.Matrix}} {
				if l[1] != "" {
					links = append(links, fmt.Sprintf("[%s](%s)", l[0], l[1]))
				}
			}
		}
		if c.Log != "" {
			links = append(links, fmt.Sprintf("[log](%s)", c.Log))
		}
		against := strings.Join(c.RanAgainst(), "; ")
		if len(c.Ectest) > 0 {
			against += "; judged by ectest " + strings.Join(c.Ectest, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.Name, c.Layer, mdEscape(against), mdEscape(exit), c.WallTime(), strings.Join(links, " "))
	}
	b.WriteString("\n## Failing cells\n")
	any := false
	for _, c := range m.Cells {
		if !c.Ran || c.ExitCode == 0 || c.ExitCode == 4 {
			continue
		}
		any = true
		fmt.Fprintf(&b, "\n### %s: exit %d (%s)\n\n", c.Name, c.ExitCode, c.Exit)
		if c.Note != "" {
			fmt.Fprintf(&b, "%s\n\n", mdEscape(c.Note))
		}
		if c.Line != "" {
			fmt.Fprintf(&b, "`%s`\n\n", c.Line)
		}
		f := m.Failing(c.Name)
		for _, r := range f.Rows {
			fmt.Fprintf(&b, "- %s %s: **%s**: %s\n", r.Row.Kind, r.Row.ID, r.Result.Text(), mdEscape(r.Result.Why))
		}
		if len(f.Covered) > 0 {
			var ids []string
			for _, r := range f.Covered {
				ids = append(ids, r.Row.ID+" ("+string(r.Result.Verdict)+")")
			}
			fmt.Fprintf(&b, "- requirement IDs of the capabilities above: %s\n", strings.Join(ids, ", "))
		}
	}
	if !any {
		b.WriteString("\nNone.\n")
	}
	b.WriteString("\n## Heatmap\n\n| |")
	for _, c := range m.Cells {
		fmt.Fprintf(&b, " %s |", c.Name)
	}
	b.WriteString("\n|---|")
	for range m.Cells {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	kind := ""
	for _, r := range m.Rows {
		if r.Kind != kind {
			kind = r.Kind
			fmt.Fprintf(&b, "| **%ss** |%s\n", kind, strings.Repeat(" |", len(m.Cells)))
		}
		fmt.Fprintf(&b, "| %s |", r.ID)
		for _, c := range m.Cells {
			res := r.Cells[c.Name]
			label := res.Status().Label()
			if res.Status().Failed() {
				label = "**" + label + "**"
			}
			fmt.Fprintf(&b, " %s |", label)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nLegend:")
	for _, s := range Statuses {
		fmt.Fprintf(&b, " `%s` %s;", s.Label(), s.Meaning())
	}
	b.WriteString("\n\nExit codes: 0 conformant, 1 nonconformant, 2 bad input, 3 the run could not be done, 4 a probe was done.\n")
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
