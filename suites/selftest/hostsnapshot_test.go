//go:build linux

package selftest

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// hostSnapshot is what a runtime can leave on the host outside its state
// directory: mount points, network interfaces, named network namespaces
// (/run/netns), iptables rules, CRI-O's attach directories
// (embedded.AttachBase) and processes of an embedded runtime. A run is
// checked by comparing a snapshot taken before it with one taken after it:
// whatever is new was left by the run (the self-tests run one at a time).
type hostSnapshot map[string]map[string]bool

var ruleCounters = regexp.MustCompile(`\[\d+:\d+\]`)

func takeHostSnapshot(t *testing.T) hostSnapshot {
	t.Helper()
	s := hostSnapshot{}
	add := func(kind, item string) {
		if s[kind] == nil {
			s[kind] = map[string]bool{}
		}
		s[kind][item] = true
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fields := strings.Fields(sc.Text()); len(fields) > 4 {
				add("mount", fields[4])
			}
		}
		f.Close()
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatalf("host snapshot: network interfaces: %v", err)
	}
	for _, i := range ifaces {
		add("network interface", i.Name)
	}
	for _, dir := range []string{"/run/netns", "/run/ectest-crio"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			add("file", dir+"/"+e.Name())
		}
	}
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(prog).Output()
		if err != nil {
			continue // no such table here: nothing to leave in it
		}
		for _, line := range strings.Split(string(out), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			add(prog, ruleCounters.ReplaceAllString(line, ""))
		}
	}
	for _, p := range processesMentioning("/var/lib/ectest/embedded") {
		add("process", p)
	}
	return s
}

// left lists what after has and s had not, kind by kind.
func (s hostSnapshot) left(after hostSnapshot) []string {
	var out []string
	for kind, items := range after {
		for item := range items {
			if !s[kind][item] {
				out = append(out, kind+": "+item)
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkHostLeft fails t with everything the run left on the host.
func checkHostLeft(t *testing.T, before hostSnapshot) {
	t.Helper()
	for _, l := range before.left(takeHostSnapshot(t)) {
		t.Errorf("left on the host after the run: %s", l)
	}
}

// The leak check says no as well as yes: a mount and a network interface
// made between two snapshots are reported, and nothing once they are gone.
func TestHostSnapshotSeesLeaks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount and to add a network interface")
	}
	before := takeHostSnapshot(t)
	dir := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "ectest-leak", dir).Run(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	defer exec.Command("umount", dir).Run()
	link := "ectestleak0"
	if out, err := exec.Command("ip", "link", "add", link, "type", "bridge").CombinedOutput(); err != nil {
		t.Skipf("cannot add a bridge interface here: %v: %s", err, out)
	}
	defer exec.Command("ip", "link", "del", link).Run()
	left := strings.Join(before.left(takeHostSnapshot(t)), "\n")
	for _, want := range []string{"mount: " + dir, "network interface: " + link} {
		if !strings.Contains(left, want) {
			t.Errorf("leak check missed %q; it reported:\n%s", want, left)
		}
	}
	exec.Command("ip", "link", "del", link).Run()
	exec.Command("umount", dir).Run()
	if l := before.left(takeHostSnapshot(t)); len(l) > 0 {
		t.Errorf("leak check reports what is gone: %v", l)
	}
}
