//go:build !windows

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/report/matrix"
)

func newRunner(t *testing.T, parallel int) (*runner, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	var log bytes.Buffer
	return &runner{cellsDir: filepath.Join(dir, matrix.CellsDir), pageDir: dir, parallel: parallel, grace: 5 * time.Second, progress: time.Hour, log: &log}, &log
}

func readRun(t *testing.T, r *runner, name string) matrix.CellRun {
	t.Helper()
	run, err := matrix.ReadCellRun(filepath.Join(r.cellsDir, name))
	if err != nil || run == nil {
		t.Fatalf("cell %s: no cell.json (%v)", name, err)
	}
	return *run
}

// Cells without a common lock run side by side: each waits for the
// other's mark, which only works when both run at once. Cells sharing a
// lock never overlap, whatever -parallel allows.
func TestCellsRunSideBySideUnlessTheyShareALock(t *testing.T) {
	r, log := newRunner(t, 2)
	marks := t.TempDir()
	meet := func(me, other string) string {
		return "touch " + marks + "/" + me + "; for i in $(seq 100); do [ -e " + marks + "/" + other + " ] && exit 0; sleep 0.1; done; exit 1"
	}
	hold := func(me string) string {
		return "[ -e " + marks + "/held ] && exit 1; touch " + marks + "/held; sleep 0.5; rm " + marks + "/held; echo " + me + " > $REPORT_DIR/ran"
	}
	r.run(context.Background(), []matrix.CellConfig{
		{Name: "a", Layer: "cri", Command: meet("a", "b")},
		{Name: "b", Layer: "cri", Command: meet("b", "a")},
		{Name: "k1", Layer: "cluster", Command: hold("k1"), Locks: []string{"kind"}},
		{Name: "k2", Layer: "cluster", Command: hold("k2"), Locks: []string{"kind"}},
	})
	for _, n := range []string{"a", "b", "k1", "k2"} {
		if run := readRun(t, r, n); run.CommandExit != 0 {
			t.Errorf("cell %s exited %d\n%s", n, run.CommandExit, log)
		}
	}
	if _, err := os.Stat(filepath.Join(r.cellsDir, "k2", "ran")); err != nil {
		t.Errorf("cell k2 did not run with REPORT_DIR its folder: %v", err)
	}
}

// A cell's command sees its folder and name, not an outer make's
// variables; a failed prepare keeps its command from running; an
// identical prepare runs once.
func TestPrepareAndEnvironment(t *testing.T) {
	r, log := newRunner(t, 1)
	t.Setenv("MAKEFLAGS", " -- REPORT_DIR=/elsewhere")
	counter := filepath.Join(t.TempDir(), "prepares")
	prepare := "echo x >> " + counter
	r.run(context.Background(), []matrix.CellConfig{
		{Name: "env", Layer: "cri", Prepare: prepare, Command: `[ -z "${MAKEFLAGS:-}" ] && [ "$(basename "$REPORT_DIR")" = env ] && [ "$CELL" = env ] && [ "$EXTRA" = yes ]`, Env: map[string]string{"EXTRA": "yes"}},
		{Name: "same-prepare", Layer: "cri", Prepare: prepare, Command: "true"},
		{Name: "broken-prepare", Layer: "cri", Prepare: "echo 'ectest: apt-get failed'; exit 1", Command: "touch $REPORT_DIR/ran"},
		{Name: "skipped", Layer: "cluster", Skip: "not built yet"},
	})
	if run := readRun(t, r, "env"); run.CommandExit != 0 {
		t.Errorf("the cell's environment is wrong (exit %d)\n%s", run.CommandExit, log)
	}
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "x") != 1 {
		t.Errorf("an identical prepare ran %d times, want once", strings.Count(string(b), "x"))
	}
	run := readRun(t, r, "broken-prepare")
	if !run.PrepareFailed || run.PrepareExit != 1 {
		t.Errorf("a failed prepare is not recorded: %+v", run)
	}
	if _, err := os.Stat(filepath.Join(r.cellsDir, "broken-prepare", "ran")); err == nil {
		t.Error("a cell whose prepare failed ran its command")
	}
	c, _ := matrix.ReadCell(matrix.CellConfig{Name: "broken-prepare", Layer: "cri"}, filepath.Join(r.cellsDir, "broken-prepare"), r.pageDir)
	if c.ExitCode != 3 || !strings.Contains(c.Note, "ectest: apt-get failed") {
		t.Errorf("a failed prepare reads as exit %d (%s)", c.ExitCode, c.Note)
	}
	if _, err := os.Stat(filepath.Join(r.cellsDir, "skipped")); err == nil {
		t.Error("a skipped cell got a folder")
	}
}

