package cri_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Ptrace access rules for debug containers", framework.Label(framework.LabelCRI, framework.LabelSecurity, framework.LabelLinuxOnly, string(capability.PtraceRules)), func() {
	nobody := int64(65534)
	root := int64(0)

	// Each entry: the target's user and added capabilities, the debug
	// container's added capabilities (named as the kubelet sends them,
	// without "CAP_"), and whether /proc/<pid>/environ and /proc/<pid>/root of
	// the target must be readable. The kernel's ptrace_may_access decides:
	// another user's process needs CAP_SYS_PTRACE; a process of the same
	// user with no more capabilities than the caller does not, and one of
	// the same user holding a capability the caller lacks does again.
	DescribeTable("a targeting debug container reads another process's environ and root only as ptrace rules allow [SEC-3] [CRI-6] [STORY-DEBUG]",
		func(ctx SpecContext, name string, targetUser int64, targetCaps, addCaps []string, readable bool) {
			f := newFramework(capability.PtraceRules)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			secret := "ECTEST_SECRET=" + f.Token
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", RunAsUser: &targetUser, AddCaps: targetCaps, Env: map[string]string{"ECTEST_SECRET": f.Token}})
			// Through pid-target: blocked (and skipped) when it does not work.
			dbg, view := f.StartTargetingDebug(ctx, capability.PtraceRules, sb, cri.DebugOptions{Name: "debug", AddCaps: addCaps, RunAsUser: &root}, target)
			b := capability.Observe(capability.PtraceRules).Case(name)
			pid, ok := view.PIDOf(target.Marker)
			if !ok {
				f.Checker.Record(b.Problem("target process not visible although in its PID namespace").Evidence("%s", view.Evidence()).Done(""))
				return
			}
			environ, err := f.Exec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			rootfs, err := f.Exec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/root/ectest/marker", pid))
			if err != nil {
				f.Checker.Fail(err.Error())
			}
			status := f.MustExec(ctx, dbg, "grep", "-E", "^(Uid|CapPrm|CapEff)", fmt.Sprintf("/proc/%d/status", pid), "/proc/self/status")
			gotEnviron := environ.ExitCode == 0 && strings.Contains(environ.Stdout, secret)
			gotRoot := rootfs.ExitCode == 0 && strings.TrimSpace(rootfs.Stdout) == f.TargetToken("target")
			b.Evidence("target uid %d, caps added %v; debug caps added %v\n%s\n%s\n%s", targetUser, targetCaps, addCaps, status, environ, rootfs)
			if readable {
				b.Check(gotEnviron && gotRoot, "environ %s, root %s; want both read", ptraceOutcome(environ, gotEnviron), ptraceOutcome(rootfs, gotRoot))
			} else {
				// Denied by the ptrace rules, not failed some other way.
				b.Check(ptraceDenied(environ) && ptraceDenied(rootfs), "environ %s, root %s; want both denied by the ptrace rules (EACCES)", ptraceOutcome(environ, gotEnviron), ptraceOutcome(rootfs, gotRoot))
			}
			f.Checker.Record(b.Done(map[bool]string{true: "readable", false: "denied"}[readable]))
		},
		Entry("another user's process, without SYS_PTRACE: denied", "another user, no SYS_PTRACE", nobody, nil, nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("another user's process, with SYS_PTRACE: readable", "another user, SYS_PTRACE", nobody, nil, []string{"SYS_PTRACE"}, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("the same user with the same capabilities: readable without SYS_PTRACE", "same user and capabilities", root, nil, nil, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("the same user, the target holding a capability the debugger lacks: denied without SYS_PTRACE", "same user, target with more capabilities", root, extraCap, nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	// STORY-DEBUG's "gdb -p": a real PTRACE_ATTACH (and detach) from the
	// debug container to the target's process, by the suite's helper. The
	// same kernel rules as above decide (PTRACE_MODE_ATTACH): another
	// user's process, or one holding a capability the debugger lacks, needs
	// CAP_SYS_PTRACE. A target that was attached must run on afterwards.
	DescribeTable("a targeting debug container ptrace-attaches to the target's process only as ptrace rules allow [SEC-3] [STORY-DEBUG]",
		func(ctx SpecContext, name string, targetUser int64, targetCaps, addCaps []string, allowed bool) {
			f := newFramework(capability.PtraceRules)
			f.RequireDebugHelper()
			sb := f.RunSandbox(ctx, cri.SandboxOptions{Reuse: true})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", RunAsUser: &targetUser, AddCaps: targetCaps})
			// Through pid-target: blocked (and skipped) when it does not work.
			dbg, view := f.StartTargetingDebug(ctx, capability.PtraceRules, sb, cri.DebugOptions{Name: "debug", AddCaps: addCaps, RunAsUser: &root}, target)
			// Yama (a node's setting, not the runtime's) can forbid what
			// the capability rules allow: attaching to a non-descendant
			// without CAP_SYS_PTRACE (1, 2) or at all (3).
			yama := "absent"
			if r, err := f.Exec(ctx, dbg, "cat", "/proc/sys/kernel/yama/ptrace_scope"); err == nil && r.ExitCode == 0 {
				yama = strings.TrimSpace(r.Stdout)
			}
			switch {
			case yama == "3":
				Skip("the node's Yama ptrace_scope is 3: no process may attach to another, whatever its capabilities")
			case allowed && (yama == "1" || yama == "2") && !slices.Contains(addCaps, "SYS_PTRACE"):
				Skip("the node's Yama ptrace_scope is " + yama + ": attaching without CAP_SYS_PTRACE is forbidden on this node, whatever the capability rules allow")
			}
			b := capability.Observe(capability.PtraceRules).Case("attach: " + name)
			pid, ok := view.PIDOf(target.Marker)
			if !ok {
				f.Checker.Record(b.Problem("target process not visible although in its PID namespace").Evidence("%s", view.Evidence()).Done(""))
				return
			}
			res, attach, err := f.Helper(ctx, dbg, helper.ModePtraceAttach, pid)
			Expect(err).NotTo(HaveOccurred())
			status := f.MustExec(ctx, dbg, "grep", "-E", "^(Uid|CapPrm|CapEff)", fmt.Sprintf("/proc/%d/status", pid), "/proc/self/status")
			b.Evidence("target uid %d, caps added %v; debug caps added %v; Yama ptrace_scope %s\n%s\n%s", targetUser, targetCaps, addCaps, yama, status, attach)
			// A denial is the kernel's EPERM, or an LSM's EACCES.
			denied := res.Result == "EPERM" || res.Result == "EACCES"
			works := "attached"
			switch {
			case allowed && res.OK():
				// Detached: the target must run on, and answer.
				if _, err := f.TryTargetInfoFrom(ctx, dbg, cri.TargetPort); err != nil {
					b.Problem("attached and detached, then the target no longer answers").Evidence("%v", err)
				}
			case !allowed && denied:
				works = "denied: " + res.Result
			case allowed:
				b.Problem("denied (%s), but the ptrace rules allow it", res.Result)
			default:
				b.Problem("ptrace-attach answered %s, but the ptrace rules deny it (EPERM)", res.Result)
			}
			f.Checker.Record(b.Done(works))
		},
		Entry("another user's process, with SYS_PTRACE: attached", "another user, SYS_PTRACE", nobody, nil, []string{"SYS_PTRACE"}, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("another user's process, without SYS_PTRACE: denied", "another user, no SYS_PTRACE", nobody, nil, nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("the same user with the same capabilities: attached without SYS_PTRACE", "same user and capabilities", root, nil, nil, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("the same user, the target holding a capability the debugger lacks: denied without SYS_PTRACE", "same user, target with more capabilities", root, extraCap, nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

// ptraceDenied says whether a read of another process's /proc entry was
// refused the way the kernel's ptrace rules refuse it: EACCES, as busybox
// cat reports it ("can't open '/proc/7/environ': Permission denied").
func ptraceDenied(r cri.ExecResult) bool {
	return r.ExitCode != 0 && strings.Contains(r.Stderr, "Permission denied")
}

// ptraceOutcome names a read's outcome for a report.
func ptraceOutcome(r cri.ExecResult, read bool) string {
	switch {
	case read:
		return "read"
	case ptraceDenied(r):
		return "denied"
	case r.ExitCode == 0:
		return "read, but not what the target holds"
	}
	return fmt.Sprintf("failed otherwise (exit %d: %s)", r.ExitCode, strings.TrimSpace(r.Stderr))
}

// extraCap is a capability no container holds by default (containerd's
// and CRI-O's default sets lack it): a target given it holds one its
// debugger lacks. Harmless to the target, which never uses it.
var extraCap = []string{"SYS_NICE"}
