package embedded

import "testing"

// The socket name was checked against a live shim of the engine's
// containerd 1.6 (ls /run/containerd/s while a container ran).
func TestShimSocket(t *testing.T) {
	got := shimSocket("/var/lib/ectest/dsock/eefaedc0/containerd.sock", "moby", "bd75ebd21f375dc14a6b8ccce1309a81cf20688b51497870c7b92d05ab8c44e5")
	if got != "/run/containerd/s/e2d2fb75f8a81229a3fe0f784afad97fda82f26b652e520af70f1b8e3eb4a976" {
		t.Errorf("shimSocket = %s", got)
	}
}
