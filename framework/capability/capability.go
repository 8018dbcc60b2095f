package capability

import (
	"fmt"
	"sort"
	"strings"
)

// Name identifies a capability, e.g. "pid-target". Names are API: profiles,
// labels and reports use them.
type Name string

// Definition describes one capability.
type Definition struct {
	Name    Name   `json:"name"`
	Summary string `json:"summary"`
	// Requirements are the IDs (REQUIREMENTS.md) the capability's specs verify.
	Requirements []string `json:"requirements"`
	// Required capabilities must work on every runtime the requirement
	// applies to: declaring them unsupported does not excuse a failure (a
	// runtime must reject an invalid target_id, whatever it declares). The
	// others are judged against the declaration: an unsupported mode is
	// conformant when the runtime refuses it with an error.
	Required bool `json:"required"`
	// MandatoryOn lists the node OSes on which a profile must declare the
	// capability supported: the namespace modes the CRI says every runtime
	// must support (the shared PID namespace design: PID POD, CONTAINER,
	// NODE and TARGET; network and IPC POD and NODE), and the required
	// capabilities wherever the OS's CRI has the field they concern. A
	// profile cannot excuse them; elsewhere a profile may declare the
	// capability unsupported, or not-applicable where the OS cannot have it
	// (WIN-1: Windows shares only the network between containers).
	MandatoryOn []string `json:"mandatoryOn,omitempty"`
	// AbsentOn lists the node OSes that have no such thing (WIN-1: Windows
	// shares only the network between containers, and its CRI config has
	// no PID or IPC namespace option and no target_id). A profile for such
	// an OS must declare the capability not-applicable, and what a runtime
	// there does instead is recorded as "not supported on this OS".
	AbsentOn []string `json:"absentOn,omitempty"`
}

var (
	linuxOnly   = []string{"linux"}
	everywhere  = []string{"linux", "windows"}
	nowhereMust []string
	onWindows   = []string{"windows"}
	nowhere     []string
)

// The capabilities. Keep All in the same order: it is the matrix's row order.
const (
	PIDContainer       Name = "pid-container"
	PIDPod             Name = "pid-pod"
	PIDNode            Name = "pid-node"
	PIDTarget          Name = "pid-target"
	PIDTargetPod       Name = "pid-target-pod"
	TargetIDValidation Name = "target-id-validation"
	UnknownModeError   Name = "unknown-namespace-mode-error"
	NetPod             Name = "net-pod"
	IPCPod             Name = "ipc-pod"
	NetNode            Name = "net-node"
	IPCNode            Name = "ipc-node"
	ProcRootFS         Name = "proc-root-fs"
	PtraceRules        Name = "ptrace-rules"
	NoSideEffects      Name = "no-side-effects"
	PullAtDebugTime    Name = "image-pull-at-debug-time"
	Exec               Name = "exec"
	Attach             Name = "attach"
	Logs               Name = "logs"
	StoryOps           Name = "story-ops"
	HostProcessRules   Name = "hostprocess-rules"
	UsernsPod          Name = "userns-pod"
	UsernsValidation   Name = "userns-validation"
	UsernsNode         Name = "userns-node"
	DebugProfileGrants Name = "debug-profile-grants"
	RemovedStaysGone   Name = "removed-stays-gone"
	ExitedStaysExited  Name = "exited-stays-exited"
	CgroupPod          Name = "cgroup-pod"
	Credentials        Name = "credentials"
)

