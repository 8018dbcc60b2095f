package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The kubectl debug profiles, as k8s.io/kubectl pkg/cmd/debug/profiles.go
// defines them. That file is the same in every release read (v0.33.13,
// v0.34.10, v0.35.8, v0.36.4, v0.37.1) but for a comment marking legacy
// deprecated ("planned to be removed in v1.39") from v0.36.4; debug.go's
// --profile default is "legacy" up to v0.35.8 and "general" from v0.36.4,
// and from v0.36.4 an explicit --profile=legacy prints a deprecation line.
var debugProfiles = []string{"legacy", "general", "baseline", "restricted", "netadmin", "sysadmin"}

// The three ways kubectl debug makes a debug container.
const (
	styleEphemeral = "ephemeral" // kubectl debug POD --target
	styleCopy      = "copy"      // kubectl debug POD --copy-to
	styleNode      = "node"      // kubectl debug node/NODE
)

var debugStyles = []string{styleEphemeral, styleCopy, styleNode}

var psaLevels = []string{"privileged", "baseline", "restricted"}

// documentedSC is what a profile's Apply puts on the debug container and
// its pod, for one style, read from profiles.go (see debugProfiles): the
// container's security context as kubectl sets it, and the pod fields it
// touches. Fields kubectl leaves alone are the zero value.
func documentedSC(profile, style string) apiShape {
	var s apiShape
	hostNS := func() { s.HostPID, s.HostNetwork, s.HostIPC = true, true, true }
	switch profile {
	case "legacy":
		if style == styleNode { // mountRootPartition, useHostNamespaces
			s.HostRoot = true
			hostNS()
		}
	case "general":
		switch style {
		case styleNode: // mountRootPartition, clearSecurityContext, useHostNamespaces
			s.HostRoot = true
			hostNS()
		case styleCopy: // allowProcessTracing, shareProcessNamespace
			s.Add = []string{"SYS_PTRACE"}
			s.ShareProcessNamespace = true
		default: // allowProcessTracing
			s.Add = []string{"SYS_PTRACE"}
		}
	case "baseline": // clearSecurityContext
		s.ShareProcessNamespace = style == styleCopy
	case "restricted": // clearSecurityContext, disallowRoot, dropCapabilities, disallowPrivilegeEscalation, setSeccompProfile
		s.RunAsNonRoot, s.Drop, s.AllowPrivilegeEscalation, s.Seccomp = "true", []string{"ALL"}, "false", "RuntimeDefault"
		s.ShareProcessNamespace = style == styleCopy
	case "netadmin": // allowNetadminCapability
		s.Add = []string{"NET_ADMIN", "NET_RAW"}
		s.ShareProcessNamespace = style == styleCopy
		if style == styleNode {
			hostNS()
		}
	case "sysadmin": // setPrivileged
		s.Privileged = "true"
		s.ShareProcessNamespace = style == styleCopy
		if style == styleNode { // useHostNamespaces, mountRootPartition
			s.HostRoot = true
			hostNS()
		}
	}
	return s
}

// admittedUnder is Pod Security's verdict (k8s.io/pod-security-admission
// policy, the same checks in v0.33.13 to v0.37.1) on what a profile
// documents, in the namespaces these specs make: the target pod is
// restricted-compliant at pod level (runAsNonRoot, runAsUser 65534,
// seccomp RuntimeDefault) under baseline and restricted, so only the debug
// container and what the profile adds to the pod decide. Baseline refuses
// privileged, host namespaces, hostPath volumes and capabilities beyond
// its list (SYS_PTRACE, NET_ADMIN and NET_RAW are not on it); restricted
// also wants allowPrivilegeEscalation false and capabilities drop ALL on
// every container (and, for a node-debug pod, which has no pod-level
// settings, runAsNonRoot and a seccomp profile on the container).
func admittedUnder(level, style string, s apiShape) (bool, []string) {
	var common, baselineOnly []string
	if s.Privileged == "true" {
		common = append(common, privileged)
	}
	if s.HostPID || s.HostNetwork || s.HostIPC {
		common = append(common, "host namespaces")
	}
	// Restricted's own volume and capability checks override baseline's
	// (policy/check_restrictedVolumes.go, check_capabilities_restricted.go:
	// "OverrideCheckIDs"), so the refusal names those instead.
	if s.HostRoot {
		baselineOnly = append(baselineOnly, `hostPath volumes (volume "host-root")`)
	}
	if len(s.Add) > 0 {
		baselineOnly = append(baselineOnly, nonDefaultCaps)
	}
	switch level {
	case "privileged":
		return true, nil
	case "baseline":
		v := append(common, baselineOnly...)
		return len(v) == 0, v
	}
	restricted := common
	if s.HostRoot {
		restricted = append(restricted, `restricted volume types (volume "host-root" uses restricted volume type "hostPath")`)
	}
	if s.AllowPrivilegeEscalation != "false" {
		restricted = append(restricted, escalation)
	}
	if len(s.Drop) == 0 || s.Drop[0] != "ALL" || len(s.Add) > 0 {
		restricted = append(restricted, unrestrictedCaps)
	}
	if style == styleNode && s.RunAsNonRoot != "true" {
		restricted = append(restricted, "runAsNonRoot != true")
	}
	if style == styleNode && s.Seccomp == "" {
		restricted = append(restricted, "seccompProfile")
	}
	return len(restricted) == 0, restricted
}

