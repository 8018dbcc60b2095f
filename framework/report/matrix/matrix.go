// Package matrix is the nightly matrix's combined report: it reads the
// report folders of many cells (a suite run against one runtime, cluster or
// Kubernetes release each, see Config) and renders one page with the cells
// as columns and the capabilities and requirement IDs as rows, each cell's
// verdict one click from its evidence, and what changed since the previous
// run first (matrix.json, matrix.md, matrix.html).
package matrix

import (
	"strconv"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
)

// File names in the matrix's output folder and in each cell's folder.
const (
	JSONFile         = "matrix.json"
	PreviousJSONFile = "matrix.previous.json"
	MDFile           = "matrix.md"
	HTMLFile         = "matrix.html"
	// CellsDir holds one folder per cell under the output folder.
	CellsDir = "cells"
	// CellRunFile, CellLogFile and PrepareLogFile are what the runner
	// writes into a cell's folder beside the suites' reports.
	CellRunFile    = "cell.json"
	CellLogFile    = "cell.log"
	PrepareLogFile = "prepare.log"
)

// Status is how a result looks on the page: its colour and the label in
// its cell of the heatmap. It is not a verdict of its own: Result.Status
// maps the result's verdict (a capability.Verdict, the one vocabulary of
// every report) onto it, several verdicts onto one colour where the page
// groups them (not supported).
type Status string

const (
	Conformant    Status = "conformant"
	Nonconformant Status = "nonconformant"
	// NotSupported: declared unsupported and refused as it must be,
	// declared not applicable, or not supported on the node's OS.
	NotSupported Status = "not-supported"
	// Error: the run could not judge it (a setup, a timeout, the
	// environment), or the cell wrote no reports at all.
	Error      Status = "error"
	Unverified Status = "unverified"
	Blocked    Status = "blocked"
	Probed     Status = "probed"
	// NotObserved: the cell's specs for it skipped or recorded nothing.
	NotObserved Status = "not-observed"
	// NotRun: the cell did not run (skipped by its configuration, not
	// selected, interrupted before it started, or its CI job left no
	// reports).
	NotRun Status = "not-run"
	// None: the cell's suites have no spec for it (API-* in a CRI cell).
	None Status = "none"
)

// StatusOf is the page's colour of a verdict.
func StatusOf(v capability.Verdict) Status {
	switch v {
	case capability.Conformant:
		return Conformant
	case capability.Nonconformant:
		return Nonconformant
	case capability.VerdictNotApplicable, capability.NotSupportedOnOS:
		return NotSupported
	case capability.VerdictError:
		return Error
	case capability.Unverified:
		return Unverified
	case capability.VerdictBlocked:
		return Blocked
	case capability.VerdictProbed:
		return Probed
	case capability.NotObserved, capability.OtherLayer:
		return NotObserved
	case capability.NotRun:
		return NotRun
	}
	return None
}

// Statuses in the order of the page's legend.
var Statuses = []Status{Conformant, Nonconformant, NotSupported, Error, Unverified, Blocked, Probed, NotObserved, NotRun, None}

// Label is a status as the page prints it in a cell.
func (s Status) Label() string {
	switch s {
	case Conformant:
		return "ok"
	case Nonconformant:
		return "FAIL"
	case NotSupported:
		return "n/s"
	case Error:
		return "error"
	case Unverified:
		return "unverif."
	case Blocked:
		return "blocked"
	case Probed:
		return "probed"
	case NotObserved:
		return "–"
	case NotRun:
		return "not run"
	}
	return "·"
}

// Meaning says what the status means, for the legend.
func (s Status) Meaning() string {
	switch s {
	case Conformant:
		return "conformant: works as required"
	case Nonconformant:
		return "nonconformant: a judge said no (the evidence says what the runtime did)"
	case NotSupported:
		return "not supported: declared unsupported and refused as it must be, declared not applicable, or not supported on this OS"
	case Error:
		return "error: the run could not judge it (setup, timeout, environment, no reports)"
	case Unverified:
		return "unverified: declared supported, and no spec of the full run observed it"
	case Blocked:
		return "blocked: a capability it is checked through did not work"
	case Probed:
		return "probed: recorded by a probe, not judged"
	case NotObserved:
		return "not observed: its specs skipped or recorded nothing"
	case NotRun:
		return "not run: the cell did not run"
	}
	return "no spec of this cell's suite covers it"
}