var all = []Definition{
	{PIDContainer, "PID CONTAINER: an isolated PID namespace, the container's own process is PID 1", []string{"CRI-1"}, false, linuxOnly, onWindows},
	{PIDPod, "PID POD: containers of a sandbox share one PID namespace whose PID 1 is the infra process", []string{"CRI-1"}, false, linuxOnly, onWindows},
	{PIDNode, "PID NODE: the host's PID namespace", []string{"CRI-1"}, false, linuxOnly, onWindows},
	{PIDTarget, "PID TARGET into an isolated container: sees that container's processes and no sibling's", []string{"CRI-2"}, false, linuxOnly, onWindows},
	{PIDTargetPod, "PID TARGET into a container of a POD-mode sandbox joins the pod namespace", []string{"CRI-2"}, false, linuxOnly, onWindows},
	{TargetIDValidation, "target_id must name a container of the same sandbox; anything else is rejected", []string{"CRI-3"}, true, linuxOnly, onWindows},
	{UnknownModeError, "an unknown NamespaceMode value is an error, never a silent fallback", []string{"CRI-4", "SKEW-3"}, true, everywhere, nowhere},
	{NetPod, "containers of a sandbox share its network namespace (localhost, IP, hostname)", []string{"CRI-5"}, false, everywhere, nowhere},
	{IPCPod, "containers of a sandbox share its IPC namespace in POD mode", []string{"CRI-5"}, false, linuxOnly, onWindows},
	{NetNode, "network NODE: a sandbox in the host's network namespace", []string{"CRI-5"}, false, linuxOnly, nowhere},
	{IPCNode, "IPC NODE: a sandbox in the host's IPC namespace", []string{"CRI-5"}, false, linuxOnly, onWindows},
	{ProcRootFS, "a targeting debug container reads the target's filesystem through /proc/<pid>/root", []string{"CRI-6"}, false, nowhereMust, onWindows},
	{PtraceRules, "ptrace access rules: another user's process needs SYS_PTRACE, the same user's does not", []string{"SEC-3", "CRI-6", "STORY-DEBUG"}, false, nowhereMust, onWindows},
	{NoSideEffects, "a debug container's life leaves the target's state, start time, PID, attempt and landing record (namespaces, credentials, cgroups, oom_score_adj) unchanged", []string{"LIFE-5"}, true, everywhere, nowhere},
	{PullAtDebugTime, "the debug image is absent before and pulled at debug time", []string{"LIFE-6"}, true, everywhere, nowhere},
	{Exec, "ExecSync and streaming exec into a debug container", []string{"CRI-8"}, true, everywhere, nowhere},
	{Attach, "attach to a debug container with stdin and a TTY", []string{"CRI-8"}, true, everywhere, nowhere},
	{Logs, "a debug container's output is in its CRI log", []string{"CRI-8", "LIFE-4"}, true, everywhere, nowhere},
	{StoryOps, "the operations story end to end on a distroless target", []string{"STORY-OPS", "CRI-2", "CRI-5", "CRI-6"}, false, nowhereMust, onWindows},
	{HostProcessRules, "the API server holds Windows HostProcess pods to their rules: all containers HostProcess, ephemeral ones included, and hostNetwork true", []string{"WIN-4"}, true, everywhere, nowhere},
	// No requirement of REQUIREMENTS.md names user namespaces (the KEP and
	// the shared PID namespace design predate them): the closest are CRI-2
	// (a TARGET debug container lands where its target is) and CRI-6 (it
	// reads the target's files through /proc/<pid>/root), which a
	// user-namespace pod must keep too.
	{UsernsPod, "in a sandbox with a POD-mode user namespace, a TARGET debug container lands in the sandbox's user namespace (the target's and the infra process's, not the node's) with the maps asked for, and reads the target's files through /proc/<pid>/root", []string{"CRI-2", "CRI-6"}, false, nowhereMust, onWindows},
	// The CRI's UserNamespace message supports modes POD and NODE only,
	// and the kubelet sends every container its sandbox's: anything else
	// must be an error (CRI-4: a mode a runtime does not implement), never
	// a container silently placed elsewhere. Required: a runtime without
	// user namespaces refuses these too.
	{UsernsValidation, "a container of a user-namespace sandbox asking for user namespace mode TARGET or CONTAINER, or for maps other than its sandbox's, is refused", []string{"CRI-4"}, true, linuxOnly, onWindows},
	// Mode NODE is what the kubelet sends for every pod of hostUsers: true
	// (the default): a runtime with or without user namespaces keeps such
	// a sandbox's containers in the node's. Required.
	{UsernsNode, "in a sandbox whose user namespace is mode NODE (the kubelet's request for hostUsers: true), a TARGET debug container asking for NODE stays in the node's user namespace with the node's identity maps", []string{"CRI-2"}, true, linuxOnly, onWindows},
	// What kubectl debug --profile writes into the API object is kubectl's
	// doing and whether it is admitted the API server's (the profile specs
	// judge both as plain spec outcomes); what the debug process then holds
	// is the node's: the kubelet and the runtime turn the security context
	// into credentials. Required: any runtime must honour what a container
	// asks for, and give it nothing more (SEC-3).
	{DebugProfileGrants, "a debug container made by kubectl debug --profile holds what its security context asks for, no less and no more: the added capabilities, privileged's whole bounding set without seccomp, restricted's non-root user, no_new_privs, seccomp filter and empty capability sets, the node's root at /host", []string{"SEC-3"}, true, linuxOnly, onWindows},
	// LIFE-2 for an ephemeral container whose runtime record is lost
	// behind the kubelet's back (a node agent's crictl rm, a runtime that
	// lost its state): the kubelet must not start it again
	// (kubernetes/kubernetes#124176). The kubelet decides, with the
	// runtime's record: a stack-level capability of the cluster layer.
	{RemovedStaysGone, "an ephemeral container removed from the runtime behind the kubelet's back (crictl rm on the node) is not started again", []string{"LIFE-2"}, true, linuxOnly, nowhere},
	// LIFE-2 itself: an exited ephemeral container is never restarted,
	// whatever the pod's restartPolicy. The kubelet decides, from the
	// runtime's record of the exit: a stack-level capability of the
	// cluster layer, judged from the process's own trace of each start.
	{ExitedStaysExited, "an exited ephemeral container is never started again, whatever the pod's restartPolicy (Always, OnFailure, Never)", []string{"LIFE-2"}, true, everywhere, nowhere},
	// SEC-3: no resources beyond the pod's. The troubleshooting design
	// (seed 002, "Troubleshoot Running Pods") bills a debug container's
	// resources to the pod's cgroup; the kubelet gives each pod a cgroup
	// parent and every container of it, ephemeral ones included, the
	// same. Required on Linux; Windows has no cgroups.
	{CgroupPod, "a debug container's processes, exec sessions included, are charged to its sandbox's cgroup parent", []string{"SEC-3"}, true, linuxOnly, onWindows},
	// SEC-3: no privileges beyond what the spec asks, on every path into
	// the container. Windows has no Linux users or capabilities.
	{Credentials, "a debug container's own process and every exec and attach session hold the user, groups and capabilities its security context asks for, no more and no less", []string{"SEC-3"}, true, linuxOnly, onWindows},
}

