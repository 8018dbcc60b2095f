package matrix

import (
	"bytes"
	_ "embed"
	"html/template"
	"strconv"
	"strings"
	"time"
)

//go:embed page.html.tmpl
var pageTemplate string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"evID":    EvidenceID,
	"colID":   ColumnID,
	"rowID":   func(r Row) string { return "row--" + r.Kind + "-" + r.ID },
	"time":    func(t time.Time) string { return t.Format("2006-01-02 15:04 UTC") },
	"rowName": func(key string) string { return strings.Replace(key, ":", " ", 1) },
	"rowID2": func(key string) string {
		return "row--" + strings.Replace(key, ":", "-", 1)
	},
	"evID2": func(cell, key string) string {
		k, id, _ := strings.Cut(key, ":")
		return EvidenceID(cell, Row{Kind: k, ID: id})
	},
	"shown": func(s Status) bool { return s != None && s != NotRun },
	"quiet": func(r Row) bool {
		for _, res := range r.Cells {
			if res.Status().Failed() {
				return false
			}
		}
		return true
	},
	"cellResult": func(r Row, c Cell) Result { return r.Cells[c.Name] },
	"join":       strings.Join,
	"add":        func(a, b int) int { return a + b },
	"exitClass": func(c Cell) string {
		if !c.Ran {
			return "exit-none"
		}
		return "exit-" + strconv.Itoa(c.ExitCode)
	},
	"kindTitle": func(k string) string {
		if k == KindCapability {
			return "Capabilities (the verdicts of the capability matrix)"
		}
		return "Requirement IDs (from the specs that name them)"
	},
	"statuses": func() []Status { return Statuses },
	"counts": func(m Matrix, c Cell) map[Status]int {
		out := map[Status]int{}
		for _, r := range m.Rows {
			out[r.Cells[c.Name].Status()]++
		}
		return out
	},
}).Parse(pageTemplate))

// ColumnID is the page's anchor of a cell's column header.
func ColumnID(cell string) string { return "col--" + cell }

// EvidenceID is the page's anchor of a row's evidence in a cell.
func EvidenceID(cell string, r Row) string { return "ev--" + cell + "--" + r.Kind + "-" + r.ID }

// HTML renders the page: self-contained (inline CSS, no external assets,
// readable without JavaScript), what changed first, then the failing cells
// with why, then the heatmap whose every cell links to its evidence.
func HTML(m Matrix) ([]byte, error) {
	var b bytes.Buffer
	err := page.Execute(&b, m)
	return b.Bytes(), err
}

// NotRunGroup is the cells that did not run for one reason.
type NotRunGroup struct {
	Why   string
	Cells []string
}

// NotRunGroups are the cells that did not run, grouped by why, in the
// cells' order: one line per reason ("not selected in this run") rather
// than the same reason once per cell.
func (m Matrix) NotRunGroups() []NotRunGroup {
	var out []NotRunGroup
	at := map[string]int{}
	for _, c := range m.Cells {
		if c.Ran {
			continue
		}
		i, ok := at[c.NotRun]
		if !ok {
			i = len(out)
			at[c.NotRun] = i
			out = append(out, NotRunGroup{Why: c.NotRun})
		}
		out[i].Cells = append(out[i].Cells, c.Name)
	}
	return out
}

// AnyFailing says whether a cell that ran did not pass (the page's
// "Failing cells at a glance" has a card for each).
func (m Matrix) AnyFailing() bool {
	for _, c := range m.Cells {
		if c.Ran && c.ExitCode != 0 && c.ExitCode != 4 {
			return true
		}
	}
	return false
}