// apiShape is the part of the API object a profile decides: the debug
// container's security context and the pod's host namespaces, its /host
// hostPath volume (mounted in the debug container) and process sharing.
type apiShape struct {
	Privileged               string   `json:"privileged,omitempty"`
	Add                      []string `json:"add,omitempty"`
	Drop                     []string `json:"drop,omitempty"`
	AllowPrivilegeEscalation string   `json:"allowPrivilegeEscalation,omitempty"`
	RunAsNonRoot             string   `json:"runAsNonRoot,omitempty"`
	Seccomp                  string   `json:"seccomp,omitempty"`
	HostPID                  bool     `json:"hostPID,omitempty"`
	HostNetwork              bool     `json:"hostNetwork,omitempty"`
	HostIPC                  bool     `json:"hostIPC,omitempty"`
	HostRoot                 bool     `json:"hostRoot,omitempty"`
	ShareProcessNamespace    bool     `json:"shareProcessNamespace,omitempty"`
}

func (s apiShape) String() string {
	var p []string
	if s.Privileged != "" {
		p = append(p, "privileged="+s.Privileged)
	}
	if len(s.Add) > 0 {
		p = append(p, "add="+strings.Join(s.Add, ","))
	}
	if len(s.Drop) > 0 {
		p = append(p, "drop="+strings.Join(s.Drop, ","))
	}
	if s.AllowPrivilegeEscalation != "" {
		p = append(p, "allowPrivilegeEscalation="+s.AllowPrivilegeEscalation)
	}
	if s.RunAsNonRoot != "" {
		p = append(p, "runAsNonRoot="+s.RunAsNonRoot)
	}
	if s.Seccomp != "" {
		p = append(p, "seccomp="+s.Seccomp)
	}
	for _, h := range []struct {
		on   bool
		name string
	}{{s.HostPID, "hostPID"}, {s.HostNetwork, "hostNetwork"}, {s.HostIPC, "hostIPC"}, {s.HostRoot, "/host=hostPath:/"}, {s.ShareProcessNamespace, "shareProcessNamespace"}} {
		if h.on {
			p = append(p, h.name)
		}
	}
	if len(p) == 0 {
		return "(nothing set)"
	}
	return strings.Join(p, " ")
}

func boolString(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

// shapeOf reads the shape from the API object: the pod and its container
// (regular or ephemeral) named name.
func shapeOf(p *corev1.Pod, name string) (apiShape, bool) {
	var sc *corev1.SecurityContext
	var mounts []corev1.VolumeMount
	found := false
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			sc, mounts, found = c.SecurityContext, c.VolumeMounts, true
		}
	}
	for _, c := range p.Spec.EphemeralContainers {
		if c.Name == name {
			sc, mounts, found = c.SecurityContext, c.VolumeMounts, true
		}
	}
	s := apiShape{HostPID: p.Spec.HostPID, HostNetwork: p.Spec.HostNetwork, HostIPC: p.Spec.HostIPC,
		ShareProcessNamespace: p.Spec.ShareProcessNamespace != nil && *p.Spec.ShareProcessNamespace}
	for _, m := range mounts {
		for _, v := range p.Spec.Volumes {
			if v.Name == m.Name && v.HostPath != nil && v.HostPath.Path == "/" && m.MountPath == "/host" {
				s.HostRoot = true
			}
		}
	}
	if sc != nil {
		s.Privileged, s.AllowPrivilegeEscalation, s.RunAsNonRoot = boolString(sc.Privileged), boolString(sc.AllowPrivilegeEscalation), boolString(sc.RunAsNonRoot)
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				s.Add = append(s.Add, string(c))
			}
			for _, c := range sc.Capabilities.Drop {
				s.Drop = append(s.Drop, string(c))
			}
		}
		if sc.SeccompProfile != nil {
			s.Seccomp = string(sc.SeccompProfile.Type)
		}
	}
	return s, found
}

// procStatusScript prints what the debug process holds, from its own
// /proc/self/status (grep reads its own; it runs with the container's
// credentials as sh does), whether /host is the node's root, and the
// command of PID 1 it sees (the node's init under hostPID); then a marker.
const procStatusScript = `grep -E '^(Uid|CapPrm|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; ` +
	`if [ -d /host/proc ] && [ -d /host/etc ]; then echo 'HostRoot: yes'; fi; echo "PID1: $(cat /proc/1/comm)"; echo ectest-end`

