package oracle

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Kind is a namespace kind, as /proc/<pid>/ns names it.
type Kind string

// The namespace kinds the oracle reads.
const (
	PID    Kind = "pid"
	Net    Kind = "net"
	IPC    Kind = "ipc"
	Mount  Kind = "mnt"
	UTS    Kind = "uts"
	User   Kind = "user"
	Cgroup Kind = "cgroup"
)

// Kinds are every kind Read reads, in a fixed order.
var Kinds = []Kind{PID, Net, IPC, Mount, UTS, User, Cgroup}

// Proc is a /proc the suite reads: the node's, seen from a process in the
// node's PID namespace (the suite on the node, or an observer placed there).
type Proc struct {
	// Root is the procfs mount ("/proc").
	Root string
	// Self is the reading process's PID in Root's namespace (0: none), left
	// out of Find: the suite's own command lines carry markers too.
	Self int
}

// Host is this machine's /proc as the running process sees it.
func Host() Proc { return Proc{Root: "/proc", Self: os.Getpid()} }

// Process is what the oracle read of one process.
type Process struct {
	PID  int    `json:"pid"`
	Args string `json:"args"`
	// PPid is the parent's PID, in the reader's namespace (0: not visible).
	PPid int `json:"ppid"`
	// State is /proc/<pid>/status's State ("S (sleeping)", "T (stopped)").
	State string `json:"state"`
	// NSpid is the PID in each nested PID namespace, outermost first: its
	// last element is the PID the process has in its own namespace.
	NSpid []int `json:"nspid"`
	// UID and GID are status's Uid and Gid lines (real, effective, saved, fs).
	UID string `json:"uid"`
	GID string `json:"gid"`
	// Groups are status's supplementary groups, space-separated ("": none).
	Groups string `json:"groups"`
	// CapEff, CapBnd, CapPrm, CapInh and CapAmb are the effective,
	// bounding, permitted, inheritable and ambient capability sets (hex).
	CapEff string `json:"capEff"`
	CapBnd string `json:"capBnd"`
	CapPrm string `json:"capPrm"`
	CapInh string `json:"capInh"`
	CapAmb string `json:"capAmb"`
	// NoNewPrivs is status's NoNewPrivs ("0" or "1").
	NoNewPrivs string `json:"noNewPrivs"`
	// Seccomp is status's seccomp mode ("0" off, "1" strict, "2" filter);
	// SeccompFilters its Seccomp_filters ("": a kernel without the line).
	Seccomp        string `json:"seccomp"`
	SeccompFilters string `json:"seccompFilters,omitempty"`
	// Cgroups are /proc/<pid>/cgroup's lines ("4:memory:/a", "0::/b"),
	// every one: a cgroup v1 host may mount a cgroup2 hierarchy beside
	// its controllers (CgroupPath reads them; nil: not read).
	Cgroups []string `json:"cgroups,omitempty"`
	// OOMScoreAdj is /proc/<pid>/oom_score_adj ("": not read).
	OOMScoreAdj string `json:"oomScoreAdj,omitempty"`
	// Namespaces are the ns links ("pid:[4026531836]") by kind.
	Namespaces map[Kind]string `json:"namespaces"`
	// UIDMap and GIDMap are the user namespace's id maps, one mapping a line.
	UIDMap string `json:"uidMap"`
	GIDMap string `json:"gidMap"`
	// StartTime is field 22 of /proc/<pid>/stat (clock ticks since boot):
	// with PID, it tells a process from a later one that reused the PID.
	StartTime uint64 `json:"startTime"`
}

// InnerPID is the process's PID in its own PID namespace.
func (p Process) InnerPID() int {
	if len(p.NSpid) == 0 {
		return 0
	}
	return p.NSpid[len(p.NSpid)-1]
}

// Stopped reports whether the process is stopped (SIGSTOP, a debugger, a
// frozen cgroup shows as D or T depending on the kernel; T and t here).
func (p Process) Stopped() bool {
	return strings.HasPrefix(p.State, "T") || strings.HasPrefix(p.State, "t")
}