// badness orders statuses for "what changed": a change to a higher one is
// a regression.
func (s Status) badness() int {
	switch s {
	case Conformant, NotSupported:
		return 0
	case Probed, None:
		return 1
	case NotObserved:
		return 2
	case NotRun:
		return 3
	case Blocked:
		return 4
	case Unverified:
		return 5
	case Error:
		return 6
	case Nonconformant:
		return 7
	}
	return 1
}

// mergeRank orders statuses when a cell has several reports (layers or
// folders) for one row: the worst observed one wins, and "not observed"
// only where nothing observed it.
func (s Status) mergeRank() int {
	switch s {
	case None:
		return -1
	case NotObserved:
		return 0
	case NotSupported:
		return 1
	case Conformant:
		return 2
	case Probed:
		return 3
	case NotRun:
		return 4
	case Blocked:
		return 5
	case Unverified:
		return 6
	case Error:
		return 7
	case Nonconformant:
		return 8
	}
	return -1
}

// Format is the version of matrix.json this package writes: 2 gives each
// result a capability.Verdict instead of a status of the page's own and a
// free-text verdict. ReadMatrix reads both (a previous run's page may be
// of either).
const Format = 2

// Matrix is the combined report of all cells (matrix.json).
type Matrix struct {
	// Format is the file's version (Format; 0 before it).
	Format    int       `json:"format,omitempty"`
	Generated time.Time `json:"generated"`
	// Line is the matrix's last line, as make matrix ends on it.
	Line string `json:"line"`
	// ExitCode is the worst of the cells' (see Combine).
	ExitCode int    `json:"exitCode"`
	Cells    []Cell `json:"cells"`
	Rows     []Row  `json:"rows"`
	// Changes since the previous run (its matrix.json kept as
	// matrix.previous.json), worst first.
	Changes  []Change  `json:"changes"`
	Previous *Previous `json:"previous,omitempty"`
}

// Previous names the run the changes are counted from.
type Previous struct {
	Generated time.Time `json:"generated"`
	File      string    `json:"file"`
}

// Cell is one column: how the cell ran and what it ran against.
type Cell struct {
	Name     string `json:"name"`
	Layer    string `json:"layer"`
	Describe string `json:"describe,omitempty"`
	Command  string `json:"command,omitempty"`
	Ran      bool   `json:"ran"`
	// NotRun says why the cell did not run.
	NotRun string `json:"notRun,omitempty"`
	// ExitCode is the cell's outcome (0 conformant, 1 nonconformant, 2 bad
	// input, 3 the run could not be done, 4 a probe), when it ran.
	ExitCode int    `json:"exitCode"`
	Exit     string `json:"exit"`
	// Note says how the exit code was worked out when the reports alone
	// do not say it (no reports, a timeout, a failed prepare).
	Note string `json:"note,omitempty"`
	// Line is the run's last line (its merged summary's).
	Line           string    `json:"line,omitempty"`
	Started        time.Time `json:"started,omitzero"`
	Seconds        float64   `json:"seconds,omitempty"`
	PrepareSeconds float64   `json:"prepareSeconds,omitempty"`
	// Runtimes are what each layer of each report ran against.
	Runtimes []LayerRuntime `json:"runtimes,omitempty"`
	// Ectest names the suites that judged the cell's reports (one, unless
	// its reports were made by different builds; none in older reports).
	Ectest []string          `json:"ectest,omitempty"`
	Specs  report.SpecCounts `json:"specs"`
	// SelfTest names the CRI proxy's fault or personality when the cell's
	// reports were made through it: never a conformance result.
	SelfTest string `json:"selfTest,omitempty"`
	Probe    bool   `json:"probe,omitempty"`
	// Reports are the cell's report folders, relative to the page.
	Reports []ReportLinks `json:"reports,omitempty"`
	// Log is the runner's log of the cell's command, relative to the page.
	Log             string   `json:"log,omitempty"`
	PrepareLog      string   `json:"prepareLog,omitempty"`
	Nonconformances []string `json:"nonconformances,omitempty"`
	RunErrors       []string `json:"runErrors,omitempty"`
}

// LayerRuntime is what one layer of a cell's report ran against.
type LayerRuntime struct {
	Layer   capability.Layer       `json:"layer"`
	Runtime capability.RuntimeInfo `json:"runtime"`
	Profile string                 `json:"profile,omitempty"`
}

// ReportLinks are one report folder's files, relative to the page ("" when
// absent).
type ReportLinks struct {
	Dir      string `json:"dir"`
	Summary  string `json:"summary,omitempty"`
	Matrix   string `json:"matrix,omitempty"`
	Coverage string `json:"coverage,omitempty"`
}

