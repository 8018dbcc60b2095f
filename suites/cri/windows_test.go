package cri_test

import (
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	. "github.com/onsi/ginkgo/v2"
)

// windowsBranch is the first line of a spec of capabilities Windows has no
// such thing for (PID and IPC namespaces, the target's files through its
// processes; capability.AbsentOn). On a Windows node it records what a
// Windows debug container observes instead (cri.RecordAbsentOnWindows:
// accepted, none of the target's processes visible; no IPC option) for
// those of caps that are absent there, and returns true: the spec's Linux
// judgement does not apply, and nothing is skipped. Elsewhere it returns
// false and the spec goes on.
func windowsBranch(ctx SpecContext, caps ...capability.Name) bool {
	GinkgoHelper()
	if !session.Windows() {
		return false
	}
	var absent []capability.Name
	for _, n := range caps {
		if capability.MustLookup(n).AbsentOnOS(session.OS) {
			absent = append(absent, n)
		}
	}
	if len(absent) == 0 {
		return false
	}
	cri.New(session, absent...).RecordAbsentOnWindows(ctx, absent...)
	return true
}