// String is a one-line summary for evidence.
func (p Process) String() string {
	var ns []string
	for _, k := range Kinds {
		if l, ok := p.Namespaces[k]; ok {
			ns = append(ns, l)
		}
	}
	return fmt.Sprintf("pid %d (%d inside) %q state %q uid %q gid %q groups %q capEff %s capPrm %s capAmb %s no_new_privs %s seccomp %s oom_score_adj %s cgroups %q ns %s",
		p.PID, p.InnerPID(), p.Args, p.State, p.UID, p.GID, p.Groups, p.CapEff, p.CapPrm, p.CapAmb, orNone(p.NoNewPrivs), orNone(p.Seccomp), orNone(p.OOMScoreAdj), strings.Join(p.Cgroups, " "), strings.Join(ns, " "))
}

// ErrGone is returned for a process that exited while being read.
var ErrGone = errors.New("process gone")

// Read reads one process.
func (p Proc) Read(pid int) (Process, error) {
	dir := filepath.Join(p.Root, strconv.Itoa(pid))
	out := Process{PID: pid, Namespaces: map[Kind]string{}}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return out, gone(err)
	}
	out.Args = strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	status, err := p.status(pid)
	if err != nil {
		return out, err
	}
	if err := out.applyStatus(status); err != nil {
		return out, fmt.Errorf("%s/status: %w", dir, err)
	}
	if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
		out.StartTime = startTime(string(stat))
	}
	for _, k := range Kinds {
		l, err := os.Readlink(filepath.Join(dir, "ns", string(k)))
		if err != nil {
			if os.IsNotExist(err) {
				if _, serr := os.Stat(dir); serr != nil {
					return out, ErrGone
				}
				continue // a kernel without this kind
			}
			return out, fmt.Errorf("read %s namespace of pid %d: %w", k, pid, err)
		}
		out.Namespaces[k] = l
	}
	if b, err := os.ReadFile(filepath.Join(dir, "uid_map")); err == nil {
		out.UIDMap = NormalizeMap(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "gid_map")); err == nil {
		out.GIDMap = NormalizeMap(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
		out.Cgroups = CgroupLines(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "oom_score_adj")); err == nil {
		out.OOMScoreAdj = strings.TrimSpace(string(b))
	}
	return out, nil
}

func gone(err error) error {
	if os.IsNotExist(err) || errors.Is(err, os.ErrNotExist) {
		return ErrGone
	}
	return err
}

// startTime is field 22 of a stat line; the command (field 2) is in
// parentheses and may hold spaces, so fields are counted after its ')'.
func startTime(stat string) uint64 {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(fields[19], 10, 64)
	return n
}

// NormalizeMap is a uid_map or gid_map as the oracle holds it: one
// mapping a line, its columns separated by one space.
func NormalizeMap(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}

// pids lists the numeric entries of Root.
func (p Proc) pids() ([]int, error) {
	entries, err := os.ReadDir(p.Root)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Find reads every process whose command line holds marker as a word of
// its own (between spaces or at an end, so that a container "target" is
// not found by its sibling "target2"'s marker), except the reading process
// itself. Processes that exit meanwhile are left out. They come in the
// order of the identity rule (WorkloadFirst): the container's workload
// first, so every judge that takes a container's process takes the same
// one, whichever subject it is.
func (p Proc) Find(marker string) ([]Process, error) {
	if marker == "" {
		return nil, errors.New("oracle: Find needs a marker")
	}
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, pid := range pids {
		if pid == p.Self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "cmdline"))
		if err != nil || !HasWord(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), marker) {
			continue
		}
		proc, err := p.Read(pid)
		if errors.Is(err, ErrGone) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, proc)
	}
	WorkloadFirst(out)
	return out, nil
}

// WorkloadFirst orders the processes that carry one container's marker by
// the identity rule, the same for every subject (the debug container, the
// target, its siblings, an observer, an exec session): the workload is
// the process in the deepest PID namespace among them (the most NSpid
// entries), the earliest started there (a fork of it that still carries
// its argv comes later). A runtime that runs the container's command
// behind an init of its own, in a namespace below the one it records for
// the container, makes the command the workload, not the init: the user
// targets the workload. The rest follow in the same order; every one is
// still there to be accounted for (Carriers).
func WorkloadFirst(ps []Process) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if len(a.NSpid) != len(b.NSpid) {
			return len(a.NSpid) > len(b.NSpid)
		}
		if a.StartTime != b.StartTime {
			return a.StartTime < b.StartTime
		}
		return a.PID < b.PID
	})
}

