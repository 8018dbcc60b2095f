package embedded

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The run's bridge keeps its own address when a port with a lower one
// joins: a CNI CHECK of a sandbox made before then still finds the
// bridge's address as the ADD reported it.
func TestBridgeKeepsItsAddress(t *testing.T) {
	needIP(t)
	// A run ID whose bridge is not on this host (freeNetworkID's rule).
	l := layout{id: freeNetworkID(t.TempDir())}
	bridge, _ := l.network()
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", bridge).Run() })
	if err := makeBridge(l); err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprintf("ectp%06d", os.Getpid()%1000000)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", port).Run() })
	for _, args := range [][]string{
		{"link", "add", port, "type", "veth", "peer", "name", port + "b"},
		{"link", "set", port, "address", "02:00:00:00:00:01"},
		{"link", "set", port, "master", bridge},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	b, err := os.ReadFile("/sys/class/net/" + bridge + "/address")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != l.bridgeMAC() {
		t.Errorf("bridge %s has address %s once a port with 02:00:00:00:00:01 joined, want its own %s", bridge, got, l.bridgeMAC())
	}
}
