package cri

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Requirements of what a Windows debug container observes in place of a
// capability Windows has no such thing for.
var (
	winProcessRequirements = []string{"WIN-1", "WIN-2"}
	winIPCRequirements     = []string{"WIN-1"}
)

// RecordAbsentOnWindows is the Windows branch of the specs of capabilities
// Windows has no such thing for (capability.AbsentOn: PID and IPC
// namespaces, the target's files through its processes). Nothing skips:
// it does on the node what `kubectl debug --target` does there (a target
// in a sandbox, then a debug container asking for it, which the kubelet
// sends with no namespace options at all) and records, for each
// capability, what the debug container observes: accepted, and none of the
// target's processes visible (WIN-2), or, for IPC, accepted with no IPC
// namespace option to ask for (WIN-1). The matrix shows that as "not
// supported on this OS". A debug container refused, or one that sees the
// target's processes, is what Windows does not do: deviated, with the
// evidence.
func (f *Framework) RecordAbsentOnWindows(ctx context.Context, caps ...capability.Name) {
	ginkgo.GinkgoHelper()
	sb := f.RunSandbox(ctx, SandboxOptions{})
	target := f.StartTarget(ctx, sb, TargetOptions{Name: "target"})
	dbg, err := f.TryStartDebug(ctx, sb, DebugOptions{Name: "debug", PID: Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID})
	if err != nil {
		for _, n := range caps {
			f.Checker.Record(capability.Observation{Capability: n, Outcome: capability.Deviated, Requirements: windowsRequirements(n),
				Observed: "a debug container with a target was not started: Windows runs ephemeral containers (WIN-2)", Evidence: StatusText(err)})
		}
		return
	}
	// The target answers first, so its process exists when the debug
	// container looks (and the pod's network is shared: evidence only, the
	// net-pod spec judges it).
	reach := "answered"
	if info, err := f.TryTargetInfoFrom(ctx, dbg, target.Port); err != nil {
		reach = "did not answer: " + err.Error()
	} else {
		reach += fmt.Sprintf(" (token %s, PID %d in its own view)", info.Token, info.PID)
	}
	r, err := f.Exec(ctx, dbg, f.Tools.Processes()...)
	if err != nil || r.ExitCode != 0 {
		f.Checker.Fail(fmt.Sprintf("list the processes the debug container sees: %v\n%s", err, r))
	}
	visible := f.Tools.ShowsProcess(r.Stdout, target.Marker)
	evidence := fmt.Sprintf("debug container %s in the target's sandbox; %s\nthe target on localhost:%d %s\nprocesses it sees (%s):\n%s",
		dbg.Name, dbg.NotSent, target.Port, reach, strings.Join(r.Cmd, " "), r.Stdout)
	for _, n := range caps {
		obs := capability.Observation{Capability: n, Outcome: capability.NotOnOS, Requirements: windowsRequirements(n), Evidence: evidence}
		switch {
		case isIPC(n):
			obs.Observed = "accepted; a Windows container's CRI config has no IPC namespace option, and nothing IPC is shared between containers (WIN-1)"
		case visible:
			obs.Outcome, obs.Observed = capability.Deviated, "the target's processes are visible from the debug container: Windows shares no process namespace (WIN-1), so this runtime did something else"
		case n == capability.ProcRootFS:
			obs.Observed = "accepted; none of the target's processes visible, so no path through them to its files (WIN-1, WIN-2)"
		default:
			obs.Observed = "accepted; none of the target's processes visible (WIN-2)"
		}
		f.Checker.Record(obs)
	}
}

func isIPC(n capability.Name) bool { return n == capability.IPCPod || n == capability.IPCNode }

func windowsRequirements(n capability.Name) []string {
	if isIPC(n) {
		return winIPCRequirements
	}
	return winProcessRequirements
}