// procHeld is what the debug process held, parsed from procStatusScript's output.
type procHeld struct {
	Uid        int    `json:"uid"`
	CapEff     uint64 `json:"capEff"`
	CapPrm     uint64 `json:"capPrm"`
	CapBnd     uint64 `json:"capBnd"`
	NoNewPrivs int    `json:"noNewPrivs"`
	Seccomp    int    `json:"seccomp"`
	HostRoot   bool   `json:"hostRoot"`
	PID1       string `json:"pid1"`
}

func parseProcHeld(out string) (procHeld, error) {
	var h procHeld
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case "Uid":
			h.Uid, err = strconv.Atoi(strings.Fields(v)[0])
		case "CapEff":
			h.CapEff, err = strconv.ParseUint(v, 16, 64)
		case "CapPrm":
			h.CapPrm, err = strconv.ParseUint(v, 16, 64)
		case "CapBnd":
			h.CapBnd, err = strconv.ParseUint(v, 16, 64)
		case "NoNewPrivs":
			h.NoNewPrivs, err = strconv.Atoi(v)
		case "Seccomp":
			h.Seccomp, err = strconv.Atoi(v)
		case "HostRoot":
			h.HostRoot = v == "yes"
		case "PID1":
			h.PID1 = v
		default:
			continue
		}
		if err != nil {
			return h, fmt.Errorf("%s: %q: %v", k, v, err)
		}
		seen[k] = true
	}
	for _, k := range []string{"Uid", "CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"} {
		if !seen[k] {
			return h, fmt.Errorf("no %s line in the debug container's output:\n%s", k, out)
		}
	}
	return h, nil
}

// capBits are the capabilities the profiles name (linux/capability.h).
var capBits = map[string]uint{"NET_BIND_SERVICE": 10, "NET_ADMIN": 12, "NET_RAW": 13, "SYS_PTRACE": 19, "SYS_ADMIN": 21}

func (h procHeld) String() string {
	return fmt.Sprintf("Uid=%d CapEff=%016x CapPrm=%016x CapBnd=%016x NoNewPrivs=%d Seccomp=%d%s PID1=%s", h.Uid, h.CapEff, h.CapPrm, h.CapBnd, h.NoNewPrivs, h.Seccomp,
		map[bool]string{true: " /host=node-root", false: ""}[h.HostRoot], h.PID1)
}

// shortfalls are what a profile documents and the process does not hold:
// each added capability effective, permitted and bounding (for a root
// process: a non-root one holds none without ambient capabilities, which
// no profile asks for); privileged: every bounding capability effective
// and no seccomp filter; restricted: no capability, no_new_privs, a
// seccomp filter and a non-root user.
func shortfalls(doc apiShape, h procHeld) []string {
	var out []string
	if h.Uid == 0 {
		for _, c := range doc.Add {
			bit := uint64(1) << capBits[c]
			if h.CapEff&bit == 0 || h.CapPrm&bit == 0 || h.CapBnd&bit == 0 {
				out = append(out, fmt.Sprintf("CAP_%s (bit %d) not effective+permitted+bounding", c, capBits[c]))
			}
		}
	}
	if doc.Privileged == "true" {
		if h.CapEff != h.CapBnd || h.CapEff&(1<<capBits["SYS_ADMIN"]) == 0 {
			out = append(out, fmt.Sprintf("privileged: CapEff %016x is not the whole bounding set %016x with CAP_SYS_ADMIN", h.CapEff, h.CapBnd))
		}
		if h.Seccomp != 0 {
			out = append(out, fmt.Sprintf("privileged: Seccomp %d, want 0 (unconfined)", h.Seccomp))
		}
	}
	if doc.RunAsNonRoot == "true" && h.Uid == 0 {
		out = append(out, "runAsNonRoot: the process runs as uid 0")
	}
	if len(doc.Drop) > 0 && doc.Drop[0] == "ALL" && (h.CapEff != 0 || h.CapPrm != 0) {
		out = append(out, fmt.Sprintf("drop ALL: CapEff %016x CapPrm %016x, want 0", h.CapEff, h.CapPrm))
	}
	if doc.AllowPrivilegeEscalation == "false" && h.NoNewPrivs != 1 {
		out = append(out, fmt.Sprintf("allowPrivilegeEscalation=false: NoNewPrivs %d, want 1", h.NoNewPrivs))
	}
	if doc.Seccomp == "RuntimeDefault" && h.Seccomp != 2 {
		out = append(out, fmt.Sprintf("seccomp RuntimeDefault: Seccomp %d, want 2 (filter)", h.Seccomp))
	}
	if doc.HostRoot && !h.HostRoot {
		out = append(out, "/host is not the node's root filesystem")
	}
	return out
}

