package oracle

import (
	"strings"
	"testing"
)

// The identity rule: the workload is the process in the deepest PID
// namespace that carries the marker, the earliest started there; the
// others follow and are named.
func TestWorkloadFirst(t *testing.T) {
	init := Process{PID: 10, NSpid: []int{10, 1}, StartTime: 100, Args: "busybox unshare -p -f -- /target --token=t-target", Namespaces: map[Kind]string{PID: "pid:[1]"}}
	workload := Process{PID: 12, NSpid: []int{12, 6, 1}, StartTime: 101, Args: "/target --token=t-target", Namespaces: map[Kind]string{PID: "pid:[2]"}}
	fork := Process{PID: 11, NSpid: []int{11, 5, 2}, StartTime: 105, Args: "/target --token=t-target", Namespaces: map[Kind]string{PID: "pid:[2]"}}
	for _, order := range [][]Process{{init, workload, fork}, {fork, init, workload}, {workload, fork, init}} {
		ps := append([]Process(nil), order...)
		WorkloadFirst(ps)
		if ps[0].PID != 12 || ps[1].PID != 11 || ps[2].PID != 10 {
			t.Errorf("order %v: got %d %d %d, want the workload 12, its later fork 11, the init 10", pids(order), ps[0].PID, ps[1].PID, ps[2].PID)
		}
		c := Carriers(ps)
		if !strings.HasPrefix(c, "workload PID 12 (1 inside, pid:[2])") || !strings.Contains(c, "PID 10 (1 inside, pid:[1])") || !strings.Contains(c, "PID 11") {
			t.Errorf("Carriers: %s", c)
		}
	}
	if c := Carriers([]Process{workload}); strings.Contains(c, "also") {
		t.Errorf("one carrier named others: %s", c)
	}
}

func pids(ps []Process) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}
