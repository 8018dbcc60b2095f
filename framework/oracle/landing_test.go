package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hybridCgroup is a cgroup v1 host's /proc/<pid>/cgroup with a cgroup2
// hierarchy mounted beside (/sys/fs/cgroup/unified).
const hybridCgroup = `12:pids:/ectest/c1
11:cpu,cpuacct:/ectest/c1
4:memory:/ectest/c1
1:name=systemd:/system.slice/containerd.service
0::/system.slice/containerd.service
`

// writeLanding gives a fake process a full landing record.
func writeLanding(t *testing.T, p Proc, pid, groups, seccomp, cgroup, oom string) {
	t.Helper()
	dir := filepath.Join(p.Root, pid)
	status := "Name:\tsh\nState:\tS (sleeping)\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\nGid:\t2000\t2000\t2000\t2000\nGroups:\t" + groups + " \nNSpid:\t" + pid + "\t1\n" +
		"CapInh:\t0000000000000000\nCapPrm:\t00000000a80425fb\nCapEff:\t00000000a80425fb\nCapBnd:\t00000000a80425fb\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t" + seccomp + "\nSeccomp_filters:\t1\n"
	must(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "oom_score_adj"), []byte(oom+"\n"), 0o644))
}

func TestReadLandingRecord(t *testing.T) {
	p := writeFake(t, fakeProcess{pid: 40, args: []string{"sh", "ectest-debug-x"}, nspid: []int{40, 1}, pidNS: "pid:[200]"},
		fakeProcess{pid: 41, args: []string{"sh"}, nspid: []int{41}, pidNS: "pid:[1]"})
	writeLanding(t, p, "40", "2000\t3000", "2", hybridCgroup, "-997")
	got, err := p.Read(40)
	must(t, err)
	want := Process{Groups: "2000 3000", CapPrm: "00000000a80425fb", CapInh: "0000000000000000", CapAmb: "0000000000000000", NoNewPrivs: "1", Seccomp: "2", SeccompFilters: "1", OOMScoreAdj: "-997"}
	if got.Groups != want.Groups || got.CapPrm != want.CapPrm || got.CapInh != want.CapInh || got.CapAmb != want.CapAmb || got.NoNewPrivs != want.NoNewPrivs ||
		got.Seccomp != want.Seccomp || got.SeccompFilters != want.SeccompFilters || got.OOMScoreAdj != want.OOMScoreAdj {
		t.Errorf("Read(40) = %+v", got)
	}
	if got.UID != "1000 1000 1000 1000" || got.InnerPID() != 1 {
		t.Errorf("uid %q, inner pid %d", got.UID, got.InnerPID())
	}
	if len(got.Cgroups) != 5 {
		t.Fatalf("cgroups %q: want every line", got.Cgroups)
	}
	for controller, want := range map[string]string{"memory": "/ectest/c1", "cpuacct": "/ectest/c1", "name=systemd": "/system.slice/containerd.service", "": "/system.slice/containerd.service"} {
		if path, ok := got.CgroupPath(controller); !ok || path != want {
			t.Errorf("CgroupPath(%q) = %q, %v; want %q", controller, path, ok, want)
		}
	}
	if _, ok := got.CgroupPath("hugetlb"); ok {
		t.Error("CgroupPath of a controller the process has no line for")
	}
	// Hybrid: the v1 controllers charge, not the named or unified hierarchy.
	if c := got.ChargedCgroups(); len(c) != 3 || c["memory"] != "/ectest/c1" || c["cpu,cpuacct"] != "/ectest/c1" {
		t.Errorf("ChargedCgroups = %v", c)
	}
	// cgroup v2 alone: the unified hierarchy charges.
	v2 := Process{Cgroups: CgroupLines("0::/kubepods/pod1/c1\n")}
	if c := v2.ChargedCgroups(); len(c) != 1 || c[""] != "/kubepods/pod1/c1" {
		t.Errorf("ChargedCgroups of cgroup v2 = %v", c)
	}
	// A process without cgroup and oom_score_adj files: not read, not empty.
	if q, err := p.Read(41); err != nil || q.Cgroups != nil || q.OOMScoreAdj != "" {
		t.Errorf("Read(41): cgroups %q, oom_score_adj %q, %v", q.Cgroups, q.OOMScoreAdj, err)
	}
}

