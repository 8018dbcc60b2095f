package runtimes

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
)

// probeMatrix computes a matrix the way a probe run does: the observations
// judged against ProbeProfile's declarations.
func probeMatrix(rt capability.RuntimeInfo, obs ...capability.Observation) capability.Matrix {
	var specs []capability.SpecObservations
	for i, o := range obs {
		o.Layer = capability.LayerCRI
		specs = append(specs, capability.SpecObservations{
			Spec:         capability.SpecRef{Name: "spec " + string(o.Capability) + " " + string(rune('a'+i)), State: "passed"},
			Observations: []capability.Observation{o},
		})
	}
	return capability.Compute(rt, Probe, ProbeProfile(rt.OS).Capabilities, []capability.Layer{capability.LayerCRI}, specs)
}

func TestObservedProfileRoundTripsThroughTheLoader(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "v2.4.2", APIVersion: "v1", Endpoint: "unix:///x.sock", OS: "linux",
		Handler: "default", OCIRuntime: "runc 1.5.2", Kernel: "6.1.0", Cgroups: "v1"}
	m := probeMatrix(rt,
		capability.Observation{Capability: capability.PIDTarget, Outcome: capability.Deviated, Observed: "pod namespace",
			Evidence: "PID 1 /pause\n\x1b[1mPID 7 /target\x1b[0m\r\nline\u2028three\nfour\nfive"},
		capability.Observation{Capability: capability.ProcRootFS, Outcome: capability.Works, Observed: "marker read"},
		capability.Observation{Capability: capability.PtraceRules, Outcome: capability.Refused, Observed: "refused: InvalidArgument: no", Evidence: "InvalidArgument: no"},
		capability.Observation{Capability: capability.StoryOps, Outcome: capability.Deviated, Observed: "accepted", Evidence: "ran # in the wrong namespace: \"x\""},
		capability.Observation{Capability: capability.UnknownModeError, Outcome: capability.Deviated, Observed: "accepted", Case: "PID mode 42", Evidence: "created"},
		capability.Observation{Capability: capability.UsernsPod, Outcome: capability.Works, Observed: "the sandbox's user namespace"},
	)
	// Only the mandatory capability is nonconformant; the optional ones are probed.
	for _, row := range m.Rows {
		v := row.Layers[capability.LayerCRI].Verdict
		switch row.Capability {
		case capability.PIDTarget, capability.UnknownModeError:
			if v != capability.Nonconformant {
				t.Errorf("%s: verdict %s, want nonconformant (every Linux runtime must support it)", row.Capability, v)
			}
		case capability.ProcRootFS, capability.PtraceRules, capability.StoryOps:
			if v != capability.VerdictProbed {
				t.Errorf("%s: verdict %s, want probed", row.Capability, v)
			}
		}
	}
	o, err := ObservedProfile(m, capability.LayerCRI)
	if err != nil {
		t.Fatalf("%v\n%s", err, o.YAML)
	}
	p, err := Parse(o.YAML, "round trip")
	if err != nil {
		t.Fatalf("the loader refuses the observed profile: %v\n%s", err, o.YAML)
	}
	if !reflect.DeepEqual(p, o.Profile) {
		t.Errorf("loaded %+v\nwritten %+v", p, o.Profile)
	}
	want := map[capability.Name]capability.Support{
		capability.PIDTarget:        capability.Supported, // mandatory: stays supported, marked NONCONFORMANT
		capability.UnknownModeError: capability.Supported,
		capability.ProcRootFS:       capability.Supported,
		capability.PtraceRules:      capability.Unsupported,
		capability.StoryOps:         capability.Unsupported, // deviated: no declaration makes it conformant
		capability.Logs:             capability.Supported,   // not observed, mandatory
		capability.HostProcessRules: capability.Supported,   // the cluster layer's only, mandatory
	}
	for n, s := range want {
		if p.Capabilities[n] != s {
			t.Errorf("%s: %s, want %s", n, p.Capabilities[n], s)
		}
	}
	if p.Name != "containerd-runc" || p.Match.RuntimeName != "containerd" || p.Match.RuntimeHandler != "" || p.OS != "linux" {
		t.Errorf("name %q, match %+v, os %s", p.Name, p.Match, p.OS)
	}
	text := string(o.YAML)
	for _, s := range []string{"# NONCONFORMANT; observed: pod namespace", "# DEVIATED; observed: accepted", "# refused; observed: refused: InvalidArgument", "spec (passed): spec pid-target a", "evidence (pod namespace): PID 1 /pause |", "evidence (PID mode 42: accepted)", "NOT OBSERVED", "# NOT AT THIS LAYER", "judged at the cluster layer only (the cluster suite's specs)"} {
		if !strings.Contains(text, s) {
			t.Errorf("the observed profile lacks %q:\n%s", s, text)
		}
	}
	if o.Builtin != "containerd-runc" || len(o.Differences) != 2 || !strings.Contains(o.Comparison(), "ptrace-rules unsupported (builtin: supported)") {
		t.Errorf("comparison with the builtin: %q", o.Comparison())
	}
}