// onlyAt: capabilities judged at one layer only. The HostProcess rules are
// the API server's (pkg/apis/core/validation): the cluster suite judges
// them on any cluster, and no CRI call has them to judge. User namespace
// requests other than the sandbox's exist only at the CRI.
var onlyAt = map[Name]Layer{
	HostProcessRules: LayerCluster,
	// The kubelet sends every container its pod's user namespace (one
	// hostUsers per pod): nothing a cluster accepts asks for another.
	UsernsValidation: LayerCRI,
	// At the cluster layer every ordinary pod is a NODE request, and no
	// cluster spec singles one out for a user-namespace judgement yet: the
	// CRI layer asks for NODE explicitly and judges where it lands.
	UsernsNode: LayerCRI,
	// kubectl debug exists only at the cluster layer.
	DebugProfileGrants: LayerCluster,
	// Only a kubelet starts containers on its own.
	RemovedStaysGone:  LayerCluster,
	ExitedStaysExited: LayerCluster,
}

// OnlyAt is the one layer a capability is judged at ("" for every layer).
func OnlyAt(n Name) Layer { return onlyAt[n] }

// AtLayer reports whether the capability is judged at layer l.
func AtLayer(n Name, l Layer) bool { return onlyAt[n] == "" || onlyAt[n] == l }

// MandatoryOnOS reports whether a profile for os must declare the
// capability supported.
func (d Definition) MandatoryOnOS(os string) bool {
	for _, o := range d.MandatoryOn {
		if o == os {
			return true
		}
	}
	return false
}

// AbsentOnOS reports whether os has no such thing (see AbsentOn).
func (d Definition) AbsentOnOS(os string) bool {
	for _, o := range d.AbsentOn {
		if o == os {
			return true
		}
	}
	return false
}

// All returns every capability definition in matrix order.
func All() []Definition { return append([]Definition(nil), all...) }

