package matrix

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
)

// source is one suite run's report folder inside a cell's folder, as
// report.ReadRun reads it.
type source struct {
	report.Run
	rel string
}

// maxText bounds the evidence and messages a page carries per item; the
// cell's own reports have all of it.
const maxText = 3000

func readSource(dir, pageDir string) (source, error) {
	r, err := report.ReadRun(dir)
	return source{Run: r, rel: rel(pageDir, dir)}, err
}

// ReadCell reads one cell's folder into its column and its results by row
// key. A cell the configuration skips, or whose folder is absent, did not
// run; a cell that ran and wrote no reports is an error in every row.
func ReadCell(cfg CellConfig, dir, pageDir string) (Cell, map[string]Result) {
	cell := Cell{Name: cfg.Name, Layer: cfg.Layer, Describe: cfg.Describe, Command: cfg.Command}
	notRun := func(why string) (Cell, map[string]Result) {
		cell.NotRun = why
		return cell, uniform(Result{Verdict: capability.NotRun, Why: why})
	}
	if cfg.Skip != "" {
		return notRun(cfg.Skip)
	}
	if _, err := os.Stat(dir); err != nil {
		if cfg.Host != "" {
			return notRun("runs on a " + cfg.Host + " host only (the nightly workflow's " + cfg.Host + " job), and no folder of it is here")
		}
		return notRun("no folder of its own in " + rel(pageDir, filepath.Dir(dir)) + ": not run (not selected, or its CI job uploaded nothing)")
	}
	run, err := ReadCellRun(dir)
	if err != nil {
		return notRun(err.Error())
	}
	if run != nil {
		if run.NotRun != "" {
			return notRun(run.NotRun)
		}
		cell.Started, cell.Seconds, cell.PrepareSeconds = run.Started, run.Seconds, run.PrepareSeconds
		if run.Command != "" {
			cell.Command = run.Command
		}
	}
	cell.Ran = true
	log := readLog(dir, CellLogFile, &cell.Log, pageDir)
	if run != nil && run.PrepareFailed {
		log = readLog(dir, PrepareLogFile, &cell.PrepareLog, pageDir)
	} else if _, err := os.Stat(filepath.Join(dir, PrepareLogFile)); err == nil {
		cell.PrepareLog = rel(pageDir, filepath.Join(dir, PrepareLogFile))
	}
	var srcs []source
	var sums []report.Summary
	for _, d := range report.RunDirs(dir) {
		s, err := readSource(d, pageDir)
		if err != nil {
			continue
		}
		srcs, sums = append(srcs, s), append(sums, s.Summary)
	}
	cell.ExitCode, cell.Note = CellExit(run, log, sums)
	cell.Exit = ExitText(cell.ExitCode)
	if len(sums) > 0 && report.MergeSummaries("", sums...).Expectations != nil {
		// Compared with expectation files: 0 is "as expected", never
		// "conformant", and 1 "changed".
		switch cell.ExitCode {
		case framework.ExitConformant:
			cell.Exit = ExitAsExpected
		case framework.ExitNonconformant:
			cell.Exit = ExitChanged
		}
	}
	if len(srcs) == 0 {
		return cell, uniform(Result{Verdict: capability.VerdictError, Why: cell.Note})
	}
	merged := report.MergeSummaries("", sums...)
	cell.Line, cell.Specs = merged.Line, merged.Specs
	cell.Nonconformances, cell.RunErrors = merged.Nonconformances, merged.RunErrors
	cell.Probe = merged.Probe != nil
	results := map[string]Result{}
	for _, s := range srcs {
		cell.Reports = append(cell.Reports, links(s.Dir, pageDir))
		label := ""
		if len(srcs) > 1 {
			label = s.rel
		}
		if m := s.Matrix; m != nil {
			if fault, ok := report.SelfTest(*m); ok {
				cell.SelfTest = fault
			}
			if m.Ectest != nil && !slices.Contains(cell.Ectest, m.Ectest.String()) {
				cell.Ectest = append(cell.Ectest, m.Ectest.String())
			}
			for _, l := range m.Layers {
				rt, ok := m.LayerRuntimes[l]
				if !ok {
					rt = m.Runtime
				}
				cell.Runtimes = append(cell.Runtimes, LayerRuntime{Layer: l, Runtime: rt, Profile: m.Profile})
				for _, row := range m.Rows {
					key := KindCapability + ":" + string(row.Capability)
					results[key] = mergeResult(results[key], capabilityResult(row.Capability, row.Layers[l], l, label))
				}
			}
		}
		for _, q := range framework.Requirements() {
			key := KindRequirement + ":" + q.ID
			results[key] = mergeResult(results[key], requirementResult(s, q.ID, label))
		}
	}
	return cell, results
}

