package framework

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Exit codes of the suite binaries, ectest-report and make conformance.
const (
	// ExitConformant: every spec that ran passed.
	ExitConformant = 0
	// ExitNonconformant: the run was done, and the runtime or cluster broke
	// at least one requirement (the reports say which, with the evidence).
	ExitNonconformant = 1
	// ExitBadInput: a flag, profile, images file or endpoint was wrong;
	// nothing ran.
	ExitBadInput = 2
	// ExitRunFailed: the run itself could not be done (its environment did
	// not come up, a spec's setup failed, a spec timed out or was
	// interrupted, the run left resources behind): no verdict either way.
	ExitRunFailed = 3
	// ExitProbed: a probe (-profile=probe) was done and wrote the profile it
	// observed, and the capabilities every runtime must support conformed.
	// The rest was recorded, not judged: never a conformance result, so a
	// probe never exits 0 (its nonconformances and errors exit 1 and 3).
	ExitProbed = 4
)

// OutcomeFile is written into the report directory at the end of a run.
const OutcomeFile = "summary.json"

// Outcome is how a run ended, as the report package works it out: the exit
// code and the one line that says it.
type Outcome struct {
	ExitCode int    `json:"exitCode"`
	Line     string `json:"line"`
}

// ReadOutcome reads a run's outcome from its report directory.
func ReadOutcome(dir string) (Outcome, error) {
	var o Outcome
	b, err := os.ReadFile(filepath.Join(dir, OutcomeFile))
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("%s: %w", filepath.Join(dir, OutcomeFile), err)
	}
	return o, nil
}

// comparedWithExpectations says whether the run's summary compared its
// verdicts with expectation files (-expect).
func comparedWithExpectations(dir string) bool {
	var s struct {
		Expectations json.RawMessage `json:"expectations"`
	}
	b, err := os.ReadFile(filepath.Join(dir, OutcomeFile))
	return err == nil && json.Unmarshal(b, &s) == nil && len(s.Expectations) > 0 && string(s.Expectations) != "null"
}

// exitCode turns the test binary's own exit code into the suite's: on
// failure, the run's outcome says whether the runtime was nonconformant or
// the run could not be done, and its line ends the output.
func exitCode(code int, reportDir string) int {
	o, err := ReadOutcome(reportDir)
	switch {
	case err == nil:
		fmt.Fprintln(os.Stderr, o.Line)
		if code == 1 && o.ExitCode == ExitConformant && comparedWithExpectations(reportDir) {
			return o.ExitCode // the failed specs are the known deviations
		}
		if code != 0 && (o.ExitCode == ExitConformant || o.ExitCode == ExitProbed) {
			return ExitRunFailed // the test binary failed outside the specs
		}
		return o.ExitCode
	case code == 0:
		return 0 // a dry run or a listing: nothing judged, nothing written
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(os.Stderr, "ectest: RUN FAILED before writing its reports in %s (no verdict; the output above says why) (exit 3)\n", reportDir)
		return ExitRunFailed
	default:
		fmt.Fprintf(os.Stderr, "ectest: RUN FAILED: its outcome is unreadable: %v (exit 3)\n", err)
		return ExitRunFailed
	}
}