// excess are the capabilities the profiles name that the process holds
// effective without its security context asking for them (SEC-3: an
// ephemeral container has no privileges beyond what it requests). None of
// them is in a runtime's default set (containerd's and CRI-O's defaults
// have neither NET_ADMIN, SYS_PTRACE nor SYS_ADMIN); NET_RAW and
// NET_BIND_SERVICE are, so they are not checked.
func excess(landed apiShape, h procHeld) []string {
	if landed.Privileged == "true" {
		return nil
	}
	var out []string
	for _, c := range []string{"NET_ADMIN", "SYS_PTRACE", "SYS_ADMIN"} {
		if h.CapEff&(1<<capBits[c]) != 0 && !slices.Contains(landed.Add, c) {
			out = append(out, fmt.Sprintf("CAP_%s (bit %d) effective without being asked for", c, capBits[c]))
		}
	}
	return out
}

// profileRow is one cell of the report table (kubectl-profiles.md).
type profileRow struct {
	Kubectl  string `json:"kubectl"`
	Profile  string `json:"profile"`
	Style    string `json:"style"`
	Level    string `json:"level"`
	Admitted string `json:"admitted"` // yes, refused, n/a
	Message  string `json:"message,omitempty"`
	API      string `json:"api,omitempty"`
	Process  string `json:"process,omitempty"`
	Verdict  string `json:"verdict"`
}

const profileRowEntry = "kubectl-debug-profile-row"

func addProfileRow(r profileRow) {
	b, _ := json.Marshal(r)
	AddReportEntry(profileRowEntry, string(b), ReportEntryVisibilityNever)
}

// debugRun is one kubectl debug call and what came of it.
type debugRun struct {
	out      string
	exit     int
	pod      string // the pod holding the debug container
	obj      *corev1.Pod
	refusal  string // the API server's refusal, as kubectl printed it
	notApply string // kubectl lacks the profile
}

const debugContainerName = "dbg"

// kubectlDebug runs kubectl debug in style with profile ("" for none),
// extra flags and the debug command, and finds the object it made.
func kubectlDebug(ctx context.Context, f *kube.Framework, kc kubectlBinary, style, profile, target string, extra []string, command ...string) debugRun {
	GinkgoHelper()
	var args []string
	switch style {
	case styleEphemeral:
		args = []string{"debug", target, "--target=target"}
	case styleCopy:
		args = []string{"debug", target, "--copy-to=" + target + "-copy"}
	case styleNode:
		args = []string{"debug", "node/" + env.Node}
	}
	args = append(args, "--image="+f.Images[images.Debug], "-c", debugContainerName)
	if profile != "" {
		args = append(args, "--profile="+profile)
	}
	args = append(append(args, extra...), "--")
	args = append(args, command...)
	var r debugRun
	r.out, r.exit = kc.run(ctx, f.Namespace, args...)
	AddReportEntry(fmt.Sprintf("kubectl %s %s (exit %d)", kc.Release, strings.Join(args, " "), r.exit), r.out, ReportEntryVisibilityFailureOrVerbose)
	if r.exit != 0 {
		// A kubectl without the profile (or without --profile at all) says
		// so itself: NewProfileApplier's "unknown profile", or cobra's.
		if strings.Contains(r.out, "unknown profile") || strings.Contains(r.out, "unknown flag: --profile") {
			r.notApply = firstLine(strings.TrimSpace(r.out))
			return r
		}
		// The server's refusal, without kubectl's own notes around it.
		for _, line := range strings.Split(r.out, "\n") {
			if strings.Contains(line, "violates PodSecurity") {
				r.refusal = strings.TrimSpace(line)
			}
		}
	}
	switch style {
	case styleEphemeral:
		r.pod = target
	case styleCopy:
		r.pod = target + "-copy"
	case styleNode:
		pods, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, "node-debugger-") {
				r.pod = p.Name
			}
		}
	}
	if r.pod != "" {
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, r.pod, metav1.GetOptions{})
		if err == nil {
			if _, ok := shapeOf(p, debugContainerName); ok {
				r.obj = p
			}
		}
	}
	return r
}

// pullFailed says whether a debug container that never ran failed to get
// its image (debugOutput's notStarted starts with the waiting reason).
func pullFailed(notStarted string) bool {
	for _, r := range []string{"ErrImagePull", "ImagePullBackOff", "InvalidImageName"} {
		if strings.HasPrefix(notStarted, r+":") {
			return true
		}
	}
	return false
}

// failedToStart are the kubelet's reasons for a container it could not
// create or start. Final: the configuration itself is refused (runAsNonRoot
// with an image that runs as root), and every retry says the same. The
// others the kubelet retries, and a retry may succeed (a sandbox being
// replaced, a pull racing): the container counts as not started only when
// one of them still stands at the end of the wait.
var failedToStart = map[string]bool{"CreateContainerConfigError": true, "InvalidImageName": true}

var retriedToStart = map[string]bool{"CreateContainerError": true, "RunContainerError": true, "ErrImagePull": true, "ImagePullBackOff": true}