// Lookup finds a capability by name.
func Lookup(name string) (Definition, error) {
	for _, d := range all {
		if string(d.Name) == name {
			return d, nil
		}
	}
	names := make([]string, 0, len(all))
	for _, d := range all {
		names = append(names, string(d.Name))
	}
	sort.Strings(names)
	return Definition{}, fmt.Errorf("unknown capability %q (known: %s)", name, strings.Join(names, ", "))
}

// MustLookup is Lookup for names that are constants of this package.
func MustLookup(n Name) Definition {
	d, err := Lookup(string(n))
	if err != nil {
		panic(err)
	}
	return d
}

// Support is what a profile declares for a capability.
type Support string

const (
	Supported   Support = "supported"
	Unsupported Support = "unsupported"
	// NotApplicable: the capability cannot exist on this platform (PID
	// namespaces on Windows). Its specs skip with the reason.
	NotApplicable Support = "not-applicable"
	// Probed: what -profile=probe declares for a capability a runtime may
	// lack (runtimes.ProbeProfile). Its specs run and record what the
	// runtime does, and nothing is judged: the probe writes what it saw as
	// a profile for the vendor to review. Not a value a profile file may
	// give (ParseSupport refuses it).
	Probed Support = "probe"
)

// ParseSupport validates a declaration.
func ParseSupport(s string) (Support, error) {
	switch Support(s) {
	case Supported, Unsupported, NotApplicable:
		return Support(s), nil
	}
	return "", fmt.Errorf("invalid support %q (want supported, unsupported or not-applicable)", s)
}

// Outcome is what a spec saw the runtime do.
type Outcome string

const (
	// Works: the runtime did what the requirement says.
	Works Outcome = "works"
	// Refused: the runtime returned an error for the request.
	Refused Outcome = "refused"
	// Deviated: the runtime accepted the request and did something else
	// (joined another namespace, accepted an invalid value, ...).
	Deviated Outcome = "deviated"
	// Blocked: the capability could not be checked because a capability it
	// depends on (DependsOn) does not work in this spec; the observation
	// says what the dependency did. The dependency's own cell carries the
	// verdict.
	Blocked Outcome = "blocked"
	// Inapplicable: the capability can only be checked through another
	// (BlockedBy, DependsOn) that the runtime refused as its profile
	// declares: nothing failed, and there is nothing to check it through
	// (judged not applicable).
	Inapplicable Outcome = "inapplicable"
	// NotOnOS: the node's OS has no such thing (AbsentOn), and the spec
	// recorded what a debug container there observes instead: on Windows,
	// a debug container asked to target another is accepted and sees none
	// of its processes (WIN-1, WIN-2).
	NotOnOS Outcome = "not-on-this-os"
)

// Verdict is the judgement of a capability.
type Verdict string

const (
	Conformant    Verdict = "conformant"
	Nonconformant Verdict = "nonconformant"
	NotObserved   Verdict = "not-observed"
	// VerdictNotApplicable: declared not applicable and not exercised, or
	// checked only through a capability refused as declared (Inapplicable).
	VerdictNotApplicable Verdict = "not-applicable"
	// VerdictError: the spec that observed it failed for a reason of its
	// own (its environment, a helper), so the observation is no verdict;
	// the run fails as a run, not as the runtime's nonconformance.
	VerdictError Verdict = "error"
	// VerdictBlocked: every spec of the capability was blocked by a
	// capability it depends on; no verdict of its own.
	VerdictBlocked Verdict = "blocked"
	// Unverified: declared supported, specs for it exist in the suite, and a
	// full run observed it nowhere (they skipped, say): the declaration was
	// never checked, and the run fails as a run.
	Unverified Verdict = "unverified"
	// NotSupportedOnOS: declared not applicable because the node's OS has
	// no such thing, and observed so: the cell carries what a debug
	// container there observed instead (see NotOnOS). Not a verdict against
	// the runtime, and not a silent skip.
	NotSupportedOnOS Verdict = "not-supported-on-this-os"
	// VerdictProbed: observed in probe mode for a capability a runtime may
	// lack; recorded, not judged (see Probed).
	VerdictProbed Verdict = "probed"
	// OtherLayer: the capability is judged at another layer only (OnlyAt),
	// so this layer's cell has nothing to say either way.
	OtherLayer Verdict = "other-layer"
	// NotRun: the run (a matrix cell, a runtime of make runtimes) did not
	// happen, so nothing of it was judged.
	NotRun Verdict = "not-run"
	// NotCovered: the run's suites have no spec for it (an API-*
	// requirement in a CRI run): nothing to judge there.
	NotCovered Verdict = "not-covered"
)