// uniform gives every row the same result (a cell that did not run, or
// wrote no reports).
func uniform(r Result) map[string]Result {
	out := map[string]Result{}
	for _, row := range emptyRows() {
		out[row.Key()] = r
	}
	return out
}

func readLog(dir, file string, link *string, pageDir string) string {
	p := filepath.Join(dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	*link = rel(pageDir, p)
	return string(b)
}

func links(dir, pageDir string) ReportLinks {
	l := ReportLinks{Dir: rel(pageDir, dir)}
	for file, to := range map[string]*string{report.SummaryMDFile: &l.Summary, report.MatrixMDFile: &l.Matrix, report.CoverageMDFile: &l.Coverage} {
		if _, err := os.Stat(filepath.Join(dir, file)); err == nil {
			*to = rel(pageDir, filepath.Join(dir, file))
		}
	}
	return l
}

// mergeResult puts a cell's results for one row from several layers or
// report folders together: the worst observed status wins, the evidence
// of all is kept.
func mergeResult(a, b Result) Result {
	if a.Verdict == "" {
		return b
	}
	out := a
	if b.Status().mergeRank() > a.Status().mergeRank() {
		out.Verdict, out.Refused, out.ProfileMismatch, out.BlockedBy, out.Why = b.Verdict, b.Refused, b.ProfileMismatch, b.BlockedBy, b.Why
	}
	out.Observations = append(slices.Clip(a.Observations), b.Observations...)
	out.Specs = append(slices.Clip(a.Specs), b.Specs...)
	return out
}

// capabilityResult reads one capability's cell at one layer.
func capabilityResult(n capability.Name, c capability.Cell, l capability.Layer, source string) Result {
	r := Result{Verdict: c.Verdict, ProfileMismatch: c.ProfileMismatch && c.Verdict == capability.Conformant}
	switch c.Verdict {
	case "":
		r.Verdict = capability.NotObserved
	case capability.Conformant:
		r.Refused = refusedAsDeclared(c)
	case capability.VerdictBlocked:
		r.BlockedBy = c.BlockedBy(n)
	}
	for _, o := range c.Observations {
		e := Evidence{Source: source, Layer: string(l), Case: o.Case, Observed: o.Observed, Verdict: o.Verdict, Reason: o.Reason}
		if o.Verdict != capability.Conformant {
			e.Text = clip(o.Evidence)
		}
		r.Observations = append(r.Observations, e)
	}
	for _, s := range c.Specs {
		r.Specs = append(r.Specs, SpecRun{Source: source, Name: s.Name, State: s.State})
	}
	r.Why = capabilityWhy(r, c)
	return r
}

// capabilityWhy is one line: the observation behind the verdict.
func capabilityWhy(r Result, c capability.Cell) string {
	if want := r.Verdict; want == capability.Nonconformant || want == capability.VerdictError || want == capability.VerdictBlocked || want == capability.VerdictProbed {
		for _, o := range c.Observations {
			if o.Verdict == want {
				what := o.Observed
				if o.Case != "" {
					what = o.Case + ": " + what
				}
				return what + " (" + o.Reason + ")"
			}
		}
	}
	switch {
	case len(c.Observed) > 0:
		return strings.Join(c.Observed, "; ")
	case len(c.Reasons) > 0:
		return strings.Join(c.Reasons, "; ")
	}
	return ""
}

// refusedAsDeclared: every observation is a refusal of what the profile
// declares unsupported, which is conformant and means "not supported".
func refusedAsDeclared(c capability.Cell) bool {
	if len(c.Observations) == 0 {
		return false
	}
	for _, o := range c.Observations {
		if o.Outcome != capability.Refused || o.Declared != capability.Unsupported {
			return false
		}
	}
	return true
}

// requirementResult reads one requirement in one report folder from the
// specs that name it: a judge's no is nonconformant, any other failure an
// error, a pass conformant (probed in a probe), specs that could not
// exercise it on the node's OS not supported, and skips not observed.
func requirementResult(s source, id, label string) Result {
	var specs []SpecRun
	add := func(name, state string) {
		sr := SpecRun{Source: label, Name: name, State: state}
		// A spec that could not exercise this requirement on the node's OS
		// (WIN-* on Linux) says nothing of it, whatever its judges said of
		// the others it names: its message and "no" are not this row's.
		if strings.HasPrefix(state, "not exercised") {
			specs = append(specs, sr)
			return
		}
		if sv, ok := s.Specs[name]; ok {
			sr.Message, sr.Verdict = clip(sv.Message), sv.Verdict
		}
		specs = append(specs, sr)
	}
	switch {
	case s.Coverage != nil:
		for _, q := range s.Coverage.Requirements {
			if q.ID == id {
				for _, c := range q.Specs {
					add(c.Spec, c.State)
				}
			}
		}
	default:
		names := make([]string, 0, len(s.Specs))
		for name := range s.Specs {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if slices.Contains(framework.RequirementIDs(name), id) {
				add(name, s.Specs[name].State)
			}
		}
	}
	r := Result{Specs: specs}
	if len(specs) == 0 {
		r.Verdict = capability.NotCovered
		return r
	}
	counts := map[string]int{}
	var firstNo, firstErr, firstSkip, firstNotHere *SpecRun
	for i := range specs {
		sp := &specs[i]
		counts[sp.State]++
		switch {
		case sp.JudgeSaidNo():
			if firstNo == nil {
				firstNo = sp
			}
		case sp.State == "passed":
		case sp.State == "skipped" || sp.State == "pending":
			if firstSkip == nil {
				firstSkip = sp
			}
		case strings.HasPrefix(sp.State, "not exercised"):
			if firstNotHere == nil {
				firstNotHere = sp
			}
		default:
			if firstErr == nil {
				firstErr = sp
			}
		}
	}
	tally := tallyStates(specs)
	switch {
	case firstNo != nil:
		r.Verdict, r.Why = capability.Nonconformant, firstLine(firstNo.Message, firstNo.Name)
	case firstErr != nil:
		r.Verdict, r.Why = capability.VerdictError, firstErr.State+": "+firstLine(firstErr.Message, firstErr.Name)
	case counts["passed"] > 0 && s.Summary.Probe != nil:
		r.Verdict, r.Why = capability.VerdictProbed, tally
	case counts["passed"] > 0:
		r.Verdict, r.Why = capability.Conformant, tally
	case firstNotHere != nil && firstSkip == nil:
		r.Verdict, r.Why = capability.NotSupportedOnOS, tally
	default:
		r.Verdict = capability.NotObserved
		r.Why = tally
		if firstSkip != nil && firstSkip.Message != "" {
			r.Why = "skipped: " + firstLine(firstSkip.Message, "")
		}
	}
	return r
}

// tallyStates counts specs by how they ended: "3 passed, 1 skipped".
func tallyStates(specs []SpecRun) string {
	counts := map[string]int{}
	var order []string
	for _, s := range specs {
		if counts[s.State] == 0 {
			order = append(order, s.State)
		}
		counts[s.State]++
	}
	var parts []string
	for _, st := range order {
		n := counts[st]
		word := "spec"
		if n > 1 {
			word = "specs"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", n, word, st))
	}
	return strings.Join(parts, ", ")
}

func firstLine(s, fallback string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := strings.TrimSpace(lines[0])
	if out == "" {
		return fallback
	}
	// The judges' messages say what they judged on the first line and
	// what they observed on an indented "observed:" line below it.
	if strings.HasSuffix(out, ":") {
		for _, l := range lines[1:] {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "observed:") {
				out += " " + t
				break
			}
		}
	}
	if len(out) > 300 {
		out = out[:297] + "..."
	}
	return out
}

func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	return s[:maxText] + fmt.Sprintf("\n... (%d more bytes in the cell's reports)", len(s)-maxText)
}