// debugOutput waits for the debug container's output to end with the
// marker, or for the kubelet to refuse to start it (runAsNonRoot with an
// image that runs as root: the restricted profile's documented settings
// and no user); it returns the output or why it never ran.
func debugOutput(ctx context.Context, f *kube.Framework, pod string) (out, notStarted string) {
	GinkgoHelper()
	retrying := "" // a retried failure standing at the last look
	timeout := f.Timeouts.ImagePull + f.Timeouts.ContainerReady
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll*5, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		statuses := append(append([]corev1.ContainerStatus{}, p.Status.ContainerStatuses...), p.Status.EphemeralContainerStatuses...)
		var st *corev1.ContainerStatus
		for i := range statuses {
			if statuses[i].Name == debugContainerName {
				st = &statuses[i]
			}
		}
		retrying = ""
		if st != nil && st.State.Waiting != nil {
			w := st.State.Waiting.Reason + ": " + st.State.Waiting.Message
			if failedToStart[st.State.Waiting.Reason] {
				notStarted = w
				return true, nil
			}
			if retriedToStart[st.State.Waiting.Reason] {
				retrying = w
			}
		}
		if logs, err := f.Logs(ctx, pod, debugContainerName); err == nil { // an error: not started yet
			out = logs
			if strings.Contains(logs, "ectest-end") {
				return true, nil
			}
		}
		// An ephemeral container, or one of a pod that never restarts,
		// that ended without the marker in its log never ran its command
		// to the end (the runtime refused it: runc's "unable to freeze"
		// under load was seen once): say so instead of waiting on.
		once := p.Spec.RestartPolicy == corev1.RestartPolicyNever
		for _, e := range p.Status.EphemeralContainerStatuses {
			once = once || e.Name == debugContainerName
		}
		if st != nil && st.State.Terminated != nil && once {
			notStarted = fmt.Sprintf("terminated (exit %d) %s: %s", st.State.Terminated.ExitCode, st.State.Terminated.Reason, st.State.Terminated.Message)
			return true, nil
		}
		return false, nil
	})
	switch {
	case err == nil:
	case retrying != "" && ctx.Err() == nil:
		notStarted = fmt.Sprintf("%s (still so after %s of the kubelet's retries)", retrying, timeout)
	default:
		Fail(fmt.Sprintf("the debug container of %s/%s never printed its status (%v); output so far:\n%s", f.Namespace, pod, err, out))
	}
	return out, notStarted
}

// profileTarget is the pod kubectl debugs: under baseline and restricted it
// meets restricted at pod level (so only the debug container decides);
// under privileged it runs as root, so that what a profile adds shows in
// the debug process's effective capabilities (a non-root process holds
// none of them: kubectl itself warns so).
func profileTarget(f *kube.Framework, level string) *corev1.Pod {
	if level == "privileged" {
		return targetPod(f)
	}
	return targetPod(f, restrictedTarget)
}