// Differences says no for each field of the landing record, with the
// evidence phrase naming it, and yes for what may differ.
func TestDifferencesOfTheLandingRecord(t *testing.T) {
	p := writeFake(t, fakeProcess{pid: 40, args: []string{"sh"}, nspid: []int{40, 1}, pidNS: "pid:[200]"})
	writeLanding(t, p, "40", "2000", "2", hybridCgroup, "-997")
	own, err := p.Read(40)
	must(t, err)
	if d := Differences(own, own); len(d) != 0 {
		t.Fatalf("same process differs: %v", d)
	}
	for _, c := range []struct {
		name   string
		change func(*Process)
		want   string // "" none
	}{
		{"groups", func(p *Process) { p.Groups = "2000 0" }, `supplementary groups "2000 0", not "2000"`},
		{"permitted", func(p *Process) { p.CapPrm = "0" }, `permitted capabilities "0", not "00000000a80425fb"`},
		{"inheritable", func(p *Process) { p.CapInh = "ff" }, `inheritable capabilities "ff"`},
		{"ambient", func(p *Process) { p.CapAmb = "ff" }, `ambient capabilities "ff"`},
		{"no_new_privs", func(p *Process) { p.NoNewPrivs = "0" }, `no_new_privs "0", not "1"`},
		{"seccomp", func(p *Process) { p.Seccomp = "0" }, `seccomp mode "0", not "2"`},
		{"seccomp filters", func(p *Process) { p.SeccompFilters = "0" }, `seccomp filters "0", not "1"`},
		{"oom_score_adj", func(p *Process) { p.OOMScoreAdj = "-999" }, `oom_score_adj "-999", not "-997"`},
		{"oom_score_adj not read", func(p *Process) { p.OOMScoreAdj = "" }, ""},
		{"uts", func(p *Process) { p.Namespaces = map[Kind]string{}; copyNS(p, own); p.Namespaces[UTS] = "uts:[9]" }, "uts namespace uts:[9], not uts:[1]"},
		{"another memory cgroup", func(p *Process) { p.Cgroups = replaceLine(own.Cgroups, "4:memory:/ectest/c1", "4:memory:/ectest") },
			`memory cgroup "/ectest", not "/ectest/c1" nor below it`},
		{"no cpu cgroup", func(p *Process) { p.Cgroups = replaceLine(own.Cgroups, "11:cpu,cpuacct:/ectest/c1", "") }, `cpu,cpuacct cgroup (none), not "/ectest/c1"`},
		{"below the container's", func(p *Process) {
			p.Cgroups = replaceLine(own.Cgroups, "4:memory:/ectest/c1", "4:memory:/ectest/c1/exec")
		}, ""},
		{"another unified cgroup of a hybrid host", func(p *Process) {
			p.Cgroups = replaceLine(own.Cgroups, "0::/system.slice/containerd.service", "0::/user.slice")
		}, ""},
		{"cgroups not read", func(p *Process) { p.Cgroups = nil }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := own
			b.Namespaces = map[Kind]string{}
			copyNS(&b, own)
			c.change(&b)
			d := Differences(own, b)
			switch {
			case c.want == "" && len(d) != 0:
				t.Errorf("differs: %v", d)
			case c.want != "" && (len(d) != 1 || !strings.Contains(d[0], c.want)):
				t.Errorf("Differences = %q, want one with %q", d, c.want)
			}
		})
	}
	// On cgroup v2 the unified hierarchy is the one that charges.
	a, b := Process{Cgroups: []string{"0::/kubepods/pod1/c1"}}, Process{Cgroups: []string{"0::/system.slice"}}
	if d := Differences(a, b); len(d) != 1 || !strings.Contains(d[0], `unified cgroup "/system.slice", not "/kubepods/pod1/c1"`) {
		t.Errorf("cgroup v2: %q", d)
	}
}

// The inside view builds the same record from the texts a container reads.
func TestFromInside(t *testing.T) {
	status := "Name:\tsh\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nGroups:\t10 \nCapEff:\t00000000a80425fb\nNoNewPrivs:\t0\nSeccomp:\t0\n"
	p, err := FromInside(status, "0::/\n", " 0\n", map[Kind]string{PID: "pid:[5]", Net: ""})
	must(t, err)
	if p.Groups != "10" || p.CapEff != "00000000a80425fb" || p.Seccomp != "0" || p.OOMScoreAdj != "0" || len(p.Cgroups) != 1 || p.Namespaces[PID] != "pid:[5]" {
		t.Errorf("FromInside = %+v", p)
	}
	if _, ok := p.Namespaces[Net]; ok {
		t.Error("an empty link is kept")
	}
	q, err := FromInside(status, "", "", nil)
	must(t, err)
	if q.Cgroups != nil || q.OOMScoreAdj != "" {
		t.Errorf("unread cgroup and oom_score_adj: %+v", q)
	}
	if d := Differences(p, q); len(d) != 1 || !strings.Contains(d[0], "pid namespace") {
		t.Errorf("what one side did not read is not compared: %q", d)
	}
}

func copyNS(p *Process, from Process) {
	for k, v := range from.Namespaces {
		p.Namespaces[k] = v
	}
}

func replaceLine(lines []string, old, new string) []string {
	var out []string
	for _, l := range lines {
		if l == old {
			if new == "" {
				continue
			}
			l = new
		}
		out = append(out, l)
	}
	return out
}
