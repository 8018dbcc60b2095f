package cri_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The landing of a debug container's processes beyond its namespaces: the
// cgroup it is charged to and the credentials it holds, on every path
// into it (its own process, ExecSync, streaming exec without and with a
// TTY, attach), each read from the node's /proc.
var _ = Describe("Where a debug container's processes land", framework.Label(framework.LabelCRI, framework.LabelSecurity, framework.LabelLinuxOnly), func() {
	It("a debug container's own process and its exec sessions of every kind are charged to its sandbox's cgroup parent [SEC-3]", framework.Label(string(capability.CgroupPod)), func(ctx SpecContext) {
		f := newFramework(capability.CgroupPod)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
		parent := sb.CgroupParent()
		b := capability.Observe(capability.CgroupPod).Evidence("the sandbox's cgroup parent: %q", parent)
		sessions, broken := observeSessions(ctx, f, dbg)
		if len(sessions) == 0 {
			f.Checker.Fail(fmt.Sprintf("no session into %s could be observed: %s", dbg.Name, strings.Join(broken, "; ")))
		}
		judge := func(who string, p oracle.Process) {
			out, err := cri.CgroupsOutside(p, parent)
			if err != nil {
				f.Checker.Fail(fmt.Sprintf("%s: %v", who, err))
			}
			for _, d := range out {
				b.Problem("%s (PID %d): %s", who, p.PID, d)
			}
		}
		if sessions[0].From == cri.InsideNote {
			// A kernel of its own (gVisor's Sentry) keeps cgroups of its
			// own, whose paths are not the node's: what the node charges
			// are the host processes that run the sandbox, found by its ID
			// outside the node's PID namespace (not the runtime's shim or
			// its command-line calls, which the runtime charges).
			host, err := f.Outside().Find(sb.ID)
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			nodePID, _ := f.Outside().NodeLink(oracle.PID)
			var runners []oracle.Process
			for _, p := range host {
				if !strings.Contains(p.Args, "containerd-shim") && (nodePID == "" || p.Namespaces[oracle.PID] != nodePID) {
					runners = append(runners, p)
				}
			}
			if len(runners) == 0 {
				Skip("the debug container's processes are not visible from the node, and no host process carries the sandbox's ID " + sb.ID + ": the cgroup they are charged to cannot be read (" + cri.InsideNote + ")")
			}
			b.Evidence("judged outside, from the node's /proc: the sandbox's processes run in a kernel of its own, whose cgroup paths (below, from inside) are not the node's; the node charges the host processes that run the sandbox")
			for _, p := range runners {
				b.Evidence("a host process of the sandbox: %s", p)
				judge("a host process that runs the sandbox", p)
			}
			for _, s := range sessions {
				b.Evidence("%s", s.Evidence)
			}
		} else {
			b.Evidence("judged %s", sessions[0].From)
			judge("the debug container's own process", sessions[0].Own)
			for _, s := range sessions {
				b.Evidence("%s", s.Evidence)
				for _, p := range s.Processes {
					judge("the "+string(s.Kind)+" session's process", p)
				}
			}
		}
		// A way in that failed is exec's deviation (its own spec judges
		// it); what was seen of the others still counts here.
		if len(b.Problems()) == 0 && len(broken) > 0 {
			f.Checker.BlockOn(capability.Observe(capability.Exec).Evidence("%s", strings.Join(broken, "\n")).
				Problem("%s", strings.Join(broken, "; ")).Done(""))
		}
		f.Checker.Record(b.Done("charged to the sandbox's cgroup parent on every path"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	nonRoot, group := int64(1234), int64(2345)
	root := int64(0)
	// Each entry: what the debug container asks for, and the capabilities
	// added to its target (a target holding more than its debugger: the
	// debugger must not get them).
	DescribeTable("a debug container's own process, its exec sessions of every kind and attach hold the user, groups and capabilities it asks for, no more and no less [SEC-3] [CRI-8]", framework.Label(string(capability.Credentials)),
		func(ctx SpecContext, name string, want cri.Credentials, targetCaps []string) {
			f := newFramework(capability.Credentials)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", AddCaps: targetCaps})
			o := cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID,
				RunAsUser: &want.UID, RunAsGroup: &want.GID, SupplementalGroups: want.Groups, AddCaps: want.Add, DropCaps: want.Drop, NoNewPrivs: want.NoNewPrivs,
				// A shell that runs what attach types: the container's own
				// process is the one attached to, and carries the marker.
				Command: []string{"sh", "-c", `while read -r l; do eval "$l"; done`, f.DebugMarker("debug")}, Stdin: true, TTY: true}
			dbg := f.StartDebug(ctx, sb, o)
			b := capability.Observe(capability.Credentials).Case(name)

			// The runtime's default set: the target's bounding set without
			// what it asked for besides (capabilities no default set holds).
			tp, from := targetLanding(ctx, f, dbg, target)
			tb, err := cri.ParseCapMask(tp.CapBnd)
			if err != nil {
				f.Checker.Fail(fmt.Sprintf("the target's bounding set %q: %v", tp.CapBnd, err))
			}
			extra, err := cri.CapMask(targetCaps)
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			defaults := tb &^ extra
			b.Evidence("asked: %s; the runtime's default capabilities (the target's bounding set without its own additions %v): %s; judged %s", want, targetCaps, strings.Join(cri.CapNames(defaults), ","), from)
			b.Evidence("the target's process: %s", tp)
			judge := func(who string, p oracle.Process) {
				for _, d := range want.Judge(p, defaults) {
					b.Problem("%s (PID %d): %s", who, p.PID, d)
				}
			}

			sessions, broken := observeSessions(ctx, f, dbg)
			if len(sessions) == 0 {
				f.Checker.Fail(fmt.Sprintf("no session into %s could be observed: %s", dbg.Name, strings.Join(broken, "; ")))
			}
			own := sessions[0].Own
			b.Evidence("the debug container's own process: %s", own)
			judge("the debug container's own process", own)
			for _, s := range sessions {
				b.Evidence("%s", s.Evidence)
				for _, p := range s.Processes {
					judge("the "+string(s.Kind)+" session's process", p)
				}
			}

			// Attach reaches the container's own process: the shell that
			// answers must be it, and it must still hold what it asked for.
			attached, attachErr := attachedPID(ctx, f, dbg)
			ownInside := own.InnerPID()
			if sessions[0].From == cri.InsideNote {
				ownInside = insidePID(ctx, f, dbg, dbg.Marker)
			}
			switch {
			case attachErr != nil:
				broken = append(broken, "attach: "+attachErr.Error())
			case attached != ownInside:
				b.Problem("attach: the shell that answered is PID %d inside, not the container's own process (PID %d inside)", attached, ownInside)
			default:
				b.Evidence("attach: the shell that answered is the container's own process (PID %d inside)", attached)
				if sessions[0].From != cri.InsideNote {
					if now, err := f.Own(dbg); err == nil && len(now) > 0 {
						b.Evidence("the attached process after the session: %s", now[0])
						judge("the attached process", now[0])
					}
				}
			}
			if len(b.Problems()) == 0 && len(broken) > 0 {
				blockOnWayIn(f, broken)
			}
			f.Checker.Record(b.Done("as asked on every path"))
		},
		Entry("a non-root user with a group, supplementary groups, an added and a dropped capability and no_new_privs", "non-root user",
			cri.Credentials{UID: nonRoot, GID: group, Groups: []int64{3456, 4567}, Add: []string{"SYS_PTRACE"}, Drop: []string{"CHOWN"}, NoNewPrivs: true}, nil,
			SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("root with added and dropped capabilities", "root, capabilities added and dropped",
			cri.Credentials{UID: root, GID: root, Add: []string{"SYS_PTRACE", "NET_ADMIN"}, Drop: []string{"CHOWN", "KILL"}}, nil,
			SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a target holding a capability its debugger does not ask for", "target with more than its debugger",
			cri.Credentials{UID: root, GID: root}, extraCap,
			SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

// observeSessions observes one session of every exec kind in c; broken
// says which ways in did not work.
func observeSessions(ctx context.Context, f *cri.Framework, c *cri.Container) (sessions []cri.SessionLanding, broken []string) {
	for _, kind := range cri.SessionKinds {
		s, err := f.ObserveSession(ctx, c, kind)
		if err != nil {
			broken = append(broken, fmt.Sprintf("%s: %v", kind, err))
			continue
		}
		sessions = append(sessions, s)
	}
	return sessions, broken
}

// blockOnWayIn records ways in that did not work as the deviations of
// their own capabilities (exec, attach), which block this spec's.
func blockOnWayIn(f *cri.Framework, broken []string) {
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

// targetLanding is the target's process: read from the node's /proc, or,
// where it is not visible there, its status as the debug container (in
// the target's PID namespace) reads it.
func targetLanding(ctx context.Context, f *cri.Framework, dbg, target *cri.Container) (oracle.Process, string) {
	GinkgoHelper()
	own, err := f.Own(target)
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	if len(own) > 0 {
		return own[0], "outside, from the node's /proc"
	}
	pid := insidePID(ctx, f, dbg, target.Marker)
	status := f.MustExec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/status", pid))
	p, err := oracle.FromInside(status, "", "", nil)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("the target's status from inside: %v\n%s", err, status))
	}
	return p, cri.InsideNote
}

// insidePID is the PID, as c sees it, of the process carrying marker.
func insidePID(ctx context.Context, f *cri.Framework, c *cri.Container, marker string) int {
	GinkgoHelper()
	procs, raw, err := f.Processes(ctx, c)
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	for _, p := range procs {
		if oracle.HasWord(p.Args, marker) {
			return p.PID
		}
	}
	f.Checker.Fail(fmt.Sprintf("no process carrying %s is visible in %s:\n%s", marker, c.Name, raw))
	return 0
}

// attachedPID attaches to c with a TTY, has the shell there print its own
// PID, and drops the session (no EOF: the shell stays).
func attachedPID(ctx context.Context, f *cri.Framework, c *cri.Container) (int, error) {
	// The terminal echoes what is typed, which holds $$ and $((1+1)), not
	// the numbers: only the shell's answer ends in "-<token>-2".
	res, err := f.Attach(ctx, c, &cri.Input{Ready: "echo ready-$((2*3))\n", ReadyAnswer: "ready-6",
		Text: "echo at-$$-" + f.Token + "-$((1+1))\n", Until: "-" + f.Token + "-2", Drop: true}, true)
	m := regexp.MustCompile(`at-(\d+)-` + f.Token + `-2`).FindStringSubmatch(res.Stdout)
	if m == nil {
		return 0, fmt.Errorf("no answer with the shell's PID (err %v); stdout %q", err, res.Stdout)
	}
	return strconv.Atoi(m[1])
}