var _ = Describe("kubectl debug profiles", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelLinuxOnly, string(capability.DebugProfileGrants)), func() {
	// profile × style × Pod Security level, for each kubectl of
	// KUBECTL_RELEASES (or the kubectl in use): what kubectl puts in the
	// API object must be what profiles.go documents; whether the API
	// server admits it must be Pod Security's verdict on that; and, where
	// it runs, the process must hold what the profile grants.
	var entries []TableEntry
	for _, rel := range matrixKubectlReleases() {
		for _, profile := range debugProfiles {
			for _, style := range debugStyles {
				for _, level := range psaLevels {
					name := rel
					if name == "" {
						name = "in use"
					}
					// Every cluster run judges each profile once, as an
					// ephemeral container with the kubectl in use in a
					// privileged namespace (what the node grants does not
					// depend on the Pod Security level); the other cells
					// run when selected (make kubectl-profiles).
					decorators := []any{SpecTimeout(framework.DefaultTimeouts.Spec)}
					if rel != "" || style != styleEphemeral || level != "privileged" {
						decorators = append(decorators, framework.Label(framework.LabelDebugProfiles))
					}
					entries = append(entries, Entry(fmt.Sprintf("kubectl %s, --profile=%s, %s, %s namespace", name, profile, style, level), append([]any{rel, profile, style, level}, decorators...)...))
				}
			}
		}
	}
	DescribeTable("kubectl debug --profile lands what profiles.go documents, Pod Security admits it as its level says, and the debug process holds what the profile grants [SEC-2] [SEC-3] [STORY-DEBUG]",
		func(ctx SpecContext, release, profile, style, level string) {
			kc := kubectlOf(ctx, release)
			row := &profileRow{Kubectl: kc.Release, Profile: profile, Style: style, Level: level}
			// The cell is recorded however the spec ends (a failed wait
			// included); the table marks a failed spec's cell FAILED.
			DeferCleanup(func() { addProfileRow(*row) })
			f := newFrameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": level}, capability.DebugProfileGrants)
			target := ""
			if style != styleNode {
				target = f.RunPod(ctx, profileTarget(f, level)).Name
			}
			r := kubectlDebug(ctx, f, kc, style, profile, target, nil, "sh", "-c", procStatusScript)
			if r.notApply != "" {
				// Version gating: a kubectl without the profile is not judged.
				row.Admitted, row.Verdict, row.Message = "n/a", "not applicable", r.notApply
				Skip(fmt.Sprintf("not applicable: kubectl %s has no --profile=%s (%s)", kc.Release, profile, r.notApply))
			}
			doc := documentedSC(profile, style)
			wantAdmitted, violations := admittedUnder(level, style, doc)
			var problems []string
			switch {
			case r.exit == 0 && r.obj != nil:
				row.Admitted = "yes"
			case r.refusal != "":
				row.Admitted, row.Message = "refused", r.refusal
			default:
				Fail(fmt.Sprintf("kubectl %s debug exited %d and made no debug container (not a Pod Security refusal):\n%s", kc.Release, r.exit, r.out))
			}
			if r.obj != nil {
				got, _ := shapeOf(r.obj, debugContainerName)
				row.API = got.String()
				if got.String() != doc.String() {
					problems = append(problems, fmt.Sprintf("API object: %s; profiles.go documents %s", got, doc))
				}
			}
			if wantAdmitted != (row.Admitted == "yes") {
				problems = append(problems, fmt.Sprintf("admission under %s: admitted=%v, Pod Security's verdict on %s is admitted=%v %v", level, row.Admitted == "yes", doc, wantAdmitted, violations))
			}
			if row.Admitted == "refused" {
				if want := fmt.Sprintf("violates PodSecurity %q", level+":latest"); !strings.Contains(r.refusal, want) {
					problems = append(problems, fmt.Sprintf("the refusal does not say %s: %s", want, r.refusal))
				}
				for _, v := range violations {
					if !strings.Contains(r.refusal, v) {
						problems = append(problems, fmt.Sprintf("the refusal does not name %q: %s", v, r.refusal))
					}
				}
			}
			// What the process holds is the node's doing (the kubelet and
			// the runtime): a capability verdict, judged on the security
			// context that landed. The API object and the admission are
			// kubectl's and the API server's: spec outcomes only.
			var obs *capability.Builder
			others := len(problems) // kubectl's and admission's
			if row.Admitted == "yes" {
				landed, _ := shapeOf(r.obj, debugContainerName)
				out, notStarted := debugOutput(ctx, f, r.pod)
				switch {
				case pullFailed(notStarted):
					// The suite's registry, not the node.
					Fail(fmt.Sprintf("%sthe debug image %s could not be pulled: %s", capability.EnvironmentErrorPrefix, f.Images[images.Debug], notStarted))
				case notStarted != "":
					row.Process = "not started: " + notStarted
					// The kubelet's refusal is right only for runAsNonRoot
					// with no non-root user (the image runs as root);
					// anything else kept the process from being judged.
					if landed.RunAsNonRoot != "true" || !strings.Contains(notStarted, "runAsNonRoot") {
						obs = capability.Observe(capability.DebugProfileGrants).Evidence("security context that landed: %s", landed).Problem("the node never started the debug container: %s", notStarted)
						problems = append(problems, "the debug container never started: "+notStarted)
					}
				default:
					h, err := parseProcHeld(out)
					if err != nil {
						Fail(err.Error())
					}
					row.Process = h.String()
					obs = capability.Observe(capability.DebugProfileGrants).Evidence("security context that landed: %s\nthe debug process's /proc/self/status: %s", landed, h)
					for _, m := range append(shortfalls(landed, h), excess(landed, h)...) {
						obs.Problem("%s", m)
						problems = append(problems, "process: "+m)
					}
				}
			}
			row.Verdict = "as documented"
			if len(problems) > 0 {
				row.Verdict = "FAILED: " + strings.Join(problems, "; ")
			}
			AddReportEntry("profile cell", fmt.Sprintf("admitted: %s %s\nAPI: %s\nprocess: %s", row.Admitted, row.Message, row.API, row.Process), ReportEntryVisibilityAlways)
			// kubectl's or admission's failure is the spec's outcome, with
			// the process as evidence, and no capability verdict; the node's
			// is recorded only where they did what they document.
			if others == 0 && obs != nil {
				obs.Case(fmt.Sprintf("kubectl %s --profile=%s %s", kc.Release, profile, style))
				f.Checker.Record(obs.Done("the debug process holds what its security context asks for"))
			}
			Expect(problems).To(BeEmpty(), "kubectl %s debug --profile=%s (%s) in a %s namespace does not do what kubectl documents (%s)", kc.Release, profile, style, level,
				kube.Cite("v"+strings.TrimPrefix(kc.Release, "v"), "k8s.io/kubectl", "pkg/cmd/debug/profiles.go"))
		},
		entries,
	)
})

