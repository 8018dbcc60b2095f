package capability

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	mode := MustLookup(PIDTarget)            // judged against the declaration
	required := MustLookup(UnknownModeError) // must work whatever is declared
	cases := []struct {
		def      Definition
		declared Support
		outcome  Outcome
		want     Verdict
	}{
		{mode, Supported, Works, Conformant},
		{mode, Supported, Refused, Nonconformant},
		{mode, Supported, Deviated, Nonconformant},
		{mode, Unsupported, Refused, Conformant},
		{mode, Unsupported, Works, Conformant},
		{mode, Unsupported, Deviated, Nonconformant},
		{mode, NotApplicable, Deviated, Nonconformant},
		{required, Supported, Works, Conformant},
		{required, Unsupported, Refused, Nonconformant},
		{required, Unsupported, Deviated, Nonconformant},
		{required, Unsupported, Works, Conformant},
		// A probe records what it sees of a capability it declared nothing for.
		{mode, Probed, Works, VerdictProbed},
		{mode, Probed, Refused, VerdictProbed},
		{mode, Probed, Deviated, VerdictProbed},
	}
	for _, c := range cases {
		got, reason := Judge(c.def, c.declared, c.outcome)
		if got != c.want || reason == "" {
			t.Errorf("Judge(%s required=%v, %s, %s) = %s (%q), want %s", c.def.Name, c.def.Required, c.declared, c.outcome, got, reason, c.want)
		}
	}
}

