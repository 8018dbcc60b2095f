package capability

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
)

// Checker records observations for one layer and judges them against the
// declared profile. Specs use it; it is the only way observations enter the
// matrix.
type Checker struct {
	Declared map[Name]Support
	Layer    Layer
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

// Record attaches the observation to the spec's report and fails the spec,
// with the evidence, when the observation is nonconformant.
func (c *Checker) Record(o Observation) {
	ginkgo.GinkgoHelper()
	def := MustLookup(o.Capability)
	if o.Layer == "" {
		o.Layer = c.Layer
	}
	if len(o.Requirements) == 0 {
		o.Requirements = def.Requirements
	}
	o.Declared = c.Declared[o.Capability]
	o.Verdict, o.Reason = Judge(def, o.Declared, o.Outcome)
	ginkgo.AddReportEntry(ReportEntryName, o, ginkgo.ReportEntryVisibilityNever)
	if o.Verdict == Nonconformant {
		var b strings.Builder
		fmt.Fprintf(&b, "%s is nonconformant (%s)", o.Capability, strings.Join(o.Requirements, ", "))
		if o.Case != "" {
			fmt.Fprintf(&b, " for %s", o.Case)
		}
		fmt.Fprintf(&b, ":\n  required: %s\n  declared: %s\n  observed: %s (%s)\n  verdict:  %s", def.Summary, o.Declared, o.Observed, o.Outcome, o.Reason)
		if o.Evidence != "" {
			fmt.Fprintf(&b, "\n  evidence:\n%s", indent(o.Evidence, "    "))
		}
		ginkgo.Fail(b.String())
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