// rel is path relative to the page's folder, with forward slashes (a link).
func rel(pageDir, path string) string {
	r, err := filepath.Rel(pageDir, path)
	if err != nil {
		r = path
	}
	return filepath.ToSlash(r)
}

// emptyRows are the page's rows, without results: every capability, then
// every requirement ID, in the order of their definitions.
func emptyRows() []Row {
	var rows []Row
	for _, d := range capability.All() {
		rows = append(rows, Row{Kind: KindCapability, ID: string(d.Name), Summary: d.Summary, Requirements: d.Requirements, Cells: map[string]Result{}})
	}
	for _, q := range framework.Requirements() {
		rows = append(rows, Row{Kind: KindRequirement, ID: q.ID, Summary: q.Summary, Cells: map[string]Result{}})
	}
	return rows
}

// Combine reads the cells' folders (cellsDir/<name>) into the combined
// matrix, the cells in the configuration's order. With extra, folders in
// cellsDir that the configuration does not name are added after them (a
// CI job's cell the configuration here lacks). pageDir is where the page
// goes: its links are relative to it.
func Combine(cells []CellConfig, cellsDir, pageDir string, extra bool, now time.Time) Matrix {
	m := Matrix{Format: Format, Generated: now.UTC().Truncate(time.Second), Rows: emptyRows(), Changes: []Change{}}
	known := map[string]bool{}
	all := append([]CellConfig(nil), cells...)
	for _, c := range cells {
		known[c.Name] = true
	}
	if extra {
		entries, _ := os.ReadDir(cellsDir)
		for _, e := range entries {
			if !e.IsDir() || known[e.Name()] {
				continue
			}
			c := CellConfig{Name: e.Name(), Describe: "a cell folder the configuration does not name"}
			if run, err := ReadCellRun(filepath.Join(cellsDir, e.Name())); err == nil && run != nil {
				c.Layer, c.Command = run.Layer, run.Command
			}
			all = append(all, c)
		}
	}
	for _, c := range all {
		cell, results := ReadCell(c, filepath.Join(cellsDir, c.Name), pageDir)
		if cell.Layer == "" && len(cell.Runtimes) > 0 {
			cell.Layer = string(cell.Runtimes[0].Layer)
		}
		m.Cells = append(m.Cells, cell)
		for i := range m.Rows {
			r, ok := results[m.Rows[i].Key()]
			if !ok || r.Verdict == "" {
				r = Result{Verdict: capability.NotCovered}
			}
			m.Rows[i].Cells[c.Name] = r
		}
	}
	m.ExitCode, m.Line = outcome(m.Cells, pageDir)
	return m
}

