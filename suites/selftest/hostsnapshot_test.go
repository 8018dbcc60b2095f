//go:build linux

package selftest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// hostSnapshot is what a runtime can leave on the host outside its state
// directory: mount points, network interfaces, named network namespaces
// (/run/netns), iptables rules, CRI-O's attach directories
// (embedded.AttachBase) and processes of an embedded runtime. A run is
// checked by comparing a snapshot taken before it with one taken after it:
// whatever is new was left by the run (the CRI self-tests run one at a
// time). What the host's Docker engine owns is not in a snapshot: make test
// runs the cluster self-test (kind, on that engine) beside these runs, and
// its networks, containers and rules come and go meanwhile. No embedded
// runtime uses that engine (the embedded cri-dockerd's engine has a data
// root, exec root and socket of its own, no bridge and no iptables rules).
type hostSnapshot map[string]map[string]bool

var ruleCounters = regexp.MustCompile(`\[\d+:\d+\]`)

func takeHostSnapshot(t *testing.T) hostSnapshot {
	t.Helper()
	s := hostSnapshot{}
	// The engine is asked before and after the host is read: a network
	// made or removed in between is the engine's either way.
	docker := hostDocker()
	defer func() {
		docker.merge(hostDocker())
		for kind, items := range s {
			for item := range items {
				if kind == "network interface" && !strings.Contains(item, " (on ") {
					// Read again now: an interface the engine was making
					// is on its bridge by now, one gone meanwhile was no
					// leak.
					if _, err := os.Stat("/sys/class/net/" + item); err != nil {
						delete(items, item)
						continue
					}
					if docker.owns(kind, onBridge(item)) {
						delete(items, item)
						continue
					}
				}
				if docker.owns(kind, item) {
					delete(items, item)
				}
			}
		}
	}()
	add := func(kind, item string) {
		if kind == "network interface" {
			// Recorded with its bridge (read now: a veth can be gone by
			// the time the engine is asked again).
			item = onBridge(item)
		}
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

// onBridge is an interface's name, with the bridge it is on if any:
// "veth1 (on br-0a1b2c3d4e5f)".
func onBridge(name string) string {
	if master, err := os.Readlink("/sys/class/net/" + name + "/master"); err == nil {
		return name + " (on " + filepath.Base(master) + ")"
	}
	return name
}

// docker runs the docker CLI, bounded: a wedged engine fails the
// snapshot's question, it does not hang the self-test.
func docker(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dockerCLI)
	defer cancel()
	return exec.CommandContext(ctx, "docker", args...).Output()
}

// dockerCLI bounds one docker CLI call of the leak check.
const dockerCLI = 30 * time.Second

// dockerEngine is what the host's Docker engine owns, as the engine itself
// says (docker info, docker network inspect): its data root, its exec root,
// its bridge networks' bridges and subnets. The zero value (no engine
// answering) owns nothing.
type dockerEngine struct {
	roots   []string
	bridges map[string]bool
	subnets []*net.IPNet
}

func hostDocker() dockerEngine {
	d := dockerEngine{bridges: map[string]bool{}}
	root, err := docker("info", "--format", "{{.DockerRootDir}}")
	if err != nil || strings.TrimSpace(string(root)) == "" {
		return d
	}
	// The exec root (netns mounts) is not in docker info: the default's.
	d.roots = []string{strings.TrimSpace(string(root)) + "/", "/run/docker/", "/var/run/docker/"}
	ids, err := docker("network", "ls", "-q", "--no-trunc", "--filter", "driver=bridge")
	if err != nil || len(strings.Fields(string(ids))) == 0 {
		return d
	}
	args := append([]string{"network", "inspect", "--format",
		`{{.Id}} {{index .Options "com.docker.network.bridge.name"}} {{range .IPAM.Config}}{{.Subnet}} {{end}}`},
		strings.Fields(string(ids))...)
	out, _ := docker(args...) // a network removed meanwhile fails only its own line
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || len(f[0]) < 12 {
			continue
		}
		d.bridges["br-"+f[0][:12]] = true // the engine's name for a bridge not named by an option
		for _, v := range f[1:] {
			if _, n, err := net.ParseCIDR(v); err == nil {
				d.subnets = append(d.subnets, n)
			} else {
				d.bridges[v] = true
			}
		}
	}
	return d
}