// Carriers is evidence of every process that carries one container's
// marker, the workload (the first, WorkloadFirst) named as such: where
// there are several, every one is accounted for.
func Carriers(ps []Process) string {
	if len(ps) == 0 {
		return "no process"
	}
	out := fmt.Sprintf("workload PID %d (%d inside, %s)", ps[0].PID, ps[0].InnerPID(), ps[0].Namespaces[PID])
	if len(ps) > 1 {
		var rest []string
		for _, p := range ps[1:] {
			rest = append(rest, fmt.Sprintf("PID %d (%d inside, %s) %q", p.PID, p.InnerPID(), p.Namespaces[PID], p.Args))
		}
		out += "; also carrying its marker: " + strings.Join(rest, ", ")
	}
	return out
}

// Carries reports whether any process but the reader's own has s in its
// command line (anywhere, not only as a word): whether processes of a
// spec, whose argv carry its token, are visible in Root at all.
func (p Proc) Carries(s string) (bool, error) {
	pids, err := p.pids()
	if err != nil {
		return false, err
	}
	for _, pid := range pids {
		if pid == p.Self {
			continue
		}
		if cmdline, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "cmdline")); err == nil && bytes.Contains(cmdline, []byte(s)) {
			return true, nil
		}
	}
	return false, nil
}

// HasWord reports whether args holds marker between spaces or at an end.
func HasWord(args, marker string) bool {
	return marker != "" && strings.Contains(" "+strings.TrimSpace(args)+" ", " "+marker+" ")
}

// InitOf finds the process that is PID 1 of the PID namespace link names
// (a pod's infra process, a container's own first process); ok is false
// when no process of that namespace with inner PID 1 is visible.
func (p Proc) InitOf(link string) (Process, bool, error) {
	pids, err := p.pids()
	if err != nil {
		return Process{}, false, err
	}
	for _, pid := range pids {
		l, err := os.Readlink(filepath.Join(p.Root, strconv.Itoa(pid), "ns", string(PID)))
		if err != nil || l != link {
			continue
		}
		proc, err := p.Read(pid)
		if err != nil {
			continue
		}
		if proc.InnerPID() == 1 {
			return proc, true, nil
		}
	}
	return Process{}, false, nil
}

// status is /proc/<pid>/status as its fields ("State" to "S (sleeping)"),
// each value trimmed; ErrGone when the process is.
func (p Proc) status(pid int) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(p.Root, strconv.Itoa(pid), "status"))
	if err != nil {
		return nil, gone(err)
	}
	return parseStatus(string(b)), nil
}

// State is the process's state as /proc/<pid>/status gives it ("S
// (sleeping)", "T (stopped)", "Z (zombie)"); an error when it is gone.
func (p Proc) State(pid int) (string, error) {
	status, err := p.status(pid)
	return status["State"], err
}

// Descendants lists the PIDs of every process below pid (its children,
// theirs, ...), as Root shows them.
func (p Proc) Descendants(pid int) []int {
	pids, err := p.pids()
	if err != nil {
		return nil
	}
	parent := map[int]int{}
	for _, q := range pids {
		if status, err := p.status(q); err == nil {
			parent[q], _ = strconv.Atoi(status["PPid"])
		}
	}
	below := map[int]bool{pid: true}
	for changed := true; changed; {
		changed = false
		for q, pp := range parent {
			if below[pp] && !below[q] {
				below[q], changed = true, true
			}
		}
	}
	var out []int
	for q := range below {
		if q != pid {
			out = append(out, q)
		}
	}
	sort.Ints(out)
	return out
}

// Alive reports whether proc still runs as the same process (same PID and
// start time).
func (p Proc) Alive(proc Process) bool {
	now, err := p.Read(proc.PID)
	return err == nil && now.StartTime == proc.StartTime
}
