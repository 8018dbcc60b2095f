package embedded

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// A dead run's sandbox network namespaces (CNI's cni-* in /run/netns) are
// removed by the run's subnet, and another subnet's are left alone.
func TestRemoveNetnsIn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command")
	}
	mk := func(name, hostVeth, addr string) {
		t.Helper()
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
		for _, args := range [][]string{
			{"netns", "add", name},
			{"link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", name},
			{"-n", name, "addr", "add", addr, "dev", "eth0"},
		} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v: %v: %s", args, err, out)
			}
		}
	}
	id := fmt.Sprintf("%06d", os.Getpid()%1000000)
	ours, other := "cni-ectest-test-a"+id, "cni-ectest-test-b"+id
	mk(ours, "ecta"+id, "198.18.251.7/24")
	mk(other, "ectb"+id, "198.18.252.7/24")
	if err := removeNetnsIn("198.18.251.0/24"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/netns/" + ours); !os.IsNotExist(err) {
		t.Errorf("the run's network namespace %s is still there (%v)", ours, err)
	}
	if _, err := os.Stat("/run/netns/" + other); err != nil {
		t.Errorf("another subnet's network namespace %s was removed: %v", other, err)
	}
}