// Row kinds.
const (
	KindCapability  = "capability"
	KindRequirement = "requirement"
)

// Row is one capability or requirement ID across the cells.
type Row struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Summary string `json:"summary"`
	// Requirements are a capability's requirement IDs.
	Requirements []string `json:"requirements,omitempty"`
	// Cells are the row's results by cell name.
	Cells map[string]Result `json:"cells"`
}

// Key identifies a row across runs.
func (r Row) Key() string { return r.Kind + ":" + r.ID }

// Result is a row in one cell: the verdict the cell's runs decided, one
// line saying why, and the evidence.
type Result struct {
	// Verdict is the capability package's word for it: a capability's cell
	// verdict as its run recorded it; a requirement's from the verdicts of
	// the specs that name it; not-run for a cell that did not run,
	// not-covered where the cell's suites have no spec for the row.
	Verdict capability.Verdict `json:"verdict"`
	// Refused: conformant because declared unsupported and refused as it
	// must be (the page shows it as not supported).
	Refused bool `json:"refused,omitempty"`
	// ProfileMismatch: conformant, declared unsupported, and works.
	ProfileMismatch bool `json:"profileMismatch,omitempty"`
	// BlockedBy names the capability that blocked a blocked one.
	BlockedBy capability.Name `json:"blockedBy,omitempty"`
	// Why is one line: what was observed, or the failure.
	Why          string     `json:"why,omitempty"`
	Observations []Evidence `json:"observations,omitempty"`
	Specs        []SpecRun  `json:"specs,omitempty"`
}

// Status is the result's colour on the page.
func (r Result) Status() Status {
	if r.Verdict == capability.Conformant && r.Refused {
		return NotSupported
	}
	return StatusOf(r.Verdict)
}

// Text is the verdict as the page prints it: the verdict's text, with what
// qualifies it.
func (r Result) Text() string {
	switch {
	case r.Verdict == capability.VerdictBlocked && r.BlockedBy != "":
		return r.Verdict.Text() + " by " + string(r.BlockedBy)
	case r.Verdict == capability.Conformant && r.Refused:
		return r.Verdict.Text() + ": declared unsupported, refused as it must be"
	case r.Verdict == capability.Conformant && r.ProfileMismatch:
		return r.Verdict.Text() + " (profile mismatch: declared unsupported, works)"
	case r.Verdict == "":
		return capability.NotCovered.Text()
	}
	return r.Verdict.Text()
}

// Evidence is one observation behind a capability's result.
type Evidence struct {
	Source   string             `json:"source,omitempty"`
	Layer    string             `json:"layer,omitempty"`
	Case     string             `json:"case,omitempty"`
	Observed string             `json:"observed"`
	Verdict  capability.Verdict `json:"verdict"`
	Reason   string             `json:"reason,omitempty"`
	// Text is what proves it (ps output, the gRPC status), for verdicts
	// other than conformant.
	Text string `json:"text,omitempty"`
}

// SpecRun is one spec behind a result: how it ended and, when it did not
// pass, its failure or skip message.
type SpecRun struct {
	Source  string `json:"source,omitempty"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// Verdict is the spec's (report.SpecVerdict), for one that did not pass.
	Verdict capability.Verdict `json:"verdict,omitempty"`
}

// JudgeSaidNo: the spec's failure is the runtime's nonconformance.
func (s SpecRun) JudgeSaidNo() bool { return s.Verdict == capability.Nonconformant }

// Change is one difference from the previous run.
type Change struct {
	Cell string `json:"cell"`
	// Row is the row's key ("capability:pid-target", "requirement:CRI-2"),
	// or "" for a change of the whole cell (its exit, new, gone).
	Row  string `json:"row,omitempty"`
	From string `json:"from"`
	To   string `json:"to"`
	// Direction: worse, better, changed, new or gone.
	Direction string `json:"direction"`
	Why       string `json:"why,omitempty"`
}

// ExitText names an exit code as the README's table does.
// The exit texts of a cell compared with expectation files (-expect).
const (
	ExitAsExpected = "as expected"
	ExitChanged    = "changed from expectations"
)

func ExitText(code int) string {
	switch code {
	case framework.ExitConformant:
		return "conformant"
	case framework.ExitNonconformant:
		return "nonconformant"
	case framework.ExitBadInput:
		return "bad input"
	case framework.ExitRunFailed:
		return "run error"
	case framework.ExitProbed:
		return "probe done"
	}
	return "exit " + strconv.Itoa(code)
}
