package cri

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A user namespace asked for is sent as asked, in a message of its own for
// each config, and its maps render as the node's /proc shows them.
func TestUserns(t *testing.T) {
	u := PodUserns(100000, 65536)
	if u.Mode != runtimeapi.NamespaceMode_POD || IDMapText(u.Uids) != "0 100000 65536" || IDMapText(u.Gids) != "0 100000 65536" {
		t.Errorf("PodUserns = %v", u)
	}
	c := cloneUserns(u)
	c.Uids[0].HostId = 1
	if u.Uids[0].HostId != 100000 {
		t.Error("cloneUserns shares the mappings with its original")
	}
	if cloneUserns(nil) != nil || NodeUserns().Mode != runtimeapi.NamespaceMode_NODE {
		t.Error("nil or NODE user namespace not kept")
	}
	two := []*runtimeapi.IDMapping{{ContainerId: 0, HostId: 5, Length: 1}, {ContainerId: 1, HostId: 200000, Length: 10}}
	if got := IDMapText(two); got != "0 5 1\n1 200000 10" {
		t.Errorf("IDMapText = %q", got)
	}
}