// At its timeout a cell's whole process group gets Ctrl-C (the suites
// clean up on it), and the cell is a run error.
func TestTimeoutInterruptsTheCellsProcessGroup(t *testing.T) {
	r, log := newRunner(t, 1)
	start := time.Now()
	r.run(context.Background(), []matrix.CellConfig{
		{Name: "slow", Layer: "cri", Timeout: "1s", Command: `bash -c 'trap "echo child cleaned up; exit 130" INT; sleep 60 & wait' ; exit 130`},
	})
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the timed-out cell took %s to end", d)
	}
	run := readRun(t, r, "slow")
	if !run.TimedOut {
		t.Errorf("not recorded as timed out: %+v\n%s", run, log)
	}
	b, _ := os.ReadFile(filepath.Join(r.cellsDir, "slow", matrix.CellLogFile))
	if !strings.Contains(string(b), "child cleaned up") {
		t.Errorf("the cell's child never got Ctrl-C:\n%s", b)
	}
	c, _ := matrix.ReadCell(matrix.CellConfig{Name: "slow", Layer: "cri"}, filepath.Join(r.cellsDir, "slow"), r.pageDir)
	if c.ExitCode != 3 || !strings.Contains(c.Note, "timed out") {
		t.Errorf("a timed-out cell reads as exit %d (%s)", c.ExitCode, c.Note)
	}
}

