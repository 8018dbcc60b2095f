package capability

// SpecEnd is how one spec (or a setup node) of a run ended, and what it
// recorded: what JudgeSpec decides its verdict from.
type SpecEnd struct {
	// IsSpec: an It, not a suite's setup or cleanup node.
	IsSpec bool
	// State is the Ginkgo state: passed, skipped, failed, panicked, ...
	State string
	// FailedInSpecBody: the failure was raised in the It body, where the
	// spec's judges run (not in a BeforeEach, a DeferCleanup, ...).
	FailedInSpecBody bool
	Message          string
	// EnvironmentError, when set, says the suite's environment was found
	// broken right after the spec failed (the runtime gone, say; see
	// EnvironmentEntryName): whatever the failure, it is no verdict.
	EnvironmentError string
	// Observations are the spec's recorded (judged) observations.
	Observations []Observation
	// TestDouble: the spec checks the suite itself through a test double
	// (the label test-double), not the system under test.
	TestDouble bool
}

// JudgeSpec decides a spec's verdict from how it ended and what it
// recorded, the spec-level counterpart of Decide: passed is conformant,
// skipped not observed; a failure is nonconformant when a judge said no
// (an observation recorded nonconformant, or an assertion of the It body),
// and otherwise an error of the run itself, no verdict: an observation
// recorded as an environment error, a spec that failed with the
// environment-error message (EnvironmentErrorPrefix: a spec that found its
// fixture broken says so), a failure outside the It body, a panic, a
// timeout, an interrupt. The reason says which. A spec that checks the
// suite itself through a test double judges no runtime or server: its
// failure is always an error of the run (the suite cannot trust the judge
// or the double it checked), never a nonconformance.
func JudgeSpec(s SpecEnd) (Verdict, string) {
	switch s.State {
	case "passed":
		return Conformant, "passed"
	case "skipped", "pending":
		return NotObserved, s.State
	}
	if s.TestDouble {
		return VerdictError, "a check of the suite itself through a test double failed: the suite's error, not the server's"
	}
	for _, o := range s.Observations {
		if o.Verdict == VerdictError {
			return VerdictError, "the suite's environment broke"
		}
	}
	// A nonconformance was recorded while the environment was found
	// healthy (Checker.Record asks it first): it stands, as its matrix cell
	// does, whatever broke afterwards.
	for _, o := range s.Observations {
		if o.Verdict == Nonconformant {
			return Nonconformant, "a judge said no: " + string(o.Capability) + " nonconformant"
		}
	}
	if s.EnvironmentError != "" {
		return VerdictError, "the suite's environment broke: " + s.EnvironmentError
	}
	switch {
	case IsEnvironmentFailure(s.Message):
		return VerdictError, "the suite's environment broke"
	case !s.IsSpec:
		return VerdictError, "a setup or cleanup node " + s.State
	case s.State != "failed":
		return VerdictError, "the spec " + s.State
	case !s.FailedInSpecBody:
		return VerdictError, "the spec failed outside its body (setup or cleanup)"
	}
	return Nonconformant, "a judge said no"
}

// failedState is a Ginkgo spec state in which the spec did not pass (its
// report's State string).
func failedState(state string) bool {
	switch state {
	case "failed", "panicked", "timedout", "interrupted", "aborted":
		return true
	}
	return false
}
