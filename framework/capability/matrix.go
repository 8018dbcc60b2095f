package capability

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// RuntimeInfo identifies the runtime under test.
type RuntimeInfo struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	APIVersion string `json:"apiVersion"`
	Endpoint   string `json:"endpoint"`
	OS         string `json:"os"`
	// OSEvidence says what told the node's OS (a named pipe, the runtime's
	// answers); WindowsBuild is a Windows node's OS build.
	OSEvidence   string `json:"osEvidence,omitempty"`
	WindowsBuild uint16 `json:"windowsBuild,omitempty"`
	// Embedded is true for the suite's own containerd.
	Embedded bool `json:"embedded"`
	// The rest of the stack, where the suite can tell ("" where not): the
	// embedded runtime's name, the OCI runtime and its version, the runtime
	// handler, the kernel and the cgroup layout.
	Flavor     string `json:"flavor,omitempty"`
	OCIRuntime string `json:"ociRuntime,omitempty"`
	Handler    string `json:"handler,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	Cgroups    string `json:"cgroups,omitempty"`
	// The cluster layer's: the kind node image's runtime, when the suite
	// built it (kind/nodeimage.NodeRuntimes), and the RuntimeClass the
	// specs' pods ran with (its handler is Handler).
	NodeRuntime  string `json:"nodeRuntime,omitempty"`
	RuntimeClass string `json:"runtimeClass,omitempty"`
	// Note is what every report of the runtime must say about how it was
	// assembled (the embedded cri-o's pinns is the project's stand-in,
	// runtimes/catalog.PinnsNote); Stack ends with it.
	Note string `json:"note,omitempty"`
}

// Stack renders the parts of the stack that are known, for a report header.
func (rt RuntimeInfo) Stack() string {
	var parts []string
	build := ""
	if rt.WindowsBuild != 0 {
		build = fmt.Sprint(rt.WindowsBuild)
	}
	for _, p := range [][2]string{{"embedded runtime", rt.Flavor}, {"kind node runtime", rt.NodeRuntime}, {"OCI runtime", rt.OCIRuntime}, {"RuntimeClass", rt.RuntimeClass}, {"handler", rt.Handler}, {"Windows OS build", build}, {"kernel", rt.Kernel}, {"cgroups", rt.Cgroups}, {"note:", rt.Note}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, ", ")
}

// SpecRef is one spec behind a matrix cell.
type SpecRef struct {
	Name         string   `json:"name"`
	State        string   `json:"state"`
	Requirements []string `json:"requirements,omitempty"`
}

// Cell is a capability's result at one layer.
type Cell struct {
	Verdict      Verdict       `json:"verdict"`
	Observed     []string      `json:"observed,omitempty"`
	Reasons      []string      `json:"reasons,omitempty"`
	Specs        []SpecRef     `json:"specs,omitempty"`
	Requirements []string      `json:"requirements,omitempty"`
	Observations []Observation `json:"observations,omitempty"`
	// ProfileMismatch: declared unsupported, yet observed working.
	ProfileMismatch bool `json:"profileMismatch,omitempty"`
}

// BlockedBy is what blocked a blocked cell of capability n: what its
// observations name, else n's own dependency (DependsOn).
func (c Cell) BlockedBy(n Name) Name {
	for _, o := range c.Observations {
		if o.Outcome == Blocked {
			return o.Blocker()
		}
	}
	return DependsOn(n)
}

// Row is one capability across layers.
type Row struct {
	Capability Name           `json:"capability"`
	Summary    string         `json:"summary"`
	Required   bool           `json:"required"`
	Declared   Support        `json:"declared"`
	Layers     map[Layer]Cell `json:"layers"`
}

// Build says which ectest made a report: its release (or source revision)
// and the commit it was built from.
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
}

// String is "v0.3.0 (commit 0123456789ab)".
func (b Build) String() string {
	if b.Commit == "" {
		return b.Version
	}
	return fmt.Sprintf("%s (commit %s)", b.Version, b.Commit[:min(12, len(b.Commit))])
}

// Matrix is the per-runtime capability matrix: declared against observed.
type Matrix struct {
	// Ectest is the suite that judged (absent from older reports).
	Ectest  *Build      `json:"ectest,omitempty"`
	Runtime RuntimeInfo `json:"runtime"`
	Profile string      `json:"profile"`
	Layers  []Layer     `json:"layers"`
	Rows    []Row       `json:"rows"`
	// LayerRuntimes is set on merged matrices: the runtime each layer was
	// observed on (the embedded containerd for cri, the kind node's for
	// cluster, say), which need not be the same runtime or version.
	LayerRuntimes map[Layer]RuntimeInfo `json:"layerRuntimes,omitempty"`
}

// SpecObservations are the observations one spec recorded, with its outcome.
type SpecObservations struct {
	Spec         SpecRef
	Observations []Observation
}

// Compute builds the matrix from the verdicts Checker.Record decided: it
// judges nothing again. A cell is nonconformant if any of its observations
// is; a cell whose specs ran but recorded nothing (they failed or were
// skipped before observing) is not-observed. A cell can never contradict
// its spec: when a spec failed and none of its observations explains the
// failure (none is nonconformant), its observations are no verdict, and
// their cells say error unless another spec found them nonconformant.
// An observation that carries no verdict (made without a Checker) is
// decided here by the same rule as Record's (Decide).
func Compute(rt RuntimeInfo, profile string, declared map[Name]Support, layers []Layer, specs []SpecObservations) Matrix {
	m := Matrix{Runtime: rt, Profile: profile, Layers: layers}
	byCap := map[Name]map[Layer]*Cell{}
	cell := func(n Name, l Layer) *Cell {
		if byCap[n] == nil {
			byCap[n] = map[Layer]*Cell{}
		}
		if byCap[n][l] == nil {
			byCap[n][l] = &Cell{Verdict: NotObserved}
		}
		return byCap[n][l]
	}
	for _, s := range specs {
		seen := map[Name]map[Layer]bool{}
		var judged []Observation
		for _, o := range s.Observations {
			def, err := Lookup(string(o.Capability))
			if err != nil {
				continue
			}
			if o.Verdict == "" {
				if o.Declared == "" {
					o.Declared = declared[o.Capability]
				}
				o = Decide(def, o)
			}
			judged = append(judged, o)
		}
		unexplained := failedState(s.Spec.State) && !slices.ContainsFunc(judged, func(o Observation) bool { return o.Verdict == Nonconformant })
		for _, o := range judged {
			c := cell(o.Capability, o.Layer)
			c.Observations = append(c.Observations, o)
			c.Observed = appendUnique(c.Observed, o.Observed)
			c.Reasons = appendUnique(c.Reasons, o.Reason)
			for _, r := range o.Requirements {
				c.Requirements = appendUnique(c.Requirements, r)
			}
			if unexplained && o.Verdict != VerdictError {
				o.Verdict, o.Reason = VerdictError, "the spec ended "+s.Spec.State+" after this observation: no verdict"
				c.Reasons = appendUnique(c.Reasons, o.Reason)
				c.Observations[len(c.Observations)-1] = o
			}
			if o.Outcome == Works && o.Declared == Unsupported {
				c.ProfileMismatch = true
			}
			switch {
			case o.Verdict == Nonconformant:
				c.Verdict = Nonconformant
			case o.Verdict == VerdictError && c.Verdict != Nonconformant:
				c.Verdict = VerdictError
			case o.Verdict == VerdictProbed && c.Verdict == NotObserved:
				c.Verdict = VerdictProbed
			case o.Verdict == VerdictBlocked:
				if c.Verdict == NotObserved {
					c.Verdict = VerdictBlocked
				}
			case o.Verdict == NotSupportedOnOS:
				if c.Verdict == NotObserved || c.Verdict == VerdictBlocked || c.Verdict == VerdictNotApplicable {
					c.Verdict = NotSupportedOnOS
				}
			case o.Verdict == VerdictNotApplicable:
				if c.Verdict == NotObserved || c.Verdict == VerdictBlocked {
					c.Verdict = VerdictNotApplicable
				}
			case c.Verdict == NotObserved || c.Verdict == VerdictBlocked || c.Verdict == VerdictNotApplicable:
				c.Verdict = Conformant
			}
			if seen[o.Capability] == nil {
				seen[o.Capability] = map[Layer]bool{}
			}
			if !seen[o.Capability][o.Layer] {
				seen[o.Capability][o.Layer] = true
				c.Specs = append(c.Specs, s.Spec)
			}
		}
	}
	for _, def := range all {
		d := declared[def.Name]
		row := Row{Capability: def.Name, Summary: def.Summary, Required: def.Required, Declared: d, Layers: map[Layer]Cell{}}
		for _, l := range layers {
			c := Cell{Verdict: NotObserved}
			switch p := byCap[def.Name][l]; {
			case p != nil:
				c = *p
			case !AtLayer(def.Name, l):
				c.Verdict = OtherLayer
				c.Reasons = []string{fmt.Sprintf("judged at the %s layer only: no spec of this layer has it to judge", OnlyAt(def.Name))}
			case d == NotApplicable:
				c.Verdict = VerdictNotApplicable
			}
			sort.Strings(c.Requirements)
			row.Layers[l] = c
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

// MarkUnverified turns the not-observed cells of layer into unverified for
// the capabilities the profile declares supported and the suite has specs
// for (expected: the capability labels of the run's specs, run or not). Call
// it for full runs only: a focused run leaves capabilities unobserved on
// purpose.
func (m *Matrix) MarkUnverified(layer Layer, expected map[Name]bool) {
	for i, r := range m.Rows {
		c, ok := r.Layers[layer]
		if !ok || c.Verdict != NotObserved || r.Declared != Supported || !expected[r.Capability] {
			continue
		}
		c.Verdict = Unverified
		c.Reasons = append(c.Reasons, "declared supported, and no spec of this full run observed it (its specs skipped or recorded nothing)")
		m.Rows[i].Layers[layer] = c
	}
}

// Unverified lists the capabilities left unverified at any layer.
func (m Matrix) Unverified() []Name {
	return m.where(func(c Cell) bool { return c.Verdict == Unverified })
}

// Blocked lists the capabilities blocked by a dependency at any layer.
func (m Matrix) Blocked() []Name {
	return m.where(func(c Cell) bool { return c.Verdict == VerdictBlocked })
}

// NotSupportedOnOS lists the capabilities observed as not supported on the
// node's OS at any layer.
func (m Matrix) NotSupportedOnOS() []Name {
	return m.where(func(c Cell) bool { return c.Verdict == NotSupportedOnOS })
}

// Errors lists the capabilities whose verdict is error at any layer.
func (m Matrix) Errors() []Name {
	return m.where(func(c Cell) bool { return c.Verdict == VerdictError })
}

// ProfileMismatches lists the capabilities declared unsupported but seen working.
func (m Matrix) ProfileMismatches() []Name {
	return m.where(func(c Cell) bool { return c.ProfileMismatch })
}

// Nonconformant lists the capabilities judged nonconformant at any layer.
func (m Matrix) Nonconformant() []Name {
	return m.where(func(c Cell) bool { return c.Verdict == Nonconformant })
}

// Conformant lists the capabilities judged conformant at some layer and
// nonconformant at none.
func (m Matrix) Conformant() []Name {
	bad := map[Name]bool{}
	for _, n := range m.Nonconformant() {
		bad[n] = true
	}
	var out []Name
	for _, n := range m.where(func(c Cell) bool { return c.Verdict == Conformant }) {
		if !bad[n] {
			out = append(out, n)
		}
	}
	return out
}

// where lists the capabilities with a cell, at any layer, that ok accepts.
func (m Matrix) where(ok func(Cell) bool) []Name {
	var out []Name
	for _, r := range m.Rows {
		for _, l := range m.Layers {
			if ok(r.Layers[l]) {
				out = append(out, r.Capability)
				break
			}
		}
	}
	return out
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
