package matrix

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/report"
	"github.com/ectest/ectest/internal/atomicfile"
)

// CellRun is how the runner ran a cell (cell.json in the cell's folder). A
// cell folder made by other means (a CI job that ran the make target
// itself) has none: its reports alone then say how it ended.
type CellRun struct {
	Name    string    `json:"name"`
	Layer   string    `json:"layer"`
	Command string    `json:"command,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Seconds is the command's wall time.
	Seconds float64 `json:"seconds"`
	// CommandExit is the command's own exit code (-1: ended by a signal).
	CommandExit    int     `json:"commandExit"`
	PrepareSeconds float64 `json:"prepareSeconds,omitempty"`
	// PrepareExit is the prepare step's exit code when it failed; the
	// command then did not run.
	PrepareFailed bool `json:"prepareFailed,omitempty"`
	PrepareExit   int  `json:"prepareExit,omitempty"`
	// TimedOut: the runner ended the command at the cell's timeout.
	TimedOut bool   `json:"timedOut,omitempty"`
	Timeout  string `json:"timeout,omitempty"`
	// Interrupted: the runner was interrupted (Ctrl-C) while the cell ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// NotRun says why the command never started.
	NotRun string `json:"notRun,omitempty"`
}

// WriteCellRun writes cell.json into the cell's folder.
func WriteCellRun(dir string, r CellRun) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, CellRunFile), append(b, '\n'), 0o644)
}

// ReadCellRun reads cell.json; nil without error when there is none.
func ReadCellRun(dir string) (*CellRun, error) {
	b, err := os.ReadFile(filepath.Join(dir, CellRunFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r CellRun
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, CellRunFile), err)
	}
	return &r, nil
}

// makeError is GNU make's line for a failed recipe; it names the recipe's
// own exit code, which make's (always 2) hides.
var makeError = regexp.MustCompile(`(?m)^make(?:\[\d+\])?: \*\*\* \[[^\]]*\] Error (\d+)`)

// EffectiveExit is the exit code of the program that failed: a make
// target's recipe's rather than make's own 2. The first such line is the
// innermost make's.
func EffectiveExit(commandExit int, log string) int {
	if commandExit == 0 {
		return 0
	}
	if m := makeError.FindStringSubmatch(log); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n
		}
	}
	return commandExit
}

// LastLine is the log's last line from ectest's programs ("ectest:",
// "ectest-kind:", ...): what the run said last, the reason for a bad
// input or a failed setup.
func LastLine(log string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "ectest") && strings.Contains(l, ": ") {
			return l
		}
	}
	return ""
}

// CellExit works out a cell's exit code (the README's table) from how its
// command ended and the summaries its suites wrote. The summaries are the
// truth where there are any: make exits 2 for any failure, and the Ginkgo
// CLI 1. Without any, the cell's run could not be done (3), unless the
// command ended on bad input (2: a wrong flag in the cell's command).
func CellExit(run *CellRun, log string, sums []report.Summary) (int, string) {
	if run != nil && run.PrepareFailed {
		code := EffectiveExit(run.PrepareExit, log)
		if code != framework.ExitBadInput {
			code = framework.ExitRunFailed
		}
		return code, fmt.Sprintf("its prepare step failed (exit %d), the command did not run: %s", run.PrepareExit, orSee(LastLine(log), PrepareLogFile))
	}
	if run != nil && run.TimedOut {
		return framework.ExitRunFailed, fmt.Sprintf("timed out after %s and was interrupted; its reports, if any, are partial", run.Timeout)
	}
	if run != nil && run.Interrupted {
		return framework.ExitRunFailed, "interrupted (Ctrl-C to the matrix); its reports, if any, are partial"
	}
	if len(sums) > 0 {
		merged := report.MergeSummaries("", sums...)
		code := merged.ExitCode
		if run == nil {
			return code, ""
		}
		if eff := EffectiveExit(run.CommandExit, log); eff != 0 && eff != code && (code == framework.ExitConformant || code == framework.ExitProbed) {
			return framework.ExitRunFailed, fmt.Sprintf("the suites' reports say %s, but the command failed (exit %d) after them: %s", ExitText(code), eff, orSee(LastLine(log), CellLogFile))
		}
		return code, ""
	}
	if run == nil {
		return framework.ExitRunFailed, "the cell's folder holds no reports (its job ended before the suites wrote them)"
	}
	eff := EffectiveExit(run.CommandExit, log)
	if eff == framework.ExitBadInput {
		return framework.ExitBadInput, "bad input, nothing ran: " + orSee(LastLine(log), CellLogFile)
	}
	return framework.ExitRunFailed, fmt.Sprintf("the command (exit %d) wrote no reports: %s", eff, orSee(LastLine(log), CellLogFile))
}

func orSee(line, file string) string {
	if line == "" {
		return "see " + file
	}
	return line
}