// ProbeReading says what an outcome seen in probe mode means for the
// capability's declaration.
func ProbeReading(outcome Outcome) string {
	switch outcome {
	case Works:
		return "works: declare it supported"
	case Refused:
		return "refused at create with a refusal code: declare it unsupported"
	}
	return "accepted and did something else: nonconformant whichever way a profile declares it, until the runtime implements it or refuses it"
}

// Text is a verdict as reports print it.
func (v Verdict) Text() string {
	switch v {
	case NotSupportedOnOS:
		return "not supported on this OS"
	case OtherLayer:
		return "judged at another layer"
	case NotRun:
		return "not run"
	case NotCovered:
		return "no spec here"
	}
	return string(v)
}

// dependsOn: capabilities whose specs can only check them through another
// one. A debug container reads the target's files, ptraces its processes and
// replays the operations story through the target's PID namespace, so
// without pid-target there is nothing to check.
var dependsOn = map[Name]Name{
	ProcRootFS:  PIDTarget,
	PtraceRules: PIDTarget,
	StoryOps:    PIDTarget,
}

// DependsOn is the capability n can only be checked through ("" for none).
func DependsOn(n Name) Name { return dependsOn[n] }

// JudgeObservation judges o against what was declared for it (Judge); a
// blocked observation names what blocked it, its own BlockedBy or else the
// capability's dependency.
func JudgeObservation(def Definition, o Observation) (Verdict, string) {
	switch o.Outcome {
	case Blocked:
		return VerdictBlocked, fmt.Sprintf("not checked: blocked by %s, which did not work in this spec", o.Blocker())
	case Inapplicable:
		return VerdictNotApplicable, fmt.Sprintf("not applicable: it is checked only through %s, which the runtime refused as its profile declares", o.Blocker())
	}
	return Judge(def, o.Declared, o.Outcome)
}

// Decide is the one rule that gives an observation its verdict and reason:
// an observation made while the suite's environment was broken is no
// verdict (error); any other is judged against what was declared for it
// (o.Declared, JudgeObservation). Checker.Record calls it when the
// observation is made; the reports carry its result.
func Decide(def Definition, o Observation) Observation {
	if o.EnvironmentError != "" {
		o.Verdict, o.Reason = VerdictError, "the suite's environment broke: "+o.EnvironmentError
		return o
	}
	o.Verdict, o.Reason = JudgeObservation(def, o)
	return o
}

// Judge decides whether an outcome is conformant for what was declared.
func Judge(def Definition, declared Support, outcome Outcome) (Verdict, string) {
	if outcome == Blocked || outcome == Inapplicable {
		return JudgeObservation(def, Observation{Capability: def.Name, Outcome: outcome})
	}
	if declared == Probed {
		return VerdictProbed, "probe: " + ProbeReading(outcome)
	}
	if outcome == NotOnOS {
		if declared == NotApplicable {
			return NotSupportedOnOS, "not supported on this OS, as the profile declares; the observation says what a debug container sees instead"
		}
		return Nonconformant, fmt.Sprintf("declared %s, but the node's OS has no such thing: the runtime accepted the request and did something else", declared)
	}
	if outcome == Works {
		if declared == Unsupported {
			return Conformant, "works although the profile declares it unsupported"
		}
		return Conformant, "works as required"
	}
	if def.Required {
		return Nonconformant, fmt.Sprintf("%s, but every runtime must support this", outcome)
	}
	switch declared {
	case Supported:
		return Nonconformant, fmt.Sprintf("declared supported but %s", outcome)
	case Unsupported:
		if outcome == Refused {
			return Conformant, "declared unsupported and refused with an error"
		}
		return Nonconformant, "declared unsupported but accepted and did something else: a runtime must return an error for a mode it does not implement"
	}
	return Nonconformant, fmt.Sprintf("declared %s but exercised: %s", declared, outcome)
}
