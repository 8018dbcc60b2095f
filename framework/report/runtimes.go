package report

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/framework/capability"
)

// RuntimeFiles are make runtimes' combined reports.
const (
	RuntimesJSONFile = "runtimes.json"
	RuntimesMDFile   = "runtimes.md"
)

// RuntimeColumn is one runtime's CRI-suite run in make runtimes' table.
type RuntimeColumn struct {
	Name      string                 `json:"name"`
	Ran       bool                   `json:"ran"`
	Reason    string                 `json:"reason,omitempty"`
	Runtime   capability.RuntimeInfo `json:"runtime"`
	Profile   string                 `json:"profile,omitempty"`
	ExitCode  int                    `json:"exitCode"`
	ReportDir string                 `json:"reportDir"`
	// Cells are the CRI layer's verdicts and what was observed, by capability.
	Cells map[capability.Name]capability.Cell `json:"cells,omitempty"`
}

// RuntimesTable reads each runtime's report directory (ReadRun). A runtime
// whose run wrote no matrix (it could not be started) is "not run", with
// the reason its summary gives, never nonconformant.
func RuntimesTable(names, dirs []string) []RuntimeColumn {
	var out []RuntimeColumn
	for i, name := range names {
		col := RuntimeColumn{Name: name, ReportDir: dirs[i]}
		run, err := ReadRun(dirs[i])
		switch {
		case err != nil:
			col.Reason = "the suite wrote no reports (see its log)"
		case run.Matrix == nil || len(run.Matrix.Rows) == 0:
			col.Reason = "the runtime did not come up"
			if len(run.Summary.RunErrors) > 0 {
				col.Reason = run.Summary.RunErrors[0]
			}
		default:
			col.Ran, col.Runtime, col.Profile, col.ExitCode = true, run.Matrix.Runtime, run.Matrix.Profile, run.ExitCode()
			col.Cells = map[capability.Name]capability.Cell{}
			for _, r := range run.Matrix.Rows {
				col.Cells[r.Capability] = r.Layers[capability.LayerCRI]
			}
		}
		out = append(out, col)
	}
	return out
}

// RuntimesMarkdown renders the table: runtimes as columns, capabilities as
// rows, each nonconformance linked to its evidence in the runtime's matrix.md.
func RuntimesMarkdown(cols []RuntimeColumn, outDir string) string {
	var b strings.Builder
	b.WriteString("# Runtimes: the CRI suite against every embedded runtime\n\n")
	b.WriteString("| capability |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.Name)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n| runtime |")
	for _, c := range cols {
		if c.Ran {
			fmt.Fprintf(&b, " %s %s |", c.Runtime.Name, c.Runtime.Version)
		} else {
			fmt.Fprintf(&b, " not run: %s |", mdEscape(truncate(c.Reason, 160)))
		}
	}
	b.WriteString("\n| stack |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", mdEscape(c.Runtime.Stack()))
	}
	b.WriteString("\n")
	for _, def := range capability.All() {
		fmt.Fprintf(&b, "| %s |", def.Name)
		for _, c := range cols {
			if !c.Ran {
				fmt.Fprintf(&b, " %s |", capability.NotRun.Text())
				continue
			}
			cell := c.Cells[def.Name]
			v := verdictText(def.Name, cell)
			if cell.Verdict == capability.Nonconformant || cell.Verdict == capability.VerdictError {
				rel, err := filepath.Rel(outDir, filepath.Join(c.ReportDir, MatrixMDFile))
				if err != nil {
					rel = filepath.Join(c.ReportDir, MatrixMDFile)
				}
				v = fmt.Sprintf("**[%s](%s)**: %s", v, rel, mdEscape(strings.Join(cell.Observed, "; ")))
			}
			fmt.Fprintf(&b, " %s |", v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WriteRuntimes writes runtimes.json and runtimes.md into dir.
func WriteRuntimes(dir string, cols []RuntimeColumn) error {
	return writeJSONAndMarkdown(dir, RuntimesJSONFile, RuntimesMDFile, struct {
		Runtimes []RuntimeColumn `json:"runtimes"`
	}{cols}, RuntimesMarkdown(cols, dir))
}