func TestObservedProfileReproducesABuiltinAndNamesTheHandler(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "v2.4.2", OS: "linux", Handler: "runsc", OCIRuntime: "runsc release-20260905.0"}
	var obs []capability.Observation
	for _, d := range capability.All() {
		o := capability.Observation{Capability: d.Name, Outcome: capability.Works, Observed: "fine"}
		if d.Name == capability.UsernsPod { // the builtin declares it unsupported (google/gvisor#13303)
			o.Outcome, o.Observed = capability.Refused, "refused: Unknown: user namespaces are not supported"
		}
		obs = append(obs, o)
	}
	o, err := ObservedProfile(probeMatrix(rt, obs...), capability.LayerCRI)
	if err != nil {
		t.Fatal(err)
	}
	if o.Profile.Name != "containerd-runsc" || o.Profile.Match.RuntimeHandler != "runsc" {
		t.Errorf("name %s, match %+v", o.Profile.Name, o.Profile.Match)
	}
	if o.Builtin != "containerd-gvisor" || len(o.Differences) != 0 || o.Comparison() != "reproduces the builtin profile containerd-gvisor" {
		t.Errorf("comparison: %s", o.Comparison())
	}
}

func TestObservedProfileOnWindows(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "v2.4.2", OS: "windows"}
	o, err := ObservedProfile(probeMatrix(rt, capability.Observation{Capability: capability.NetPod, Outcome: capability.Works}), capability.LayerCRI)
	if err != nil {
		t.Fatalf("%v\n%s", err, o.YAML)
	}
	// Never observed: not applicable where the capability may be, supported where it must be.
	if s := o.Profile.Capabilities[capability.PIDTarget]; s != capability.NotApplicable {
		t.Errorf("pid-target on windows, not observed: %s", s)
	}
	if s := o.Profile.Capabilities[capability.Exec]; s != capability.Supported {
		t.Errorf("exec on windows, not observed: %s", s)
	}
}

func TestProbeProfileAndResolve(t *testing.T) {
	p := ProbeProfile("linux")
	for _, d := range capability.All() {
		if d.MandatoryOnOS("linux") != (p.Capabilities[d.Name] == capability.Supported) {
			t.Errorf("%s: probe declares %s", d.Name, p.Capabilities[d.Name])
		}
	}
	if got, err := Load(Probe); got != nil || err != nil {
		t.Errorf("Load(probe) = %v, %v: the probe's profile is made once the runtime's OS is known", got, err)
	}
	if got, _, err := Resolve(Probe, nil, "anything", "windows", 0, ""); err != nil || got.Name != Probe || got.OS != "windows" {
		t.Errorf("Resolve(probe) = %+v, %v", got, err)
	}
	if got, _, err := Resolve(Auto, nil, "containerd", "linux", 0, "runsc"); err != nil || got.Name != "containerd-gvisor" {
		t.Errorf("Resolve(auto) = %+v, %v", got, err)
	}
	if _, err := ParseSupportFromProfile("probe"); err == nil {
		t.Error("a profile file may not declare probe")
	}
}

// ParseSupportFromProfile parses one declaration the way a profile file's is.
func ParseSupportFromProfile(s string) (*Profile, error) {
	return Parse([]byte(full("linux", map[string]string{"proc-root-fs": s})), "t")
}

// A capability checked only through another one that did not work (gVisor:
// proc-root-fs, ptrace-rules and story-ops through pid-target) is no
// deviation of its own: worked where it could be checked, it is supported;
// blocked in every spec, it was not observed.
func TestBlockedObservationsAreNoDeviation(t *testing.T) {
	rt := capability.RuntimeInfo{Name: "containerd", Version: "v2.4.2", APIVersion: "v1", OS: "linux", Handler: "runsc", OCIRuntime: "runsc"}
	m := probeMatrix(rt,
		capability.Observation{Capability: capability.ProcRootFS, Outcome: capability.Blocked, Observed: "pid-target did not work"},
		capability.Observation{Capability: capability.ProcRootFS, Outcome: capability.Works, Observed: "target's marker file read"},
		capability.Observation{Capability: capability.PtraceRules, Outcome: capability.Blocked, Observed: "pid-target did not work"},
	)
	o, err := ObservedProfile(m, capability.LayerCRI)
	if err != nil {
		t.Fatalf("%v\n%s", err, o.YAML)
	}
	if got := o.Profile.Capabilities[capability.ProcRootFS]; got != capability.Supported {
		t.Errorf("proc-root-fs: %s, want supported (worked where it could be checked)\n%s", got, o.YAML)
	}
	if got := o.Profile.Capabilities[capability.PtraceRules]; got != capability.Unsupported {
		t.Errorf("ptrace-rules: %s, want unsupported until observed\n%s", got, o.YAML)
	}
	for _, s := range []string{"# works; observed:", "1 other observations blocked by pid-target", "# BLOCKED; observed:", "every spec of it was blocked by pid-target"} {
		if !strings.Contains(string(o.YAML), s) {
			t.Errorf("observed profile lacks %q:\n%s", s, o.YAML)
		}
	}
	if strings.Contains(string(o.YAML), "DEVIATED") {
		t.Errorf("a blocked observation read as a deviation:\n%s", o.YAML)
	}
}
