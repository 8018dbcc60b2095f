package oracle

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeProc writes a /proc with the given processes: pid -> args, inner
// pids, and pid namespace link (the other kinds get the pid link's number).
type fakeProcess struct {
	pid   int
	args  []string
	nspid []int
	pidNS string
	state string
}

func writeFake(t *testing.T, procs ...fakeProcess) Proc {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, fmt.Sprint(p.pid))
		must(t, os.MkdirAll(filepath.Join(dir, "ns"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "cmdline"), []byte(strings.Join(p.args, "\x00")+"\x00"), 0o644))
		state := p.state
		if state == "" {
			state = "S (sleeping)"
		}
		var nspid []string
		for _, n := range p.nspid {
			nspid = append(nspid, fmt.Sprint(n))
		}
		status := fmt.Sprintf("Name:\tx\nState:\t%s\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t%s\nCapEff:\t00000000a80425fb\nCapBnd:\t00000000a80425fb\n", state, strings.Join(nspid, "\t"))
		must(t, os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(fmt.Sprintf("%d (x y) S 1 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 %d 1 1", p.pid, 1000+p.pid)), 0o644))
		for _, k := range Kinds {
			link := p.pidNS
			if k != PID {
				link = string(k) + ":[1]"
			}
			must(t, os.Symlink(link, filepath.Join(dir, "ns", string(k))))
		}
		must(t, os.WriteFile(filepath.Join(dir, "uid_map"), []byte("         0          0 4294967295\n"), 0o644))
	}
	return Proc{Root: root}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadAndFind(t *testing.T) {
	p := writeFake(t,
		fakeProcess{pid: 1, args: []string{"/sbin/init"}, nspid: []int{1}, pidNS: "pid:[100]"},
		fakeProcess{pid: 40, args: []string{"sh", "-c", "sleep 86400 & wait", "ectest-debug-abc-debug"}, nspid: []int{40, 1}, pidNS: "pid:[200]"},
		fakeProcess{pid: 41, args: []string{"/target", "--token=abc-target"}, nspid: []int{41, 7}, pidNS: "pid:[200]", state: "T (stopped)"},
	)
	found, err := p.Find("ectest-debug-abc-debug")
	must(t, err)
	if len(found) != 1 || found[0].PID != 40 || found[0].InnerPID() != 1 || found[0].Namespaces[PID] != "pid:[200]" {
		t.Fatalf("Find: %+v", found)
	}
	if found[0].UIDMap != "0 0 4294967295" || found[0].StartTime != 1040 {
		t.Errorf("uid map %q, start time %d", found[0].UIDMap, found[0].StartTime)
	}
	target, err := p.Read(41)
	must(t, err)
	if !target.Stopped() {
		t.Errorf("state %q: want stopped", target.State)
	}
	init, ok, err := p.InitOf("pid:[200]")
	must(t, err)
	if !ok || init.PID != 40 {
		t.Errorf("InitOf: %v %+v", ok, init)
	}
	if _, err := p.Read(99); err != ErrGone {
		t.Errorf("Read of a missing pid: %v, want ErrGone", err)
	}
}

func proc(pid int, inner int, pidNS string) Process {
	return Process{PID: pid, NSpid: []int{pid, inner}, Namespaces: map[Kind]string{PID: pidNS}, Args: fmt.Sprintf("p%d", pid)}
}

func TestJudgePIDSaysYesAndNo(t *testing.T) {
	node := &Node{Process: Process{PID: 900, NSpid: []int{900}, Namespaces: map[Kind]string{PID: "pid:[1]"}}, How: "test"}
	target := proc(10, 1, "pid:[10]")
	sibling := proc(20, 1, "pid:[20]")
	pause := proc(5, 1, "pid:[5]")
	podTarget, podSibling := proc(11, 2, "pid:[5]"), proc(21, 3, "pid:[5]")
	for _, c := range []struct {
		name string
		s    PIDSubjects
		want View
	}{
		{"target", PIDSubjects{Observer: []Process{proc(30, 2, "pid:[10]")}, Target: &target, Siblings: []Process{sibling}, Node: node}, ViewTarget},
		{"pod", PIDSubjects{Observer: []Process{proc(30, 4, "pid:[5]")}, Target: &podTarget, Siblings: []Process{podSibling}, Node: node, Init: &pause}, ViewPod},
		{"own", PIDSubjects{Observer: []Process{proc(30, 1, "pid:[30]")}, Target: &target, Node: node}, ViewOwn},
		{"node", PIDSubjects{Observer: []Process{{PID: 30, NSpid: []int{30}, Namespaces: map[Kind]string{PID: "pid:[1]"}}}, Target: &target, Node: node}, ViewNode},
		// A namespace that shows the target's processes (a child of the
		// target's) is not the target's.
		{"child of the target's", PIDSubjects{Observer: []Process{proc(30, 1, "pid:[31]")}, Target: &target, Siblings: []Process{sibling}, Node: node}, ViewOwn},
		{"not PID 1, shares nothing", PIDSubjects{Observer: []Process{proc(30, 3, "pid:[31]")}, Target: &target, Siblings: []Process{sibling}, Node: node}, ViewOther},
		{"processes apart", PIDSubjects{Observer: []Process{proc(30, 2, "pid:[10]"), proc(31, 1, "pid:[31]")}, Target: &target, Siblings: []Process{sibling}, Node: node}, ViewOther},
		{"some siblings", PIDSubjects{Observer: []Process{proc(30, 4, "pid:[5]")}, Target: &podTarget, Siblings: []Process{podSibling, sibling}, Node: node, Init: &pause}, ViewOther},
		{"pod without infra", PIDSubjects{Observer: []Process{proc(30, 4, "pid:[5]")}, Target: &podTarget, Siblings: []Process{podSibling}, Node: node, Init: &podTarget}, ViewOther},
		{"nothing visible", PIDSubjects{Target: &target}, ViewOther},
	} {
		got, why := JudgePID(c.s)
		if got != c.want {
			t.Errorf("%s: %q (%s), want %q", c.name, got, why, c.want)
		}
	}
}

