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
	needIP(t)
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

// Sweep removes the directory of a dead run of this PID namespace and
// leaves one whose owner is of another PID namespace (a suite run in a
// container beside this one), whose PID it cannot judge.
func TestSweepJudgesOnlyItsOwnPIDNamespace(t *testing.T) {
	base := t.TempDir()
	dead := 1 << 22 // above pid_max's default: no such process
	for name, owner := range map[string]string{
		"ours":   fmt.Sprintf("%d %s", dead, ownPIDNamespace()),
		"old":    fmt.Sprintf("%d", dead),
		"theirs": fmt.Sprintf("%d pid:[1]", dead),
	} {
		l := layout{id: name, dir: base + "/" + name}
		if err := os.MkdirAll(l.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.ownerFile(), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Sweep(base); err != nil {
		t.Fatal(err)
	}
	for name, kept := range map[string]bool{"ours": false, "old": false, "theirs": true} {
		_, err := os.Stat(base + "/" + name)
		if (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, kept)
		}
	}
}

// needIP skips a test that makes links or network namespaces with the ip
// command where it cannot: not root, or no ip.
func needIP(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make links and network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command")
	}
}
