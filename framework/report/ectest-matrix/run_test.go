//go:build !windows

package main

import (
	"bytes"
	"context"
	"os"
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