func TestDifferences(t *testing.T) {
	a := Process{Namespaces: map[Kind]string{PID: "pid:[1]", Net: "net:[2]"}, UID: "0 0 0 0", CapEff: "ff"}
	if d := Differences(a, a); len(d) != 0 {
		t.Errorf("same process differs: %v", d)
	}
	b := a
	b.Namespaces = map[Kind]string{PID: "pid:[9]", Net: "net:[2]"}
	b.CapEff = "0"
	d := Differences(a, b)
	if len(d) != 2 || !strings.Contains(d[0], "pid namespace pid:[9], not pid:[1]") || !strings.Contains(d[1], "effective capabilities") {
		t.Errorf("Differences: %v", d)
	}
}

// The node's reference is the server of a unix socket: here this test
// process itself, found through SO_PEERCRED.
func TestNodeBySocket(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peer credentials are read on Linux only")
	}
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	must(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	node, err := Proc{Root: "/proc"}.NodeBySocket(sock)
	must(t, err)
	if node.PID != os.Getpid() {
		t.Fatalf("node PID %d, want this process %d", node.PID, os.Getpid())
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	if node.Namespaces[PID] != self {
		t.Errorf("node pid namespace %q, want %q", node.Namespaces[PID], self)
	}
	if _, err := (Proc{Root: "/proc"}).NodeBySocket(filepath.Join(t.TempDir(), "none.sock")); err == nil {
		t.Error("a socket nobody serves gave a node")
	}
}

func TestJudgePIDOwnNeedsPID1(t *testing.T) {
	sibling := proc(20, 1, "pid:[20]")
	if v, why := JudgePID(PIDSubjects{Observer: []Process{proc(30, 5, "pid:[30]")}, Siblings: []Process{sibling}}); v != ViewOther {
		t.Errorf("an observer that is not PID 1 and shares nothing: %q (%s)", v, why)
	}
	if v, _ := JudgePID(PIDSubjects{Observer: []Process{proc(30, 1, "pid:[30]")}, Siblings: []Process{sibling}}); v != ViewOwn {
		t.Errorf("an isolated observer: %q", v)
	}
}

// A report read on a node decides like the suite's own reading: the
// observer's processes by marker, PID 1 of its namespace, the kubelet.
func TestReportObserveAndSubjects(t *testing.T) {
	p := writeFake(t,
		fakeProcess{pid: 1, args: []string{"/sbin/init"}, nspid: []int{1}, pidNS: "pid:[1]"},
		fakeProcess{pid: 7, args: []string{"/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml"}, nspid: []int{7}, pidNS: "pid:[1]"},
		fakeProcess{pid: 40, args: []string{"/pause"}, nspid: []int{40, 1}, pidNS: "pid:[5]"},
		fakeProcess{pid: 41, args: []string{"/target", "--token=t-target"}, nspid: []int{41, 2}, pidNS: "pid:[5]"},
		fakeProcess{pid: 42, args: []string{"sh", "-c", "sleep 86400 & wait", "ectest-debug-t-debugger"}, nspid: []int{42, 3}, pidNS: "pid:[5]"},
	)
	r, err := p.Observe("kubelet", []string{"ectest-debug-t-debugger", "--token=t-target", "--token=t-sibling"})
	must(t, err)
	if r.Node == nil || r.Node.PID != 7 {
		t.Fatalf("node %+v (%s)", r.Node, r.NoNode)
	}
	s, missing := r.Subjects("ectest-debug-t-debugger", "", "--token=t-target", "--token=t-sibling")
	if len(missing) != 1 || missing[0] != "--token=t-sibling" {
		t.Errorf("missing %v", missing)
	}
	s, missing = r.Subjects("ectest-debug-t-debugger", "", "--token=t-target")
	if len(missing) != 0 || s.Init == nil || s.Init.PID != 40 {
		t.Fatalf("subjects %+v, missing %v", s, missing)
	}
	if v, why := JudgePID(s); v != ViewPod {
		t.Errorf("view %q (%s), want the pod's", v, why)
	}
	if _, err := (Proc{Root: t.TempDir()}).NodeByProgram("kubelet"); err == nil {
		t.Error("a /proc without a kubelet gave a node")
	}
}

func TestDescendants(t *testing.T) {
	root := t.TempDir()
	for pid, ppid := range map[int]int{1: 0, 10: 1, 11: 10, 12: 11, 20: 1} {
		dir := filepath.Join(root, fmt.Sprint(pid))
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "status"), []byte(fmt.Sprintf("Name:\tx\nPPid:\t%d\n", ppid)), 0o644))
	}
	if got := (Proc{Root: root}).Descendants(10); fmt.Sprint(got) != "[11 12]" {
		t.Errorf("descendants of 10: %v", got)
	}
}
