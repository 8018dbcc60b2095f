package cri

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestNotReady(t *testing.T) {
	cond := func(typ string, ok bool, reason, msg string) *runtimeapi.RuntimeCondition {
		return &runtimeapi.RuntimeCondition{Type: typ, Status: ok, Reason: reason, Message: msg}
	}
	for _, c := range []struct {
		name  string
		conds []*runtimeapi.RuntimeCondition
		want  string // "" for ready
	}{
		{"ready", []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, true, "", ""), cond(runtimeapi.NetworkReady, true, "", "")}, ""},
		{"no CNI", []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, true, "", ""), cond(runtimeapi.NetworkReady, false, "NetworkPluginNotReady", "Network plugin returns error: cni plugin not initialized")},
			"NetworkReady=false (NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized)"},
		{"runtime down, no reason", []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, false, "", ""), cond(runtimeapi.NetworkReady, true, "", "")}, "RuntimeReady=false (no reason given)"},
		{"absent", []*runtimeapi.RuntimeCondition{cond(runtimeapi.RuntimeReady, true, "", "")}, "NetworkReady absent"},
		{"nothing", nil, "RuntimeReady absent from the runtime's Status; NetworkReady absent"},
	} {
		err := NotReady(&runtimeapi.RuntimeStatus{Conditions: c.conds})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
