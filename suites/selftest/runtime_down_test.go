//go:build linux

package selftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/report"
	"github.com/onsi/ginkgo/v2/types"
)

// The runtime-down scenarios' times, in one place.
const (
	// runtimeDownWithin bounds the suite's start until specs have sandboxes
	// in the embedded runtime (the runtime and images set up first).
	runtimeDownWithin = 4 * time.Minute
	// runtimeCall is the bound of one CRI call the runs are given
	// (-runtime-service-timeout; Timeouts.RuntimeCall, 30 s by default).
	runtimeCall = 10 * time.Second
	// runtimeFrozenFor is how long the frozen runtime stays stopped:
	// longer than one CRI call may take (runtimeCall), so that calls in
	// flight time out too, not only the specs that start while it is
	// stopped.
	runtimeFrozenFor = runtimeCall + 5*time.Second
	// runtimeDownStopWithin bounds the rest of the run once the runtime
	// went away: the run must end within its own timeouts.
	runtimeDownStopWithin = 5 * time.Minute
)

// A runtime that dies or hangs in the middle of a run (R2) is no verdict
// on anything: the embedded containerd is killed (SIGKILL), or stopped
// (SIGSTOP) and continued runtimeFrozenFor later, once specs of a parallel
// run have sandboxes in it. Every spec it took down must be a run error
// that says when the runtime went away, none a nonconformance (beyond the
// runtime's known deviations, which the specs that ran while it answered
// still find); the run ends within its timeouts with exit 3 and
// leaves nothing behind, once the runtime is back or the run is over.
func TestRuntimeDownMidRunIsRunError(t *testing.T) {
	runs(t) // needs the host set up for the embedded runtime, as make test does
	bin := suiteBinary(t, "cri")
	for _, c := range []struct {
		name   string
		signal syscall.Signal
	}{
		{"killed", syscall.SIGKILL},
		{"frozen", syscall.SIGSTOP},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := takeHostSnapshot(t)
			dir := t.TempDir()
			// Compared with the runtime's known deviations: what the
			// runtime does wrong anyway stays a verdict of the specs that
			// ran while it answered; nothing new may appear.
			argv := []string{bin, "-parallel=4", "-ginkgo.randomize-all", "-expect=builtin", "-report-dir=" + dir, "-runtime-service-timeout=" + runtimeCall.String()}
			var pid int
			var at time.Time
			var thaw *time.Timer
			// The runtime goes away once two specs have sandboxes in it.
			out, code := interruptRunEnv(t, argv, nil, false, func() bool {
				socks, _ := filepath.Glob("/var/lib/ectest/embedded/*/containerd.sock")
				if len(socks) != 1 || sandboxes(socks[0]) < 2 {
					return false
				}
				pid = embeddedContainerd(t)
				at = time.Now()
				if err := syscall.Kill(pid, c.signal); err != nil {
					t.Fatalf("signal %v to the embedded containerd %d: %v", c.signal, pid, err)
				}
				t.Logf("%s: the embedded containerd (pid %d) got %v at %s", c.name, pid, c.signal, at.Format("15:04:05.000"))
				if c.signal == syscall.SIGSTOP {
					thaw = time.AfterFunc(runtimeFrozenFor, func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
				}
				return true
			}, "two specs with sandboxes in the embedded runtime", runtimeDownWithin, runtimeDownStopWithin+runtimeFrozenFor)
			if thaw != nil && thaw.Stop() {
				_ = syscall.Kill(pid, syscall.SIGCONT) // the run ended first: never leave it stopped
			}
			t.Logf("the run ended with exit %d, %s after the runtime went away", code, time.Since(at).Round(time.Second))
			if code != 3 {
				t.Errorf("want exit 3 (a run error), got %d", code)
			}
			sum := readSummary(t, dir)
			if sum.Expectations == nil {
				t.Fatalf("the run was not compared with the runtime's expectation file:\n%s", out.String())
			}
			if len(sum.Expectations.New) > 0 {
				t.Errorf("the runtime going away was counted as nonconformance:\n%s", strings.Join(sum.Expectations.New, "\n"))
			}
			wentAway := 0
			for _, j := range sum.Judged {
				if strings.Contains(j.Why+j.Message, "the runtime went away at") {
					wentAway++
				}
			}
			if wentAway == 0 {
				t.Errorf("no spec's run error says the runtime went away; run errors:\n%s", strings.Join(sum.RunErrors, "\n"))
			}
			t.Logf("specs: %+v; %d run errors say the runtime went away", sum.Specs, wentAway)
			logSlowest(t, dir, 3)
			checkNoEmbeddedLeft(t)
			checkHostLeft(t, before)
			if t.Failed() {
				t.Logf("suite output:\n%s", out.String())
			}
		})
	}
}

// embeddedContainerd is the pid of the one embedded containerd running
// (its command line names its configuration under the embedded runtime's
// base directory; shims are not containerd itself).
func embeddedContainerd(t *testing.T) int {
	t.Helper()
	var found []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := strings.Split(string(b), "\x00")
		if filepath.Base(argv[0]) == "containerd" && strings.Contains(string(b), "/var/lib/ectest/embedded/") {
			pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one embedded containerd, found %v", found)
	}
	return found[0]
}

// logSlowest logs the n longest specs of the run in dir, with their state:
// what the run's time after the runtime went away went to (the report
// itself goes with the test's temporary directory).
func logSlowest(t *testing.T, dir string, n int) {
	t.Helper()
	var specs types.SpecReports
	for _, s := range suiteReport(t, dir).SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && !s.State.Is(types.SpecStateSkipped) {
			specs = append(specs, s)
		}
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].RunTime > specs[j].RunTime })
	for _, s := range specs[:min(n, len(specs))] {
		t.Logf("slowest: %s, %s: %s", s.RunTime.Round(100*time.Millisecond), s.State, s.FullText())
	}
}

func readSummary(t *testing.T, dir string) report.Summary {
	t.Helper()
	var s report.Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("the run wrote no summary: %v", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}