// ReportAfterSuite writes the profile matrix's cells as one markdown table,
// <report dir>/kubectl-profiles.md, when any profile spec ran.
var _ = ReportAfterSuite("kubectl debug profile table", func(r Report) {
	var rows []profileRow
	for _, s := range r.SpecReports {
		for _, e := range s.ReportEntries {
			if e.Name != profileRowEntry {
				continue
			}
			raw := e.Value.String()
			if raw == "" {
				raw = e.Value.Representation
			}
			var row profileRow
			if json.Unmarshal([]byte(raw), &row) == nil {
				if s.State.Is(types.SpecStateFailureStates) && !strings.HasPrefix(row.Verdict, "FAILED") {
					row.Verdict = "FAILED: " + firstLine(s.FailureMessage())
				}
				rows = append(rows, row)
			}
		}
	}
	if len(rows) == 0 || cfg.ReportDir == "" || env == nil {
		return
	}
	Expect(os.MkdirAll(cfg.ReportDir, 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(cfg.ReportDir, "kubectl-profiles.md"), []byte(profileTable(rows)), 0o644)).To(Succeed())
})

func profileTable(rows []profileRow) string {
	order := func(list []string, v string) int {
		for i, x := range list {
			if x == v {
				return i
			}
		}
		return len(list)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Kubectl != b.Kubectl {
			return a.Kubectl < b.Kubectl
		}
		if a.Profile != b.Profile {
			return order(debugProfiles, a.Profile) < order(debugProfiles, b.Profile)
		}
		if a.Style != b.Style {
			return order(debugStyles, a.Style) < order(debugStyles, b.Style)
		}
		return order(psaLevels, a.Level) < order(psaLevels, b.Level)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "# kubectl debug profiles\n\nServer %s. Each row: one kubectl debug call (`--profile`, style) in a namespace enforcing that Pod Security level. "+
		"API: what landed on the debug container and its pod; process: the debug process's own /proc/self/status (capabilities in hex). "+
		"Expectations: k8s.io/kubectl pkg/cmd/debug/profiles.go of that release, and Pod Security's verdict on it.\n\n", env.ServerVersion)
	b.WriteString("| kubectl | profile | style | PSA level | admitted | API object | process held | verdict |\n|---|---|---|---|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	for _, r := range rows {
		adm := r.Admitted
		if r.Message != "" {
			adm += ": " + r.Message
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Kubectl, r.Profile, r.Style, r.Level, cell(adm), cell(r.API), cell(r.Process), cell(r.Verdict))
	}
	return b.String()
}

// defaultProfile is debug.go's --profile default, read at each release:
// "legacy" in v0.33.13, v0.34.10 and v0.35.8, "general" in v0.36.4 and
// v0.37.1 (a release not read takes the nearest read one's).
func defaultProfile(minor int) string {
	if minor <= 35 {
		return "legacy"
	}
	return "general"
}

// customRefused is debug.go's refusal of a --custom file that sets a field
// the debug command owns (the same in v0.33.13 to v0.37.1, in Validate).
const customRefused = "name, command, image, lifecycle and volume devices are not modifiable via custom profile"

