package report

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

// SummaryFormat is the version of summary.json this package writes: 2 adds
// the specs' verdicts (Summary.Judged); 3 the expectations of a run with
// -expect (Summary.Expectations), the capabilities each spec observed
// (SpecVerdict.Capabilities) and the conformant ones per layer
// (LayerSummary.ConformantCapabilities). ReadRun reads every version.
const SummaryFormat = 3

// Run is what one suite run's report folder says, as every report after
// the run reads it (ReadRun): the verdicts the run decided, never decided
// again. The per-run summary, make runtimes' table, make api-releases,
// make matrix's page and the mutation report are all rendered from it.
type Run struct {
	Dir string
	// Summary is the run's outcome: its exit code and line, the spec
	// counts, the nonconformances and the errors of the run itself.
	Summary Summary
	// Matrix holds each capability's verdict per layer, as the specs'
	// observations were judged when recorded; nil when the run wrote none.
	Matrix *capability.Matrix
	// Coverage is the run's requirement coverage; nil when it wrote none.
	Coverage *Coverage
	// Specs are the run's spec verdicts by the spec's full text: those of
	// every spec that did not pass, and of every spec when the summary
	// predates them and they were decided from ginkgo-report.json.
	Specs map[string]SpecVerdict
}

// ReadRun reads a run's report folder: its summary.json (which it must
// have), matrix.json, coverage.json and the specs' verdicts (the summary's,
// or for a summary written before it carried them, decided from
// ginkgo-report.json by the same rule, JudgeSpecReport).
func ReadRun(dir string) (Run, error) {
	r := Run{Dir: dir, Specs: map[string]SpecVerdict{}}
	var err error
	if r.Summary, err = ReadSummary(dir); err != nil {
		return r, err
	}
	// A file the run did not write is nil; one it wrote unreadably is an
	// error (never taken for a run that judged nothing).
	if m, err := ReadMatrix(dir); err == nil {
		r.Matrix = &m
	} else if !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if c, err := ReadCoverage(dir); err == nil {
		r.Coverage = &c
	} else if !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if r.Summary.Format >= 2 {
		for _, sv := range r.Summary.Judged {
			r.Specs[sv.Spec] = sv
		}
		return r, nil
	}
	var rs []types.Report
	if b, err := os.ReadFile(filepath.Join(dir, JSONFile)); err == nil && json.Unmarshal(b, &rs) == nil {
		for _, rep := range rs {
			for _, sr := range rep.SpecReports {
				if sr.LeafNodeType == types.NodeTypeIt {
					sv := JudgeSpecReport(sr)
					r.Specs[sv.Spec] = sv
				}
			}
		}
	}
	return r, nil
}

// ExitCode is the run's exit code (framework's Exit* codes).
func (r Run) ExitCode() int { return r.Summary.ExitCode }

// Nonconformant lists the capabilities the run judged nonconformant at any
// layer.
func (r Run) Nonconformant() []capability.Name {
	if r.Matrix == nil {
		return nil
	}
	return r.Matrix.Nonconformant()
}

// Conformant lists the capabilities the run judged conformant (at some
// layer, and nonconformant at none).
func (r Run) Conformant() []capability.Name {
	if r.Matrix == nil {
		return nil
	}
	return r.Matrix.Conformant()
}

// Unverified lists the capabilities the run left unverified at any layer.
func (r Run) Unverified() []capability.Name {
	if r.Matrix == nil {
		return nil
	}
	return r.Matrix.Unverified()
}

// Cell is capability n's cell at layer l (not observed when the run wrote
// no matrix or has no such cell).
func (r Run) Cell(n capability.Name, l capability.Layer) capability.Cell {
	if r.Matrix != nil {
		for _, row := range r.Matrix.Rows {
			if row.Capability == n {
				if c, ok := row.Layers[l]; ok {
					return c
				}
			}
		}
	}
	return capability.Cell{Verdict: capability.NotObserved}
}

// RunDirs finds the run folders below dir (a matrix cell's folder, say):
// each folder with a summary.json, not looking below one (a suite's
// folder has none of its own below it).
func RunDirs(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, framework.OutcomeFile)); err == nil {
			out = append(out, path)
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out
}