func TestLookupAndParseSupport(t *testing.T) {
	if _, err := Lookup("pid-target"); err != nil {
		t.Error(err)
	}
	if _, err := Lookup("pid-targett"); err == nil {
		t.Error("unknown capability accepted")
	}
	for _, s := range []string{"supported", "unsupported", "not-applicable"} {
		if _, err := ParseSupport(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseSupport(string(Probed)); err == nil {
		t.Error("a profile may not declare probe: only -profile=probe does")
	}
	if _, err := ParseSupport("yes"); err == nil {
		t.Error("invalid support accepted")
	}
	seen := map[Name]bool{}
	for _, d := range All() {
		if seen[d.Name] || d.Summary == "" || len(d.Requirements) == 0 {
			t.Errorf("capability %s: duplicate, or no summary or requirements", d.Name)
		}
		seen[d.Name] = true
	}
}

func TestComputeMatrix(t *testing.T) {
	declared := map[Name]Support{PIDTarget: Supported, UnknownModeError: Supported, PIDNode: NotApplicable}
	for _, d := range All() {
		if _, ok := declared[d.Name]; !ok {
			declared[d.Name] = Supported
		}
	}
	specs := []SpecObservations{
		{Spec: SpecRef{Name: "targets", State: "passed"}, Observations: []Observation{{Capability: PIDTarget, Layer: LayerCRI, Outcome: Works, Observed: "target namespace"}}},
		{Spec: SpecRef{Name: "mode 42 pid", State: "failed"}, Observations: []Observation{{Capability: UnknownModeError, Layer: LayerCRI, Outcome: Deviated, Observed: "accepted silently", Case: "pid"}}},
		{Spec: SpecRef{Name: "mode 42 net", State: "passed"}, Observations: []Observation{{Capability: UnknownModeError, Layer: LayerCRI, Outcome: Works, Observed: "rejected", Case: "net"}}},
		{Spec: SpecRef{Name: "cluster targets", State: "passed"}, Observations: []Observation{{Capability: PIDTarget, Layer: LayerCluster, Outcome: Deviated, Observed: "pod namespace"}}},
	}
	m := Compute(RuntimeInfo{Name: "r"}, "p", declared, []Layer{LayerCRI, LayerCluster}, specs)
	row := func(n Name) Row {
		for _, r := range m.Rows {
			if r.Capability == n {
				return r
			}
		}
		t.Fatalf("no row %s", n)
		return Row{}
	}
	if v := row(PIDTarget).Layers[LayerCRI].Verdict; v != Conformant {
		t.Errorf("pid-target cri: %s", v)
	}
	if v := row(PIDTarget).Layers[LayerCluster].Verdict; v != Nonconformant {
		t.Errorf("pid-target cluster: %s", v)
	}
	uc := row(UnknownModeError).Layers[LayerCRI]
	if uc.Verdict != Nonconformant || len(uc.Specs) != 2 || len(uc.Observed) != 2 {
		t.Errorf("one nonconformant case makes the cell nonconformant, with both specs: %+v", uc)
	}
	if v := row(PIDNode).Layers[LayerCRI].Verdict; v != VerdictNotApplicable {
		t.Errorf("not-applicable and unobserved: %s", v)
	}
	if v := row(Logs).Layers[LayerCRI].Verdict; v != NotObserved {
		t.Errorf("unobserved: %s", v)
	}
	if len(m.Rows) != len(All()) {
		t.Errorf("rows %d, capabilities %d", len(m.Rows), len(All()))
	}
	nc := m.Nonconformant()
	if len(nc) != 2 || nc[0] != PIDTarget || nc[1] != UnknownModeError {
		t.Errorf("Nonconformant() = %v", nc)
	}
}

// A cell never contradicts its spec: a spec that failed with no
// nonconformant observation makes its observations errors, not verdicts;
// a failure explained by a nonconformance leaves the others' verdicts.
func TestFailedSpecMakesItsObservationsErrors(t *testing.T) {
	declared := map[Name]Support{PIDTarget: Supported, StoryOps: Supported, ProcRootFS: Unsupported}
	m := Compute(RuntimeInfo{}, "p", declared, []Layer{LayerCRI}, []SpecObservations{
		{Spec: SpecRef{Name: "helper timed out after observing [CRI-2]", State: "failed"},
			Observations: []Observation{{Capability: PIDTarget, Layer: LayerCRI, Outcome: Works}}},
		{Spec: SpecRef{Name: "explained [STORY-OPS]", State: "failed"},
			Observations: []Observation{{Capability: ProcRootFS, Layer: LayerCRI, Outcome: Works}, {Capability: StoryOps, Layer: LayerCRI, Outcome: Deviated}}},
	})
	row := func(n Name) Cell {
		for _, r := range m.Rows {
			if r.Capability == n {
				return r.Layers[LayerCRI]
			}
		}
		return Cell{}
	}
	if c := row(PIDTarget); c.Verdict != VerdictError {
		t.Errorf("pid-target: %s, want error", c.Verdict)
	}
	if c := row(StoryOps); c.Verdict != Nonconformant {
		t.Errorf("story-ops: %s", c.Verdict)
	}
	if c := row(ProcRootFS); c.Verdict != Conformant || !c.ProfileMismatch {
		t.Errorf("proc-root-fs: %s, mismatch %v", c.Verdict, c.ProfileMismatch)
	}
	if e := m.Errors(); len(e) != 1 || e[0] != PIDTarget {
		t.Errorf("Errors() = %v", e)
	}
}

// A blocked capability is no verdict of its own; the dependency carries it.
func TestBlockedAndUnverified(t *testing.T) {
	if v, reason := Judge(MustLookup(ProcRootFS), Supported, Blocked); v != VerdictBlocked || reason == "" {
		t.Errorf("blocked proc-root-fs judged %s (%q)", v, reason)
	}
	if DependsOn(ProcRootFS) != PIDTarget || DependsOn(PIDTarget) != "" {
		t.Error("dependencies wrong")
	}
	declared := map[Name]Support{PIDTarget: Supported, ProcRootFS: Supported, NetPod: Supported, IPCPod: Unsupported, Exec: Supported}
	m := Compute(RuntimeInfo{}, "p", declared, []Layer{LayerCRI}, []SpecObservations{
		{Spec: SpecRef{Name: "fs", State: "skipped"}, Observations: []Observation{{Capability: ProcRootFS, Layer: LayerCRI, Outcome: Blocked}}},
		{Spec: SpecRef{Name: "pull", State: "failed"}, Observations: []Observation{{Capability: PullAtDebugTime, Layer: LayerCRI, Outcome: Refused, EnvironmentError: "registry down"}}},
	})
	// Specs exist for net-pod, ipc-pod and pid-target; exec has none in this run.
	m.MarkUnverified(LayerCRI, map[Name]bool{PIDTarget: true, NetPod: true, IPCPod: true, ProcRootFS: true})
	want := map[Name]Verdict{ProcRootFS: VerdictBlocked, PullAtDebugTime: VerdictError, PIDTarget: Unverified, NetPod: Unverified, IPCPod: NotObserved, Exec: NotObserved}
	for _, r := range m.Rows {
		if w, ok := want[r.Capability]; ok && r.Layers[LayerCRI].Verdict != w {
			t.Errorf("%s: %s, want %s", r.Capability, r.Layers[LayerCRI].Verdict, w)
		}
	}
}

// What the node's OS has no such thing for is recorded, never skipped: a
// not-applicable declaration with the OS's observation is "not supported
// on this OS"; the same observation against any other declaration is a
// nonconformance (the profile claims what the OS cannot do).
func TestNotSupportedOnOS(t *testing.T) {
	for _, c := range []struct {
		n        Name
		declared Support
		want     Verdict
	}{
		{PIDTarget, NotApplicable, NotSupportedOnOS},
		{TargetIDValidation, NotApplicable, NotSupportedOnOS}, // required, but absent on the OS
		{PIDTarget, Supported, Nonconformant},
		{PIDTarget, Unsupported, Nonconformant},
		{UnknownModeError, Supported, Nonconformant},
	} {
		if v, reason := Judge(MustLookup(c.n), c.declared, NotOnOS); v != c.want || reason == "" {
			t.Errorf("Judge(%s, %s, not-on-this-os) = %s (%q), want %s", c.n, c.declared, v, reason, c.want)
		}
	}
	declared := map[Name]Support{PIDTarget: NotApplicable, IPCPod: NotApplicable, PtraceRules: NotApplicable, NetPod: Supported}
	m := Compute(RuntimeInfo{OS: "windows"}, "p", declared, []Layer{LayerCRI}, []SpecObservations{
		{Spec: SpecRef{Name: "target [WIN-2]", State: "passed"}, Observations: []Observation{{Capability: PIDTarget, Layer: LayerCRI, Outcome: NotOnOS, Observed: "accepted; none of the target's processes visible"}}},
		{Spec: SpecRef{Name: "ipc [WIN-1]", State: "passed"}, Observations: []Observation{{Capability: IPCPod, Layer: LayerCRI, Outcome: NotOnOS, Observed: "accepted; no IPC namespace option"}}},
	})
	want := map[Name]Verdict{PIDTarget: NotSupportedOnOS, IPCPod: NotSupportedOnOS, PtraceRules: VerdictNotApplicable}
	for _, r := range m.Rows {
		if w, ok := want[r.Capability]; ok {
			c := r.Layers[LayerCRI]
			if c.Verdict != w {
				t.Errorf("%s: %s, want %s", r.Capability, c.Verdict, w)
			}
			if w == NotSupportedOnOS && (len(c.Observed) != 1 || len(c.Observations) != 1) {
				t.Errorf("%s: the cell must carry the observation: %+v", r.Capability, c)
			}
		}
	}
	if got := m.NotSupportedOnOS(); len(got) != 2 || len(m.Nonconformant()) != 0 {
		t.Errorf("NotSupportedOnOS() = %v, Nonconformant() = %v", got, m.Nonconformant())
	}
	if NotSupportedOnOS.Text() != "not supported on this OS" || Conformant.Text() != "conformant" {
		t.Error("verdict texts")
	}
	// The OSes where a capability is absent are where no profile may claim it.
	for _, d := range All() {
		for _, os := range d.AbsentOn {
			if d.MandatoryOnOS(os) {
				t.Errorf("%s is both mandatory and absent on %s", d.Name, os)
			}
		}
	}
}

// A capability judged at one layer only has, at every other layer, a cell
// that says so: never not-observed (which a CRI run would read as a gap),
// never unverified, and at its own layer it is judged as any other.
func TestOnlyAtOneLayer(t *testing.T) {
	if OnlyAt(HostProcessRules) != LayerCluster || !AtLayer(HostProcessRules, LayerCluster) || AtLayer(HostProcessRules, LayerCRI) || !AtLayer(PIDTarget, LayerCRI) {
		t.Fatal("hostprocess-rules is the cluster layer's only; pid-target every layer's")
	}
	declared := map[Name]Support{HostProcessRules: Supported, PIDTarget: Supported}
	specs := []SpecObservations{{Spec: SpecRef{Name: "hostprocess [WIN-4]", State: "failed"}, Observations: []Observation{
		{Capability: HostProcessRules, Layer: LayerCluster, Outcome: Works, Case: "accepted"},
		{Capability: HostProcessRules, Layer: LayerCluster, Outcome: Deviated, Case: "rejected"},
	}}}
	m := Compute(RuntimeInfo{OS: "linux"}, "p", declared, []Layer{LayerCRI, LayerCluster}, specs)
	m.MarkUnverified(LayerCRI, map[Name]bool{HostProcessRules: true, PIDTarget: true})
	for _, r := range m.Rows {
		switch r.Capability {
		case HostProcessRules:
			if c := r.Layers[LayerCRI]; c.Verdict != OtherLayer || len(c.Reasons) != 1 {
				t.Errorf("cri cell: %+v, want other-layer with its reason", c)
			}
			if c := r.Layers[LayerCluster]; c.Verdict != Nonconformant || len(c.Observations) != 2 {
				t.Errorf("cluster cell: %+v, want nonconformant (the required rule deviated once)", c)
			}
		case PIDTarget:
			if c := r.Layers[LayerCRI]; c.Verdict != Unverified {
				t.Errorf("pid-target at cri: %s, want unverified", c.Verdict)
			}
		}
	}
	if OtherLayer.Text() == string(OtherLayer) {
		t.Error("other-layer needs a text for reports")
	}
}

// A skew cluster's kubelets each have their own column: a verdict on one
// kubelet is never another's, nor the cluster layer's.
func TestKubeletLayersKeepVerdictsApart(t *testing.T) {
	old, cur := KubeletLayer("v1.34.10"), KubeletLayer("v1.37.1")
	if v, ok := old.Kubelet(); !ok || v != "v1.34.10" {
		t.Errorf("Kubelet() of %s = %q, %v", old, v, ok)
	}
	for _, l := range []Layer{LayerCluster, LayerCRI, "kubelet-"} {
		if v, ok := l.Kubelet(); ok {
			t.Errorf("%q is no kubelet layer, got %q", l, v)
		}
	}
	declared := map[Name]Support{}
	for _, d := range All() {
		declared[d.Name] = Supported
	}
	specs := []SpecObservations{
		{Spec: SpecRef{Name: "targets kubelet v1.34.10", State: "failed"}, Observations: []Observation{{Capability: PIDTarget, Layer: old, Outcome: Deviated, Observed: "pod namespace"}}},
		{Spec: SpecRef{Name: "targets kubelet v1.37.1", State: "passed"}, Observations: []Observation{{Capability: PIDTarget, Layer: cur, Outcome: Works, Observed: "target namespace"}}},
		{Spec: SpecRef{Name: "targets", State: "passed"}, Observations: []Observation{{Capability: PIDTarget, Layer: LayerCluster, Outcome: Works, Observed: "target namespace"}}},
	}
	m := Compute(RuntimeInfo{Name: "containerd"}, "p", declared, []Layer{LayerCluster, cur, old}, specs)
	for _, r := range m.Rows {
		if r.Capability != PIDTarget {
			continue
		}
		if r.Layers[LayerCluster].Verdict != Conformant || r.Layers[cur].Verdict != Conformant || r.Layers[old].Verdict != Nonconformant {
			t.Errorf("verdicts mixed between layers: %+v", r.Layers)
		}
		if len(r.Layers[old].Specs) != 1 || r.Layers[old].Specs[0].Name != "targets kubelet v1.34.10" {
			t.Errorf("the old kubelet's cell has others' specs: %+v", r.Layers[old].Specs)
		}
	}
}

func TestExtraRequirements(t *testing.T) {
	c := (&Checker{ExtraRequirements: []string{"SKEW-1", "CRI-2"}}).ForSpec(PIDTarget)
	if got := c.requirements(MustLookup(PIDTarget)); len(got) != 2 || got[0] != "CRI-2" || got[1] != "SKEW-1" {
		t.Errorf("requirements = %v, want the capability's then the extra ones, once each", got)
	}
	if got := (&Checker{}).requirements(MustLookup(Logs)); len(got) != 2 {
		t.Errorf("no extras: %v", got)
	}
}

// A capability blocked by what the spec observes through (exec at the
// cluster layer) names that blocker, in the cell and in the reason.
func TestBlockedByNamesTheBlocker(t *testing.T) {
	m := Compute(RuntimeInfo{}, "p", map[Name]Support{NetPod: Supported, ProcRootFS: Supported}, []Layer{LayerCluster}, []SpecObservations{
		{Spec: SpecRef{Name: "net", State: "skipped"}, Observations: []Observation{{Capability: NetPod, Layer: LayerCluster, Outcome: Blocked, BlockedBy: Exec}}},
		{Spec: SpecRef{Name: "fs", State: "skipped"}, Observations: []Observation{{Capability: ProcRootFS, Layer: LayerCluster, Outcome: Blocked}}},
	})
	for _, r := range m.Rows {
		c := r.Layers[LayerCluster]
		want := map[Name]Name{NetPod: Exec, ProcRootFS: PIDTarget}[r.Capability]
		if want == "" {
			continue
		}
		if c.Verdict != VerdictBlocked || c.BlockedBy(r.Capability) != want || !strings.Contains(c.Observations[0].Reason, "blocked by "+string(want)+",") {
			t.Errorf("%s: %s, blocked by %q, reason %q; want blocked by %s", r.Capability, c.Verdict, c.BlockedBy(r.Capability), c.Observations[0].Reason, want)
		}
	}
}

// Compute carries the verdict Record decided: it judges an observation
// only when it carries none.
func TestComputeCarriesTheRecordedVerdict(t *testing.T) {
	declared := map[Name]Support{NetPod: Supported}
	recorded := Observation{Capability: NetPod, Layer: LayerCRI, Outcome: Deviated, Observed: "x", Declared: Supported, Verdict: VerdictError, Reason: "the suite's environment broke: registry down"}
	m := Compute(RuntimeInfo{}, "p", declared, []Layer{LayerCRI}, []SpecObservations{{Spec: SpecRef{Name: "s", State: "failed"}, Observations: []Observation{recorded}}})
	if c := m.Rows[7].Layers[LayerCRI]; m.Rows[7].Capability != NetPod || c.Verdict != VerdictError || c.Observations[0].Reason != recorded.Reason {
		t.Errorf("cell %+v, want the recorded error verdict", c)
	}
	unjudged := recorded
	unjudged.Verdict, unjudged.Reason = "", ""
	m = Compute(RuntimeInfo{}, "p", declared, []Layer{LayerCRI}, []SpecObservations{{Spec: SpecRef{Name: "s", State: "failed"}, Observations: []Observation{unjudged}}})
	if c := m.Rows[7].Layers[LayerCRI]; c.Verdict != Nonconformant {
		t.Errorf("unjudged: %s, want nonconformant (decided like Record)", c.Verdict)
	}
}

// A spec's verdict comes from what it recorded first, then from where and
// how it failed.
func TestJudgeSpec(t *testing.T) {
	nc := Observation{Capability: Exec, Verdict: Nonconformant}
	env := Observation{Capability: Exec, Verdict: VerdictError}
	for _, c := range []struct {
		name string
		end  SpecEnd
		want Verdict
	}{
		{"passed", SpecEnd{IsSpec: true, State: "passed"}, Conformant},
		{"skipped", SpecEnd{IsSpec: true, State: "skipped"}, NotObserved},
		{"judge assertion", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Message: "x"}, Nonconformant},
		{"recorded nonconformant", SpecEnd{IsSpec: true, State: "failed", Observations: []Observation{nc}}, Nonconformant},
		{"recorded environment error", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Observations: []Observation{env}}, VerdictError},
		{"environment message", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Message: EnvironmentErrorPrefix + "down"}, VerdictError},
		{"environment broken after the failure", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Message: "x", EnvironmentError: "the runtime went away at 10:00:00.000"}, VerdictError},
		{"setup", SpecEnd{IsSpec: true, State: "failed", Message: "x"}, VerdictError},
		{"timed out", SpecEnd{IsSpec: true, State: "timedout", FailedInSpecBody: true}, VerdictError},
		{"suite node", SpecEnd{State: "failed", FailedInSpecBody: false}, VerdictError},
		{"test double's judge assertion", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Message: "x", TestDouble: true}, VerdictError},
		{"test double, recorded nonconformant", SpecEnd{IsSpec: true, State: "failed", FailedInSpecBody: true, Observations: []Observation{nc}, TestDouble: true}, VerdictError},
		{"test double passed", SpecEnd{IsSpec: true, State: "passed", TestDouble: true}, Conformant},
	} {
		if got, why := JudgeSpec(c.end); got != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, got, why, c.want)
		}
	}
}