// outcome is the matrix's exit code and last line: the worst cell's code
// (bad input, then run errors, then nonconformance, then a probe), 3 when
// no cell ran.
func outcome(cells []Cell, pageDir string) (int, string) {
	rank := map[int]int{framework.ExitConformant: 0, framework.ExitProbed: 1, framework.ExitNonconformant: 2, framework.ExitRunFailed: 3, framework.ExitBadInput: 4}
	by := map[string][]string{}
	code, ran := 0, 0
	for _, c := range cells {
		if !c.Ran {
			by["not run"] = append(by["not run"], c.Name)
			continue
		}
		ran++
		by[c.Exit] = append(by[c.Exit], c.Name)
		if rank[c.ExitCode] > rank[code] {
			code = c.ExitCode
		}
	}
	if ran == 0 {
		code = framework.ExitRunFailed
	}
	var parts []string
	for _, k := range []string{"conformant", ExitAsExpected, "nonconformant", ExitChanged, "run error", "bad input", "probe done", "not run"} {
		if names := by[k]; len(names) > 0 {
			if k == "conformant" || k == ExitAsExpected {
				parts = append(parts, fmt.Sprintf("%d %s", len(names), k))
			} else {
				parts = append(parts, fmt.Sprintf("%d %s (%s)", len(names), k, strings.Join(names, ", ")))
			}
		}
	}
	page := filepath.Join(pageDir, HTMLFile)
	if r, err := filepath.Rel(".", page); err == nil && !strings.HasPrefix(r, "..") {
		page = r
	}
	verdict := ExitText(code)
	switch {
	case code == framework.ExitConformant && len(by[ExitAsExpected]) > 0:
		verdict = ExitAsExpected
	case code == framework.ExitNonconformant && len(by[ExitChanged]) > 0:
		verdict = "changed"
		if len(by["nonconformant"]) > 0 {
			verdict = "nonconformant or changed"
		}
	}
	if ran == 0 {
		verdict = "no cell ran"
	}
	return code, fmt.Sprintf("ectest: matrix %s; %d cells: %s; page %s (exit %d)", strings.ToUpper(verdict), len(cells), strings.Join(parts, ", "), page, code)
}
