package capability

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// Checker records observations for one layer and judges them against the
// declared profile. Specs use it; it is the only way observations enter the
// matrix.
type Checker struct {
	Declared map[Name]Support
	Layer    Layer
	// Environment, when set, checks the suite's own environment (the
	// loopback registry, the API server) before a nonconformance is
	// recorded: a runtime is never blamed for the suite's broken fixture.
	Environment func() error
	// GoneSince, when set, is the environment's account of a time it was
	// broken that began after the given time (a spec's start) or is not
	// over: a spec that failed while the runtime hung, which answers again
	// by the time the spec is over, is still a run error.
	GoneSince func(time.Time) error
	// Exercises are the capabilities of the spec this checker belongs to
	// (ForSpec): an environment error during the spec is recorded for them
	// as "error".
	Exercises []Name
	// ExtraRequirements are added to every observation's requirements: a
	// capability observed on a skewed kubelet verifies SKEW-1 besides its own.
	ExtraRequirements []string
}

// ForSpec is a copy of the session's checker for one spec exercising the
// given capabilities.
func (c *Checker) ForSpec(exercises ...Name) *Checker {
	cp := *c
	cp.Exercises = append([]Name(nil), exercises...)
	return &cp
}

// EnvironmentErrorPrefix starts the failure message of a spec that failed
// because the suite's own environment broke; the summary counts such
// failures as errors of the run, never as nonconformance.
const EnvironmentErrorPrefix = "ectest: environment error: "

// EnvironmentEntryName is the report entry CheckAfterFailure adds to a
// spec that failed while the suite's environment was broken.
const EnvironmentEntryName = "ectest environment error"

// CheckAfterFailure runs after each spec (an AfterEach): when the spec
// failed other than with an environment error and the environment is
// found broken now (the runtime went away while the spec waited on it, so
// the spec's own assertion on a CRI call failed first), or was broken at
// some time since the spec began (GoneSince: the runtime hung and answers
// again), it notes so in the spec's report, and the spec counts as a run
// error, never a verdict.
func (c *Checker) CheckAfterFailure() {
	r := ginkgo.CurrentSpecReport()
	if !r.Failed() || IsEnvironmentFailure(r.Failure.Message) {
		return
	}
	if err := c.broken(); err != nil {
		ginkgo.AddReportEntry(EnvironmentEntryName, err.Error(), ginkgo.ReportEntryVisibilityFailureOrVerbose)
	}
}

// broken is the suite's environment found broken now, or broken at some
// time since the spec began (GoneSince); nil while it is whole, and for a
// checker without environment checks. Asked before a spec's failure or
// nonconformance is blamed on the runtime.
func (c *Checker) broken() error {
	if c == nil || c.Environment == nil {
		return nil
	}
	if err := c.Environment(); err != nil {
		return err
	}
	if c.GoneSince != nil {
		return c.GoneSince(ginkgo.CurrentSpecReport().StartTime)
	}
	return nil
}

// IsEnvironmentFailure reports whether a spec's failure message is an
// environment error.
func IsEnvironmentFailure(message string) bool {
	return strings.HasPrefix(message, EnvironmentErrorPrefix)
}

// RequireApplicable skips the spec when the profile declares the capability
// not applicable (PID namespaces on Windows), with the reason.
func (c *Checker) RequireApplicable(n Name) {
	ginkgo.GinkgoHelper()
	if c.Declared[n] == NotApplicable {
		ginkgo.Skip(fmt.Sprintf("%s is declared not applicable by the runtime's profile: %s", n, MustLookup(n).Summary))
	}
}

// Declares returns what the profile declares for n.
func (c *Checker) Declares(n Name) Support { return c.Declared[n] }

// Record is where an observation's verdict is decided (Decide, after
// checking the suite's environment when it would blame the runtime): it
// attaches the judged observation to the spec's report, and fails the
// spec, with the evidence, when the observation is nonconformant. Every
// report carries this verdict; none judges again.
func (c *Checker) Record(o Observation) {
	ginkgo.GinkgoHelper()
	c.act(c.judge(o), "")
}

// judge decides o (Record's rule) and attaches it to the spec's report.
func (c *Checker) judge(o Observation) Observation {
	def := MustLookup(o.Capability)
	if o.Layer == "" {
		o.Layer = c.Layer
	}
	if len(o.Requirements) == 0 {
		o.Requirements = c.requirements(def)
	}
	o.Declared = c.Declared[o.Capability]
	if v, _ := JudgeObservation(def, o); v == Nonconformant {
		if err := c.broken(); err != nil {
			o.EnvironmentError = err.Error()
		}
	}
	o = Decide(def, o)
	ginkgo.AddReportEntry(ReportEntryName, o, ginkgo.ReportEntryVisibilityNever)
	return o
}