// Ctrl-C to the matrix interrupts the running cells and starts no more;
// those read as not run.
func TestInterruptStartsNoMoreCells(t *testing.T) {
	r, _ := newRunner(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	marks := t.TempDir()
	go func() {
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(filepath.Join(marks, "started")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	r.run(ctx, []matrix.CellConfig{
		{Name: "first", Layer: "cri", Command: "touch " + marks + "/started; sleep 60"},
		{Name: "second", Layer: "cri", Command: "true"},
	})
	if run := readRun(t, r, "first"); !run.Interrupted {
		t.Errorf("the running cell is not recorded as interrupted: %+v", run)
	}
	if run := readRun(t, r, "second"); run.NotRun == "" {
		t.Errorf("the waiting cell ran after Ctrl-C: %+v", run)
	}
}

// A cell configured ahead of its work (a make target that does not exist
// yet, a program not installed) is not run, with the reason, and the
// others run; a target make knows runs.
func TestCellWithoutItsTargetIsNotRun(t *testing.T) {
	r, log := newRunner(t, 2)
	t.Chdir(t.TempDir())
	if err := os.WriteFile("Makefile", []byte(".PHONY: exists\nexists:\n\ttouch $(REPORT_DIR)/ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.run(context.Background(), []matrix.CellConfig{
		{Name: "future", Layer: "cluster", Prepare: "touch prepared", Command: "make conformance-skew CLUSTER_FLAGS=-cluster-name=ectest-$CELL"},
		{Name: "no-program", Layer: "cri", Command: "KIND=1 ectest-no-such-program --x"},
		{Name: "exists", Layer: "cri", Command: "make exists"},
	})
	for name, want := range map[string]string{"future": `make target "conformance-skew" does not exist`, "no-program": "ectest-no-such-program, which is not installed"} {
		run := readRun(t, r, name)
		if !strings.Contains(run.NotRun, want) {
			t.Errorf("cell %s: not run %q, want it to say %q\n%s", name, run.NotRun, want, log)
		}
		c, res := matrix.ReadCell(matrix.CellConfig{Name: name, Layer: "cri"}, filepath.Join(r.cellsDir, name), r.pageDir)
		if c.Ran || res["capability:pid-target"].Status() != matrix.NotRun {
			t.Errorf("cell %s reads as ran=%v, %s", name, c.Ran, res["capability:pid-target"].Status())
		}
	}
	if _, err := os.Stat("prepared"); err == nil {
		t.Error("the prepare step of a cell without its target ran")
	}
	if _, err := os.Stat(filepath.Join(r.cellsDir, "exists", "ran")); err != nil {
		t.Errorf("the cell with a make target that exists did not run: %v\n%s", err, log)
	}
}

// A lock that is a file (/run/ectest/heavy.lock) is an flock shared with
// the machine's other programs: the cell waits while another holds it,
// holds it while its command runs, and its processes do not inherit it.
func TestFileLockIsSharedWithOtherPrograms(t *testing.T) {
	r, log := newRunner(t, 1)
	lock := filepath.Join(t.TempDir(), "heavy.lock")
	release, err := lockFile(context.Background(), lock, func() {})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(context.Background(), []matrix.CellConfig{{Name: "heavy", Layer: "cri", Locks: []string{lock},
			Prepare: "! flock -n -o " + lock + " true",
			// flock -n fails while the runner holds the lock; the
			// background sleep would keep it if it inherited it.
			Command: "! flock -n -o " + lock + " true && (sleep 30 >/dev/null 2>&1 &) && touch $REPORT_DIR/ran"}})
	}()
	ran := filepath.Join(r.cellsDir, "heavy", "ran")
	select {
	case <-done:
		t.Fatalf("the cell ran while another program held its lock\n%s", log)
	case <-time.After(2 * time.Second):
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the cell's command ran while another program held its lock")
	}
	release()
	<-done
	if run := readRun(t, r, "heavy"); run.CommandExit != 0 || run.PrepareFailed {
		t.Fatalf("the cell did not hold the lock while its prepare and command ran (%+v)\n%s", run, log)
	}
	if out, err := exec.Command("flock", "-n", "-o", lock, "true").CombinedOutput(); err != nil {
		t.Errorf("the lock is still held after the cell ended (by a process it started?): %v %s", err, out)
	}
	if !strings.Contains(log.String(), "waiting for the lock") {
		t.Errorf("the runner did not say it waits for the lock:\n%s", log)
	}
}

// Ctrl-C while a cell waits for a file lock: the wait ends at once, and
// the lock, once it comes, is given back rather than held for good.
func TestLockWaitEndsOnInterrupt(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "heavy.lock")
	release, err := lockFile(context.Background(), lock, func() {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := lockFile(ctx, lock, cancel)
		waited <- err
	}()
	select {
	case err := <-waited:
		if err == nil {
			t.Fatal("took a lock another holds")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait for the lock did not end on Ctrl-C")
	}
	release()
	deadline := time.Now().Add(10 * time.Second)
	for exec.Command("flock", "-n", "-o", lock, "true").Run() != nil {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned wait kept the lock")
		}
		<-time.After(50 * time.Millisecond)
	}
}

// Ctrl-C during a cell's prepare step: the cell did not run (it is not a
// failed prepare), and its command never starts.
func TestInterruptDuringPrepareIsNotRun(t *testing.T) {
	r, log := newRunner(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	marks := t.TempDir()
	go func() {
		deadline := time.After(10 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(marks, "preparing")); err == nil {
				break
			}
			select {
			case <-deadline:
			case <-time.After(50 * time.Millisecond):
				continue
			}
			break
		}
		cancel()
	}()
	r.run(ctx, []matrix.CellConfig{{Name: "p", Layer: "cri", Prepare: "touch " + marks + "/preparing; sleep 60", Command: "touch $REPORT_DIR/ran"}})
	run := readRun(t, r, "p")
	if run.PrepareFailed || !strings.Contains(run.NotRun, "interrupted") {
		t.Errorf("a prepare ended by Ctrl-C reads as %+v\n%s", run, log)
	}
	if _, err := os.Stat(filepath.Join(r.cellsDir, "p", "ran")); err == nil {
		t.Error("the command ran after Ctrl-C")
	}
}
