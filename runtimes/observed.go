package runtimes

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/ectest/ectest/framework/capability"
)

// ObservedFile is the file a probe writes into its report directory.
const ObservedFile = "observed-profile.yaml"

// Observed is a probe's reading of one layer of its matrix: the profile it
// suggests, and how that compares with the builtin profile -profile=auto
// would pick for the same runtime.
type Observed struct {
	Profile *Profile
	// YAML is the profile in the format of runtimes/profiles/*.yaml, each
	// capability with comments naming what was seen and the specs that saw it.
	YAML []byte
	// Builtin is the builtin profile auto-detection picks for the runtime
	// ("" when none matches); Differences lists, per capability, where the
	// probe's reading differs from it (none: the probe reproduces it).
	Builtin     string
	Differences []string
}

// Comparison is one line on how the observed profile compares with the
// builtin one.
func (o Observed) Comparison() string {
	switch {
	case o.Builtin == "":
		return "no builtin profile matches this runtime"
	case len(o.Differences) == 0:
		return "reproduces the builtin profile " + o.Builtin
	}
	return fmt.Sprintf("differs from the builtin profile %s: %s", o.Builtin, strings.Join(o.Differences, "; "))
}

// reading is what a probe makes of one capability's cell.
type reading struct {
	support capability.Support
	// status heads the capability's comment: works, refused, DEVIATED,
	// NONCONFORMANT, NOT OBSERVED, ERROR.
	status string
	why    string
}

// read turns a cell into a declaration. A capability every runtime of the
// OS must support is declared supported whatever was seen (a profile
// cannot excuse it; what was seen is in the comment, and the run judged
// it). Otherwise: works everywhere it was observed, supported; refused at
// create with a refusal code, unsupported (the runtime then passes by
// refusing it); accepted and something else done, unsupported too, marked
// DEVIATED (no declaration makes that conformant); never observed,
// unsupported on Linux (a conformance run then shows whether it works) and
// not-applicable on Windows.
func read(def capability.Definition, c capability.Cell, os string) reading {
	var works, refused, deviated, blocked int
	for _, o := range c.Observations {
		switch o.Outcome {
		case capability.Works:
			works++
		case capability.Refused:
			refused++
		case capability.Blocked, capability.Inapplicable:
			// Not an observation of the capability: what it is checked
			// through did not work, or was refused as declared.
			blocked++
		default:
			deviated++
		}
	}
	mandatory := def.MandatoryOnOS(os)
	r := reading{support: capability.Supported}
	switch {
	case c.Verdict == capability.VerdictError:
		r.status, r.why = "ERROR", "its spec failed for a reason of its own after observing it: no reading; run the probe again"
	case c.Verdict == capability.OtherLayer:
		r.status, r.why = "NOT AT THIS LAYER", fmt.Sprintf("judged at the %s layer only (the %s suite's specs)", capability.OnlyAt(def.Name), capability.OnlyAt(def.Name))
	case len(c.Observations) == 0:
		r.status, r.why = "NOT OBSERVED", "no spec of this run recorded it (filtered out, skipped, or failed before observing)"
	case blocked == len(c.Observations):
		r.status, r.why = "BLOCKED", fmt.Sprintf("not checked: every spec of it was blocked by %s, which did not work", c.BlockedBy(def.Name))
	case deviated > 0:
		r.status, r.why = "DEVIATED", capability.ProbeReading(capability.Deviated)
	case refused > 0 && works > 0:
		r.status, r.why = "refused in part", fmt.Sprintf("%d of %d observations refused at create, the others worked", refused, refused+works)
	case refused > 0:
		r.status, r.why = "refused", capability.ProbeReading(capability.Refused)
	default:
		r.status = "works"
		if blocked > 0 {
			r.why = fmt.Sprintf("%d other observations blocked by %s, which did not work", blocked, c.BlockedBy(def.Name))
		}
	}
	switch {
	case mandatory:
		if r.status != "works" && r.status != "NOT OBSERVED" && r.status != "BLOCKED" && r.status != "ERROR" && r.status != "NOT AT THIS LAYER" {
			r.status = "NONCONFORMANT"
			r.why = fmt.Sprintf("every runtime on %s must support it (%s): it stays declared supported, and the run judged it nonconformant", os, strings.Join(def.Requirements, ", "))
		} else if r.status != "works" {
			r.why += fmt.Sprintf("; declared supported because every runtime on %s must support it", os)
		}
	case r.status == "works":
	case len(c.Observations) == 0 || r.status == "BLOCKED" || c.Verdict == capability.VerdictError:
		r.support = capability.Unsupported
		if os == "windows" {
			r.support = capability.NotApplicable
		}
		r.why += fmt.Sprintf("; declared %s until a run observes it", r.support)
	default:
		r.support = capability.Unsupported
	}
	return r
}

