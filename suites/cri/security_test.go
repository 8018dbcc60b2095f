package cri_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("Ptrace access rules for debug containers", framework.Label(framework.LabelCRI, framework.LabelSecurity, framework.LabelLinuxOnly, string(capability.PtraceRules)), func() {
	nobody := int64(65534)
	root := int64(0)

	// Each entry: the target's user, the debug container's added
	// capabilities (named as the kubelet sends them, without "CAP_"), and whether /proc/<pid>/environ and /proc/<pid>/root of
	// the target must be readable. The kernel's ptrace_may_access decides:
	// another user's process needs CAP_SYS_PTRACE; a process of the same
	// user with no more capabilities than the caller does not.
	DescribeTable("a targeting debug container reads another process's environ and root only as ptrace rules allow [SEC-3] [CRI-6] [STORY-DEBUG]",
		func(ctx SpecContext, name string, targetUser int64, addCaps []string, readable bool) {
			f := newFramework(capability.PtraceRules)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{})
			secret := "ECTEST_SECRET=" + f.Token
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", RunAsUser: &targetUser, Env: map[string]string{"ECTEST_SECRET": f.Token}})
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID, AddCaps: addCaps, RunAsUser: &root})
			f.TargetInfoFrom(ctx, dbg, cri.TargetPort)
			view, err := f.ObservePIDs(ctx, dbg, target)
			if err != nil {
				Fail(err.Error())
			}
			obs := capability.Observation{Capability: capability.PtraceRules, Case: name}
			pid, ok := view.PIDOf(target.Marker)
			if !ok {
				obs.Outcome, obs.Observed, obs.Evidence = capability.Deviated, "target process not visible (PID TARGET did not work)", view.PS
				f.Checker.Record(obs)
				return
			}
			environ, err := f.Exec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				Fail(err.Error())
			}
			rootfs, err := f.Exec(ctx, dbg, "cat", fmt.Sprintf("/proc/%d/root/ectest/marker", pid))
			if err != nil {
				Fail(err.Error())
			}
			status := f.MustExec(ctx, dbg, "grep", "-E", "^(Uid|CapEff)", fmt.Sprintf("/proc/%d/status", pid), "/proc/self/status")
			gotEnviron := environ.ExitCode == 0 && strings.Contains(environ.Stdout, secret)
			gotRoot := rootfs.ExitCode == 0 && strings.TrimSpace(rootfs.Stdout) == f.TargetToken("target")
			obs.Evidence = fmt.Sprintf("target uid %d, debug caps added %v\n%s\n%s\n%s", targetUser, addCaps, status, environ, rootfs)
			switch {
			case gotEnviron == readable && gotRoot == readable:
				obs.Outcome = capability.Works
				obs.Observed = map[bool]string{true: "readable", false: "denied"}[readable]
			default:
				obs.Outcome = capability.Deviated
				obs.Observed = fmt.Sprintf("environ readable=%v, root readable=%v; want %v", gotEnviron, gotRoot, readable)
			}
			f.Checker.Record(obs)
		},
		Entry("another user's process, without SYS_PTRACE: denied", "another user, no SYS_PTRACE", nobody, nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("another user's process, with SYS_PTRACE: readable", "another user, SYS_PTRACE", nobody, []string{"SYS_PTRACE"}, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("the same user with the same capabilities: readable without SYS_PTRACE", "same user and capabilities", root, nil, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})