func (d *dockerEngine) merge(o dockerEngine) {
	if len(d.roots) == 0 {
		d.roots = o.roots
	}
	for b := range o.bridges {
		d.bridges[b] = true
	}
	d.subnets = append(d.subnets, o.subnets...)
}

// owns says whether a snapshot's item is the engine's: a mount under its
// roots, one of its bridges or an interface on one, an iptables rule of its
// chains or naming its bridges or addresses in its subnets.
func (d dockerEngine) owns(kind, item string) bool {
	switch kind {
	case "mount":
		for _, r := range d.roots {
			if strings.HasPrefix(item, r) {
				return true
			}
		}
	case "network interface":
		name, master, _ := strings.Cut(strings.TrimSuffix(item, ")"), " (on ")
		return d.bridges[name] || d.bridges[master]
	case "iptables-save", "ip6tables-save":
		for _, tok := range strings.Fields(item) {
			if d.bridges[tok] || strings.HasPrefix(strings.TrimPrefix(tok, ":"), "DOCKER") {
				return true
			}
			ip, _, err := net.ParseCIDR(tok)
			if err != nil {
				ip = net.ParseIP(tok)
			}
			for _, n := range d.subnets {
				if ip != nil && n.Contains(ip) {
					return true
				}
			}
		}
	}
	return false
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

// The leak check leaves the host's Docker engine alone (the cluster
// self-test's kind networks come and go beside the CRI self-tests) and
// still sees what is not the engine's: a Docker network made between two
// snapshots (its bridge, its iptables rules) is not reported, a bridge of
// this test's own made at the same time is.
func TestHostSnapshotLeavesDockerAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to add a network interface")
	}
	if len(hostDocker().roots) == 0 {
		t.Skip("no Docker engine answers here (make test's cluster self-test starts one)")
	}
	before := takeHostSnapshot(t)
	name := fmt.Sprintf("ectest-snapshot-%d", os.Getpid())
	if out, err := exec.Command("docker", "network", "create", "--driver=bridge", name).CombinedOutput(); err != nil {
		t.Fatalf("docker network create: %v: %s", err, out)
	}
	defer exec.Command("docker", "network", "rm", name).Run()
	link := "ectestleak1"
	if out, err := exec.Command("ip", "link", "add", link, "type", "bridge").CombinedOutput(); err != nil {
		t.Skipf("cannot add a bridge interface here: %v: %s", err, out)
	}
	defer exec.Command("ip", "link", "del", link).Run()
	id, err := exec.Command("docker", "network", "inspect", "--format", "{{.Id}}", name).Output()
	if err != nil || len(strings.TrimSpace(string(id))) < 12 {
		t.Fatalf("docker network inspect %s: %v (%q)", name, err, id)
	}
	bridge := "br-" + strings.TrimSpace(string(id))[:12]
	if _, err := net.InterfaceByName(bridge); err != nil {
		t.Fatalf("the engine made no bridge %s for its network: %v", bridge, err)
	}
	left := before.left(takeHostSnapshot(t))
	if !slices.Contains(left, "network interface: "+link) {
		t.Errorf("leak check missed the test's own bridge %s; it reported: %v", link, left)
	}
	// Only what is this test's is asserted: the cluster lane of make test
	// may add things of its own meanwhile.
	subnet, err := exec.Command("docker", "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", name).Output()
	if err != nil || strings.TrimSpace(string(subnet)) == "" {
		t.Fatalf("docker network inspect %s: %v (%q)", name, err, subnet)
	}
	for _, l := range left {
		if strings.Contains(l, bridge) || strings.Contains(l, strings.TrimSpace(string(subnet))) {
			t.Errorf("leak check reports the Docker engine's network: %s", l)
		}
	}
}