var _ = Describe("kubectl debug profiles: --custom and the default profile", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelDebugProfiles, framework.LabelLinuxOnly), func() {
	// --custom is a strategic merge patch of a partial container over the
	// profile's container (applyCustomProfileEphemeral); capabilities.add
	// has no merge key, so the custom list replaces the profile's.
	DescribeTable("a --custom capabilities.add replaces the profile's list, in the API object and in the process [SEC-3]",
		func(ctx SpecContext, profile, replaced string) {
			kc := kubectlOf(ctx, "")
			f := newPrivilegedFramework(ctx)
			target := f.RunPod(ctx, targetPod(f)).Name
			custom := filepath.Join(GinkgoT().TempDir(), "custom.json")
			Expect(os.WriteFile(custom, []byte(`{"securityContext":{"capabilities":{"add":["NET_BIND_SERVICE"]}}}`), 0o644)).To(Succeed())
			r := kubectlDebug(ctx, f, kc, styleEphemeral, profile, target, []string{"--custom=" + custom}, "sh", "-c", procStatusScript)
			if strings.Contains(r.out, "unknown flag: --custom") || r.notApply != "" {
				Skip(fmt.Sprintf("not applicable: kubectl %s: %s", kc.Release, firstLine(r.out)))
			}
			Expect(r.exit).To(Equal(0), r.out)
			Expect(r.obj).NotTo(BeNil(), "kubectl debug made no ephemeral container %s: %s", debugContainerName, r.out)
			got, _ := shapeOf(r.obj, debugContainerName)
			AddReportEntry("API object", got.String(), ReportEntryVisibilityAlways)
			Expect(got.Add).To(Equal([]string{"NET_BIND_SERVICE"}), "the custom capabilities.add must replace --profile=%s's %s (%s)", profile, documentedSC(profile, styleEphemeral), kube.Cite(kc.Release, "k8s.io/kubectl", "pkg/cmd/debug/debug.go"))
			out, notStarted := debugOutput(ctx, f, r.pod)
			Expect(notStarted).To(BeEmpty())
			h, err := parseProcHeld(out)
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("process", h.String(), ReportEntryVisibilityAlways)
			Expect(h.Uid).To(Equal(0), "the debug image runs as root")
			bit := uint64(1) << capBits[replaced]
			Expect(h.CapEff&bit).To(BeZero(), "CAP_%s, which only the replaced profile list asked for, is effective: %s", replaced, h)
			Expect(h.CapEff&(1<<capBits["NET_BIND_SERVICE"])).NotTo(BeZero(), "CAP_NET_BIND_SERVICE, the custom list, is not effective: %s", h)
		},
		Entry("general: SYS_PTRACE replaced", "general", "SYS_PTRACE", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("netadmin: NET_ADMIN and NET_RAW replaced", "netadmin", "NET_ADMIN", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	DescribeTable("kubectl refuses a --custom file that sets a field the debug command owns, and adds nothing [SEC-3]",
		func(ctx SpecContext, field, body string) {
			kc := kubectlOf(ctx, "")
			f := newPrivilegedFramework(ctx)
			target, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			custom := filepath.Join(GinkgoT().TempDir(), "custom.json")
			Expect(os.WriteFile(custom, []byte(body), 0o644)).To(Succeed())
			r := kubectlDebug(ctx, f, kc, styleEphemeral, "general", target.Name, []string{"--custom=" + custom}, "true")
			if strings.Contains(r.out, "unknown flag: --custom") {
				Skip(fmt.Sprintf("not applicable: kubectl %s has no --custom: %s", kc.Release, firstLine(r.out)))
			}
			AddReportEntry(fmt.Sprintf("--custom %s: kubectl %s exit %d", body, kc.Release, r.exit), r.out, ReportEntryVisibilityAlways)
			Expect(r.exit).To(Equal(1), "kubectl must refuse a custom profile setting %s: %s", field, r.out)
			Expect(r.out).To(ContainSubstring(customRefused), "kubectl's message (%s)", kube.Cite(kc.Release, "k8s.io/kubectl", "pkg/cmd/debug/debug.go"))
			p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, target.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(ephemeralNames(p)).To(BeEmpty(), "a refused --custom still added an ephemeral container")
		},
		Entry("name", "name", `{"name":"other"}`, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("command", "command", `{"command":["sh"]}`, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("image", "image", `{"image":"elsewhere/busybox"}`, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("lifecycle", "lifecycle", `{"lifecycle":{"postStart":{"exec":{"command":["true"]}}}}`, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("volumeDevices", "volumeDevices", `{"volumeDevices":[{"name":"dev","devicePath":"/dev/ectest"}]}`, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	// The default profile: kubectl debug without --profile, as an
	// ephemeral container and as a copy of the pod, read back from the API
	// object and matched against every profile's documented shape (on
	// ephemeral containers legacy and baseline both set nothing; the copy
	// tells them apart: baseline shares the process namespace).
	var entries []TableEntry
	for _, rel := range defaultKubectlReleases() {
		entries = append(entries, Entry("kubectl "+rel, rel, SpecTimeout(framework.DefaultTimeouts.Spec)))
	}
	DescribeTable("kubectl debug without --profile applies its release's default profile (legacy up to 1.35, general from 1.36) [SEC-3]",
		func(ctx SpecContext, release string) {
			kc := kubectlOf(ctx, release)
			row := profileRow{Kubectl: kc.Release, Profile: "(none given)", Style: "ephemeral+copy", Level: "privileged"}
			f := newPrivilegedFramework(ctx)
			target, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			eph := kubectlDebug(ctx, f, kc, styleEphemeral, "", target.Name, nil, "true")
			cp := kubectlDebug(ctx, f, kc, styleCopy, "", target.Name, nil, "true")
			Expect(eph.exit).To(Equal(0), eph.out)
			Expect(cp.exit).To(Equal(0), cp.out)
			Expect(eph.obj).NotTo(BeNil(), eph.out)
			Expect(cp.obj).NotTo(BeNil(), cp.out)
			ge, _ := shapeOf(eph.obj, debugContainerName)
			gc, _ := shapeOf(cp.obj, debugContainerName)
			var matches []string
			for _, p := range debugProfiles {
				if ge.String() == documentedSC(p, styleEphemeral).String() && gc.String() == documentedSC(p, styleCopy).String() {
					matches = append(matches, p)
				}
			}
			want := defaultProfile(kc.minor())
			row.Admitted, row.API = "yes", fmt.Sprintf("ephemeral: %s; copy: %s", ge, gc)
			row.Verdict = fmt.Sprintf("default is %s (matches %v; %s documents %s)", strings.Join(matches, "/"), matches, kube.Cite(kc.Release, "k8s.io/kubectl", "pkg/cmd/debug/debug.go"), want)
			if len(matches) != 1 || matches[0] != want {
				row.Verdict = "FAILED: " + row.Verdict
			}
			addProfileRow(row)
			AddReportEntry("default profile", row.Verdict+"\n"+row.API, ReportEntryVisibilityAlways)
			Expect(matches).To(Equal([]string{want}), "kubectl %s without --profile: ephemeral %s, copy %s", kc.Release, ge, gc)
		},
		entries,
	)
})
