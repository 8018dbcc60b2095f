package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/internal/atomicfile"
)

// Change directions.
const (
	Worse   = "worse"
	Better  = "better"
	Changed = "changed"
	New     = "new"
	Gone    = "gone"
)

// Diff lists what changed from prev to cur, worst first: a cell's exit (or
// whether it ran), then each row whose status changed in a cell that ran
// both times. A cell that is new, gone, or ran only one of the two times
// is one change, not one per row.
func Diff(prev, cur Matrix) []Change {
	out := []Change{}
	prevCells := map[string]Cell{}
	for _, c := range prev.Cells {
		prevCells[c.Name] = c
	}
	prevRows := map[string]Row{}
	for _, r := range prev.Rows {
		prevRows[r.Key()] = r
	}
	curCells := map[string]bool{}
	for _, c := range cur.Cells {
		curCells[c.Name] = true
		p, ok := prevCells[c.Name]
		if !ok {
			out = append(out, Change{Cell: c.Name, From: "absent", To: cellState(c), Direction: New, Why: cellWhy(c)})
			continue
		}
		if cellState(p) != cellState(c) {
			dir := Changed
			switch pb, cb := cellBadness(p), cellBadness(c); {
			case cb > pb:
				dir = Worse
			case cb < pb:
				dir = Better
			}
			out = append(out, Change{Cell: c.Name, From: cellState(p), To: cellState(c), Direction: dir, Why: cellWhy(c)})
		}
		if !p.Ran || !c.Ran {
			continue
		}
		for _, r := range cur.Rows {
			now := r.Cells[c.Name]
			pr, ok := prevRows[r.Key()]
			if !ok {
				continue
			}
			was, ok := pr.Cells[c.Name]
			// Compared by the page's colour: a previous page of the format
			// before verdicts (ReadMatrix) knows only that.
			if !ok || was.Status() == now.Status() {
				continue
			}
			dir := Changed
			switch {
			case now.Status().badness() > was.Status().badness():
				dir = Worse
			case now.Status().badness() < was.Status().badness():
				dir = Better
			}
			why := now.Why
			if why == "" {
				why = was.Why
			}
			out = append(out, Change{Cell: c.Name, Row: r.Key(), From: was.Text(), To: now.Text(), Direction: dir, Why: why})
		}
	}
	for _, c := range prev.Cells {
		if !curCells[c.Name] {
			out = append(out, Change{Cell: c.Name, From: cellState(c), To: "absent", Direction: Gone, Why: "the configuration no longer has this cell"})
		}
	}
	order := map[string]int{Worse: 0, New: 1, Gone: 2, Changed: 3, Better: 4}
	sort.SliceStable(out, func(i, j int) bool { return order[out[i].Direction] < order[out[j].Direction] })
	return out
}

// cellState is a cell as "what changed" compares it: its exit, or not run.
func cellState(c Cell) string {
	if !c.Ran {
		return "not run"
	}
	return fmt.Sprintf("exit %d (%s)", c.ExitCode, c.Exit)
}

func cellBadness(c Cell) int {
	if !c.Ran {
		return 1
	}
	return map[int]int{0: 0, 4: 0, 1: 2, 3: 3, 2: 4}[c.ExitCode]
}

func cellWhy(c Cell) string {
	switch {
	case !c.Ran:
		return c.NotRun
	case c.Note != "":
		return c.Note
	}
	return c.Line
}

// ReadMatrix reads a combined matrix.json, of this format or the one
// before it (see Format).
func ReadMatrix(path string) (Matrix, error) {
	var m Matrix
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	if m.Format < 2 {
		if err := fromFormat1(b, &m); err != nil {
			return m, fmt.Errorf("%s: %w", path, err)
		}
	}
	return m, nil
}

// fromFormat1 gives the results of a matrix.json written before Format 2
// their verdicts: that format said a result's status (the page's colour)
// and a verdict of free text, which the verdicts here replace.
func fromFormat1(b []byte, m *Matrix) error {
	var old struct {
		Rows []struct {
			Cells map[string]struct {
				Status  string `json:"status"`
				Verdict string `json:"verdict"`
			} `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	verdicts := map[string]capability.Verdict{
		"conformant": capability.Conformant, "nonconformant": capability.Nonconformant, "not-supported": capability.VerdictNotApplicable,
		"error": capability.VerdictError, "unverified": capability.Unverified, "blocked": capability.VerdictBlocked, "probed": capability.VerdictProbed,
		"not-observed": capability.NotObserved, "not-run": capability.NotRun, "none": capability.NotCovered,
	}
	for i := range m.Rows {
		if i >= len(old.Rows) {
			break
		}
		for name, r := range m.Rows[i].Cells {
			o := old.Rows[i].Cells[name]
			v, ok := verdicts[o.Status]
			if !ok {
				v = capability.NotCovered
			}
			r.Verdict = v
			if v == capability.VerdictBlocked {
				r.BlockedBy = capability.Name(strings.TrimPrefix(o.Verdict, "blocked by "))
			}
			m.Rows[i].Cells[name] = r
		}
	}
	return nil
}

// Write writes matrix.json, matrix.md and matrix.html into pageDir, with
// the changes since the previous run first. The previous run is previous
// (a combined matrix.json, e.g. a CI job's download of the last nightly's)
// or, when that is "", the matrix.json already in pageDir, which is kept
// as matrix.previous.json. Every file is written whole or not at all
// (atomicfile), and matrix.json is copied, not moved, to
// matrix.previous.json: a write that fails or is killed midway leaves the
// page's previous matrix.json in place.
func Write(pageDir string, m Matrix, previous string) (Matrix, error) {
	if err := os.MkdirAll(pageDir, 0o755); err != nil {
		return m, err
	}
	cur := filepath.Join(pageDir, JSONFile)
	prevFile := filepath.Join(pageDir, PreviousJSONFile)
	if previous == "" {
		if b, err := os.ReadFile(cur); err == nil {
			if err := atomicfile.WriteFile(prevFile, b, 0o644); err != nil {
				return m, err
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return m, err
		}
	} else if b, err := os.ReadFile(previous); err != nil {
		return m, err
	} else if err := atomicfile.WriteFile(prevFile, b, 0o644); err != nil {
		return m, err
	}
	m.Changes = []Change{}
	if prev, err := ReadMatrix(prevFile); err == nil {
		m.Changes = Diff(prev, m)
		m.Previous = &Previous{Generated: prev.Generated, File: PreviousJSONFile}
	} else if !errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("the previous run's matrix: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := atomicfile.WriteFile(cur, append(b, '\n'), 0o644); err != nil {
		return m, err
	}
	if err := atomicfile.WriteFile(filepath.Join(pageDir, MDFile), []byte(Markdown(m)), 0o644); err != nil {
		return m, err
	}
	page, err := HTML(m)
	if err != nil {
		return m, err
	}
	return m, atomicfile.WriteFile(filepath.Join(pageDir, HTMLFile), page, 0o644)
}
