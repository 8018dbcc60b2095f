package cluster_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
)

// The landing of an ephemeral container's processes beyond its namespaces,
// through the kubelet: the cgroup they are charged to and the credentials
// they hold, on every way in through the API server (its own process, exec
// without and with a TTY, attach), read on the node by the node observer.
// The ephemeral container targets the target container, as kubectl debug
// --target makes it.
var _ = Describe("Where an ephemeral container's processes land, read on the node", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelLinuxOnly), func() {
	It("an ephemeral container's own process, its exec sessions without and with a TTY and the process attach reaches are charged to the pod's cgroup, where its regular containers are [SEC-3]", framework.Label(string(capability.CgroupPod)), func(ctx SpecContext) {
		f := newFramework(ctx, capability.CgroupPod)
		framework.SkipOnWindows(env.Runtime.OS)
		pod := f.RunPod(ctx, targetPod(f))
		pod = f.RunEphemeral(ctx, pod.Name, attachableDebugger(f, "debugger", nil))
		targetMarker, debugMarker := f.TargetMarker("target"), f.DebugMarker("debugger")
		procs, unavailable := f.NodeProcesses(ctx, pod, targetMarker, debugMarker)
		if unavailable != "" {
			// Inside a container a cgroup path is its cgroup namespace's
			// (or, in a kernel of its own, that kernel's): only the node
			// tells what the node charges.
			Skip("the cgroup an ephemeral container's processes are charged to is the node's to tell, and the node cannot: " + unavailable)
		}
		target, own := procs[targetMarker], procs[debugMarker]
		parents, how, err := kube.PodCgroups(target, pod.UID)
		if err != nil {
			f.Checker.Fail(fmt.Sprintf("the target's cgroups, read on the node: %v", err))
		}
		b := capability.Observe(capability.CgroupPod).Evidence("judged %s", kube.ObserverFrom)
		b.Evidence("the pod's cgroup (%s), by hierarchy: %s", how, cgroupList(parents))
		b.Evidence("the target container's process: %s", target)
		judge := func(who string, p oracle.Process) {
			out, err := kube.CgroupsOutsidePod(p, parents)
			if err != nil {
				f.Checker.Fail(fmt.Sprintf("%s: %v", who, err))
			}
			for _, d := range out {
				b.Problem("%s (PID %d): %s", who, p.PID, d)
			}
		}
		b.Evidence("the ephemeral container's own process: %s", own)
		judge("the ephemeral container's own process", own)
		broken := observeLandings(ctx, f, pod, "debugger", debugMarker, b, judge)
		// Attach reaches the container's own process: the shell that
		// answers must be it, still charged to the pod.
		broken = append(broken, judgeAttached(ctx, f, pod, own, debugMarker, b, judge)...)
		if len(b.Problems()) == 0 && len(broken) > 0 {
			blockOnWayIn(f, broken)
		}
		f.Checker.Record(b.Done("charged to the pod's cgroup on every way in"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	nonRoot, group, root := int64(1234), int64(2345), int64(0)
	// Each entry: what the ephemeral container's security context asks for
	// (its supplementary groups are the pod's: a container has none of its
	// own), and the capabilities added to its target (a target holding more
	// than its debugger: the debugger must not get them).
	DescribeTable("an ephemeral container's own process, its exec sessions without and with a TTY and the process attach reaches hold the user, groups and capabilities its security context asks for, no more and no less [SEC-3] [CRI-8]", framework.Label(string(capability.Credentials)),
		func(ctx SpecContext, name string, want cri.Credentials, targetCaps []string) {
			// Added capabilities (SYS_PTRACE, NET_ADMIN) are above the
			// baseline Pod Security level.
			f := newPrivilegedFramework(ctx, capability.Credentials)
			framework.SkipOnWindows(env.Runtime.OS)
			pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) {
				if len(want.Groups) > 0 {
					p.Spec.SecurityContext = &corev1.PodSecurityContext{SupplementalGroups: want.Groups}
				}
				if len(targetCaps) > 0 {
					p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: kubeCaps(targetCaps)}}
				}
			}))
			allow := !want.NoNewPrivs
			sc := &corev1.SecurityContext{RunAsUser: &want.UID, RunAsGroup: &want.GID,
				Capabilities: &corev1.Capabilities{Add: kubeCaps(want.Add), Drop: kubeCaps(want.Drop)}}
			if want.NoNewPrivs {
				sc.AllowPrivilegeEscalation = &allow
			}
			pod = f.RunEphemeral(ctx, pod.Name, attachableDebugger(f, "debugger", sc))
			b := capability.Observe(capability.Credentials).Case(name)
			targetMarker, debugMarker := f.TargetMarker("target"), f.DebugMarker("debugger")
			procs, unavailable := f.NodeProcesses(ctx, pod, targetMarker, debugMarker)
			var target, own oracle.Process
			from := "judged " + kube.ObserverFrom
			if unavailable != "" {
				target, own = credentialsInside(ctx, f, pod, targetMarker, debugMarker)
				from = "judged inside, as the ephemeral container's kernel shows its processes and the target's (the node cannot tell: " + unavailable + ")"
			} else {
				target, own = procs[targetMarker], procs[debugMarker]
			}
			// The runtime's default set: the target's bounding set without
			// what it asked for besides (capabilities no default set holds).
			tb, err := cri.ParseCapMask(target.CapBnd)
			if err != nil {
				f.Checker.Fail(fmt.Sprintf("the target's bounding set %q: %v", target.CapBnd, err))
			}
			extra, err := cri.CapMask(targetCaps)
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			defaults := tb &^ extra
			b.Evidence("%s", from)
			b.Evidence("asked: %s (allowPrivilegeEscalation %v); the runtime's default capabilities (the target's bounding set without its own additions %v): %s", want, allow, targetCaps, strings.Join(cri.CapNames(defaults), ","))
			b.Evidence("the target's process: %s", target)
			judge := func(who string, p oracle.Process) {
				for _, d := range want.Judge(p, defaults) {
					b.Problem("%s (PID %d): %s", who, p.PID, d)
				}
			}
			b.Evidence("the ephemeral container's own process: %s", own)
			judge("the ephemeral container's own process", own)
			var broken []string
			if unavailable != "" {
				broken = credentialsSessionsInside(ctx, f, pod, b, judge)
			} else {
				broken = observeLandings(ctx, f, pod, "debugger", debugMarker, b, judge)
			}
			broken = append(broken, judgeAttached(ctx, f, pod, own, debugMarker, b, func(who string, p oracle.Process) {
				if unavailable == "" {
					judge(who, p)
				}
			})...)
			if len(b.Problems()) == 0 && len(broken) > 0 {
				blockOnWayIn(f, broken)
			}
			f.Checker.Record(b.Done("as asked on every way in"))
		},
		Entry("a non-root user with a group, the pod's supplementary groups, an added and a dropped capability and allowPrivilegeEscalation false (no_new_privs)", "non-root user",
			cri.Credentials{UID: nonRoot, GID: group, Groups: []int64{3456, 4567}, Add: []string{"SYS_PTRACE"}, Drop: []string{"CHOWN"}, NoNewPrivs: true}, nil,
			SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("root with added and dropped capabilities", "root, capabilities added and dropped",
			cri.Credentials{UID: root, GID: root, Add: []string{"SYS_PTRACE", "NET_ADMIN"}, Drop: []string{"CHOWN", "KILL"}}, nil,
			SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a target holding a capability its debugger does not ask for", "target with more than its debugger",
			cri.Credentials{UID: root, GID: root}, []string{"SYS_NICE"},
			SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

// attachableDebugger is an ephemeral container targeting the target
// container, as kubectl debug --target makes it, whose own process is a
// shell attach can drive (kube.ShellLoop) carrying the debug marker, with
// the security context sc (nil for none).
func attachableDebugger(f *kube.Framework, name string, sc *corev1.SecurityContext) corev1.EphemeralContainer {
	ec := f.DebugContainer(name, "target")
	ec.Command = kube.ShellLoop(f.DebugMarker(name))
	ec.Stdin, ec.TTY = true, true
	ec.SecurityContext = sc
	return ec
}

// observeLandings observes one exec session of every kind in container and
// judges its processes; it returns the ways in that did not work.
func observeLandings(ctx context.Context, f *kube.Framework, pod *corev1.Pod, container, ownMarker string, b *capability.Builder, judge func(string, oracle.Process)) (broken []string) {
	GinkgoHelper()
	for _, kind := range kube.SessionKinds {
		l, unavailable, err := f.ObserveSession(ctx, pod, container, ownMarker, kind)
		switch {
		case err != nil:
			broken = append(broken, fmt.Sprintf("%s: %v", kind, err))
			continue
		case unavailable != "":
			// The node answered for the container's processes a moment
			// ago: an observer gone now is the suite's environment.
			f.Checker.Fail(fmt.Sprintf("the %s session could not be read on the node: %s", kind, unavailable))
		}
		b.Evidence("%s", l.Evidence)
		for _, p := range l.Processes {
			judge("the "+string(kind)+" session's process", p)
		}
	}
	return broken
}

// judgeAttached attaches to the ephemeral container's shell: the process
// that answers must be its own process (own, carrying marker), which is
// judged again once the session is over. It returns attach's failure, if
// any, as a way in that did not work.
func judgeAttached(ctx context.Context, f *kube.Framework, pod *corev1.Pod, own oracle.Process, marker string, b *capability.Builder, judge func(string, oracle.Process)) []string {
	GinkgoHelper()
	attached, text, err := f.AttachedPID(ctx, pod.Name, "debugger")
	ownInside := own.InnerPID()
	if ownInside == 0 {
		// Read inside (no NSpid line there): its PID as ps shows it.
		procs, _ := processes(ctx, f, pod.Name, "debugger")
		ownInside = kube.PIDOf(procs, marker)
	}
	switch {
	case err != nil:
		return []string{"attach: " + err.Error()}
	case attached != ownInside:
		b.Problem("attach: the shell that answered is PID %d inside, not the ephemeral container's own process (PID %d inside)", attached, ownInside)
		b.Evidence("attach with a TTY showed:\n%s", text)
	default:
		b.Evidence("attach: the shell that answered is the ephemeral container's own process (PID %d inside)", attached)
		if procs, why := f.NodeProcesses(ctx, pod, marker); why == "" {
			b.Evidence("the attached process after the session: %s", procs[marker])
			judge("the attached process", procs[marker])
		}
	}
	return nil
}

// blockOnWayIn records ways in that did not work as the deviations of
// their own capabilities (exec, attach), which block this spec's.
func blockOnWayIn(f *kube.Framework, broken []string) {
	GinkgoHelper()
	n := capability.Attach
	for _, s := range broken {
		if !strings.HasPrefix(s, "attach:") {
			n = capability.Exec
		}
	}
	f.Checker.BlockOn(capability.Observe(n).Evidence("%s", strings.Join(broken, "\n")).
		Problem("%s", strings.Join(broken, "; ")).Done(""))
}

// credentialsInside reads the target's and the ephemeral container's own
// process as the ephemeral container (in the target's PID namespace) sees
// them, where the node cannot tell.
func credentialsInside(ctx context.Context, f *kube.Framework, pod *corev1.Pod, targetMarker, debugMarker string) (target, own oracle.Process) {
	GinkgoHelper()
	procs, raw := processes(ctx, f, pod.Name, "debugger")
	read := func(marker string) oracle.Process {
		pid := kube.PIDOf(procs, marker)
		if pid == 0 {
			f.Checker.Fail(fmt.Sprintf("no process carrying %s is visible in the ephemeral container:\n%s", marker, raw))
		}
		status, stderr, err := run(ctx, f, pod.Name, "debugger", nil, "cat", fmt.Sprintf("/proc/%d/status", pid))
		p, perr := oracle.FromInside(status, "", "", nil)
		if err != nil || perr != nil {
			f.Checker.Fail(fmt.Sprintf("the status of PID %d, read inside: %v %v %s", pid, err, perr, stderr))
		}
		p.PID, p.Args = pid, marker
		return p
	}
	return read(targetMarker), read(debugMarker)
}

// credentialsSessionsInside reads, where the node cannot tell, each exec
// kind's own status from inside (cat /proc/self/status: the session's
// process) and judges it; it returns the ways in that did not work.
func credentialsSessionsInside(ctx context.Context, f *kube.Framework, pod *corev1.Pod, b *capability.Builder, judge func(string, oracle.Process)) (broken []string) {
	GinkgoHelper()
	for _, kind := range kube.SessionKinds {
		out, stderr, err := f.Exec(ctx, pod.Name, "debugger", nil, kind == kube.ExecTTYSession, "cat", "/proc/self/status")
		if err != nil {
			broken = append(broken, fmt.Sprintf("%s: %v %s", kind, err, stderr))
			continue
		}
		p, err := oracle.FromInside(strings.ReplaceAll(out, "\r", ""), "", "", nil)
		if err != nil {
			f.Checker.Fail(fmt.Sprintf("the %s session's status, read inside: %v\n%s", kind, err, out))
		}
		b.Evidence("the %s session's process (cat /proc/self/status, inside): %s", kind, p)
		judge("the "+string(kind)+" session's process", p)
	}
	return broken
}

// kubeCaps are capability names ("SYS_PTRACE") as a security context's.
func kubeCaps(names []string) []corev1.Capability {
	var out []corev1.Capability
	for _, n := range names {
		out = append(out, corev1.Capability(n))
	}
	return out
}

// cgroupList is cgroups by hierarchy, for evidence.
func cgroupList(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	var out []string
	for _, k := range keys {
		name := k
		if k == "" {
			name = "unified"
		}
		out = append(out, fmt.Sprintf("%s %q", name, m[k]))
	}
	return strings.Join(out, ", ")
}