// act ends the spec as a judged observation asks: an error or a
// nonconformance fails it (with also, when set, added to the message), a
// blocked or not applicable one skips it.
func (c *Checker) act(o Observation, also string) {
	ginkgo.GinkgoHelper()
	def := MustLookup(o.Capability)
	switch o.Verdict {
	case VerdictError:
		ginkgo.Fail(fmt.Sprintf("%s%s; %s was not judged (observed: %s)\n  evidence:\n%s", EnvironmentErrorPrefix, o.EnvironmentError, o.Capability, o.Observed, indent(o.Evidence, "    ")))
	case VerdictBlocked:
		ginkgo.Skip(fmt.Sprintf("%s is blocked by %s: %s", o.Capability, o.Blocker(), o.Observed))
	case VerdictNotApplicable:
		ginkgo.Skip(fmt.Sprintf("%s: %s", o.Capability, o.Reason))
	}
	if o.Verdict == Nonconformant {
		var b strings.Builder
		fmt.Fprintf(&b, "%s is nonconformant (%s)", o.Capability, strings.Join(o.Requirements, ", "))
		if o.Case != "" {
			fmt.Fprintf(&b, " for %s", o.Case)
		}
		fmt.Fprintf(&b, ":\n  required: %s\n  declared: %s\n  observed: %s (%s)\n  verdict:  %s", def.Summary, o.Declared, o.Observed, o.Outcome, o.Reason)
		if also != "" {
			fmt.Fprintf(&b, "\n  %s", also)
		}
		if o.Evidence != "" {
			fmt.Fprintf(&b, "\n  evidence:\n%s", indent(o.Evidence, "    "))
		}
		ginkgo.Fail(b.String())
	}
}

// BlockOn is for a spec that checks its capabilities through another one,
// dep.Capability (exec sessions, a TARGET debug container), which it saw
// not work: dep is recorded through the one judge (Record's rule), so a
// deviation counts in its own cell wherever it was seen. When the judge
// says nonconformant, every other capability the spec exercises is
// recorded blocked by it and the spec fails with dep's nonconformance;
// when dep was refused as the profile declares (conformant, or not on this
// OS), they are recorded Inapplicable and the spec skips: nothing failed,
// so nothing is blocked. In a probe (dep probed) they are blocked. An
// environment error fails the spec as Record does. A dep that works is
// not recorded.
func (c *Checker) BlockOn(dep Observation) {
	ginkgo.GinkgoHelper()
	if dep.Outcome == Works {
		return
	}
	var others []Name
	for _, n := range c.Exercises {
		if n != dep.Capability {
			others = append(others, n)
		}
	}
	if dep.Case == "" && len(others) > 0 {
		dep.Case = fmt.Sprintf("seen while checking %s", joinNames(others))
	}
	d := c.judge(dep)
	outcome := Inapplicable
	switch d.Verdict {
	case VerdictError:
		c.act(d, "")
	case Nonconformant, VerdictProbed:
		outcome = Blocked
	}
	for _, n := range others {
		def := MustLookup(n)
		o := Decide(def, Observation{Capability: n, Layer: c.Layer, Outcome: outcome, BlockedBy: dep.Capability, Observed: fmt.Sprintf("%s: %s", dep.Capability, d.Observed),
			Evidence: d.Evidence, Declared: c.Declared[n], Requirements: c.requirements(def)})
		ginkgo.AddReportEntry(ReportEntryName, o, ginkgo.ReportEntryVisibilityNever)
	}
	if d.Verdict == Nonconformant {
		c.act(d, fmt.Sprintf("blocked by it in this spec: %s", joinNames(others)))
	}
	if outcome == Blocked {
		ginkgo.Skip(fmt.Sprintf("%s blocked by %s (%s): %s", joinNames(others), dep.Capability, d.Verdict, d.Observed))
	}
	ginkgo.Skip(fmt.Sprintf("%s not applicable: checked only through %s, which was refused as the profile declares (%s): %s", joinNames(others), dep.Capability, d.Reason, d.Observed))
}

func joinNames(ns []Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

func (c *Checker) requirements(def Definition) []string {
	out := append([]string(nil), def.Requirements...)
	for _, r := range c.ExtraRequirements {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// Fail fails the spec with message, as a helper does when an operation the
// spec needs went wrong. When the suite's environment is found broken at
// that moment, the failure is an environment error (see
// EnvironmentErrorPrefix), which the summary never counts against the
// runtime.
func (c *Checker) Fail(message string) {
	ginkgo.GinkgoHelper()
	if err := c.broken(); err != nil {
		c.FailEnvironment(err, message)
	}
	ginkgo.Fail(message)
}

// FailEnvironment fails the spec as an environment error (err, found while
// doing what message says), recording each capability it exercises as not
// judged.
func (c *Checker) FailEnvironment(err error, message string) {
	ginkgo.GinkgoHelper()
	for _, n := range c.Exercises {
		ginkgo.AddReportEntry(ReportEntryName, Observation{Capability: n, Layer: c.Layer, Outcome: Refused,
			Observed: "not judged: the suite's environment broke", Evidence: message, EnvironmentError: err.Error(),
			Requirements: c.requirements(MustLookup(n)), Declared: c.Declared[n], Verdict: VerdictError,
			Reason: "the suite's environment broke: " + err.Error()}, ginkgo.ReportEntryVisibilityNever)
	}
	ginkgo.Fail(fmt.Sprintf("%s%v\n  (while: %s)", EnvironmentErrorPrefix, err, message))
}