// ObservedProfile reads a probe's matrix at one layer as a profile for the
// runtime it ran against, named after the runtime and its handler (or OCI
// runtime), matching the same runtime name and handler.
func ObservedProfile(m capability.Matrix, layer capability.Layer) (Observed, error) {
	rt := m.Runtime
	if lrt, ok := m.LayerRuntimes[layer]; ok {
		rt = lrt
	}
	os := rt.OS
	if os == "" {
		os = "linux"
	}
	handler := rt.Handler
	if handler == "default" {
		handler = ""
	}
	p := &Profile{
		Name:         profileName(rt.Name, handler, rt.OCIRuntime),
		Description:  fmt.Sprintf("%s %s on %s, as ectest's probe observed it%s", rt.Name, rt.Version, os, parenthesize(ociStack(rt))),
		OS:           os,
		Match:        Match{RuntimeName: rt.Name, RuntimeHandler: handler},
		Capabilities: map[capability.Name]capability.Support{},
	}
	cells := map[capability.Name]capability.Cell{}
	for _, row := range m.Rows {
		cells[row.Capability] = row.Layers[layer]
	}
	readings := map[capability.Name]reading{}
	for _, d := range capability.All() {
		r := read(d, cells[d.Name], os)
		readings[d.Name] = r
		p.Capabilities[d.Name] = r.support
	}
	out := Observed{Profile: p}
	if b, err := Detect(rt.Name, os, handler); err == nil {
		out.Builtin = b.Name
		for _, d := range capability.All() {
			if got, want := p.Capabilities[d.Name], b.Capabilities[d.Name]; got != want {
				why := ""
				if r := readings[d.Name]; r.status == "BLOCKED" || r.status == "NOT OBSERVED" {
					why = ", " + strings.ToLower(r.status) + ": " + r.why
				}
				out.Differences = append(out.Differences, fmt.Sprintf("%s %s (builtin: %s%s)", d.Name, got, want, why))
			}
		}
	}

	var b strings.Builder
	comment := func(indent, s string) {
		for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			fmt.Fprintf(&b, "%s# %s\n", indent, strings.TrimRight(oneLine(line), " "))
		}
	}
	comment("", fmt.Sprintf(`Observed by ectest's probe (-profile=probe) at the %s layer: what the runtime
did, not what anyone declared. Review every line before committing this as the
runtime's profile (runtimes/profiles/, or -profile=FILE); the evidence of each
observation is in matrix.md beside this file, and in ginkgo-report.json.
runtime: %s %s (CRI %s), endpoint %s`, layer, rt.Name, rt.Version, rt.APIVersion, rt.Endpoint))
	if st := rt.Stack(); st != "" {
		comment("", "stack: "+st)
	}
	comment("", "compared with what -profile=auto picks: "+out.Comparison())
	fmt.Fprintf(&b, "name: %s\n", p.Name)
	fmt.Fprintf(&b, "description: %s\n", quote(p.Description))
	fmt.Fprintf(&b, "os: %s\n", p.OS)
	fmt.Fprintf(&b, "match:\n  runtimeName: %s\n", quote(p.Match.RuntimeName))
	if p.Match.RuntimeHandler != "" {
		fmt.Fprintf(&b, "  runtimeHandler: %s\n", quote(p.Match.RuntimeHandler))
	}
	b.WriteString("capabilities:\n")
	for _, d := range capability.All() {
		r, c := readings[d.Name], cells[d.Name]
		head := r.status
		if len(c.Observed) > 0 {
			head += "; observed: " + strings.Join(c.Observed, "; ")
		}
		comment("  ", head)
		if r.why != "" {
			comment("  ", "  "+r.why)
		}
		for i, s := range c.Specs {
			if i == 3 {
				comment("  ", fmt.Sprintf("  and %d more specs", len(c.Specs)-3))
				break
			}
			comment("  ", fmt.Sprintf("  spec (%s): %s", s.State, s.Name))
		}
		if r.status != "works" {
			shown := 0
			for _, o := range c.Observations {
				if o.Outcome == capability.Works || o.Evidence == "" {
					continue
				}
				if shown == 3 {
					comment("  ", "  more evidence in matrix.md")
					break
				}
				shown++
				ev := strings.Split(strings.TrimSpace(o.Evidence), "\n")
				if len(ev) > 3 {
					ev = append(ev[:3], "...")
				}
				what := o.Observed
				if o.Case != "" {
					what = o.Case + ": " + what
				}
				comment("  ", "  evidence ("+what+"): "+strings.Join(ev, " | "))
			}
		}
		fmt.Fprintf(&b, "  %s: %s\n", d.Name, r.support)
	}
	out.YAML = []byte(b.String())
	if _, err := Parse(out.YAML, "observed profile"); err != nil {
		return out, fmt.Errorf("the observed profile does not load: %w", err)
	}
	return out, nil
}

var nameChars = regexp.MustCompile(`[^a-z0-9]+`)

// profileName is runtime-handler, or runtime-ociruntime for the default
// handler when the OCI runtime is known: containerd-runc, containerd-runsc.
func profileName(runtime, handler, oci string) string {
	parts := []string{runtime}
	switch {
	case handler != "":
		parts = append(parts, handler)
	case oci != "":
		parts = append(parts, strings.Fields(oci)[0])
	}
	name := strings.Trim(nameChars.ReplaceAllString(strings.ToLower(strings.Join(parts, "-")), "-"), "-")
	if name == "" || name == Auto || name == Probe {
		name = "observed"
	}
	return name
}

// ociStack names the OCI runtime and handler, where known.
func ociStack(rt capability.RuntimeInfo) string {
	var parts []string
	if rt.OCIRuntime != "" {
		parts = append(parts, "OCI runtime "+rt.OCIRuntime)
	}
	if rt.Handler != "" && rt.Handler != "default" {
		parts = append(parts, "handler "+rt.Handler)
	}
	return strings.Join(parts, ", ")
}

func parenthesize(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// quote makes a YAML scalar of s: a JSON string is a YAML double-quoted one.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// oneLine makes s safe inside a YAML comment: no line breaks (YAML 1.1's
// included) and no control characters, which YAML refuses anywhere.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}
