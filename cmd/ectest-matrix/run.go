package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ectest/ectest/framework/report/matrix"
)

// runner runs cells, up to parallel at once, never two sharing a lock at
// once; a cell takes its file locks, runs its prepare step (one cell's at a
// time, an identical step once) and then its command.
type runner struct {
	cellsDir, pageDir string
	parallel          int
	// grace is how long a cell ended by its timeout or Ctrl-C gets before
	// its processes are killed.
	grace    time.Duration
	progress time.Duration
	// noFileLocks: the cells' file locks are not taken (their names
	// still keep the runner's own cells apart).
	noFileLocks bool
	log         io.Writer
	// prepareMu lets one prepare step run at a time; prepared holds
	// each step's outcome by its text.
	prepareMu sync.Mutex
	prepared  map[string]prepared
	// phase says what a running cell is doing before its command
	// (waiting for a lock, its prepare step), for the progress lines.
	phase sync.Map
}

func (r *runner) say(format string, args ...any) {
	fmt.Fprintf(r.log, "ectest-matrix: "+format+"\n", args...)
}

// run runs the cells and writes each one's cell.json. It returns when
// every cell started has ended; after ctx is done it starts none.
func (r *runner) run(ctx context.Context, cells []matrix.CellConfig) {
	var todo []matrix.CellConfig
	runs := map[string]*matrix.CellRun{}
	for _, c := range cells {
		if c.Skip != "" {
			r.say("%s: skipped: %s", c.Name, c.Skip)
			continue
		}
		if !c.RunsHere(goruntime.GOOS) {
			r.say("%s: skipped: runs on a %s host only (the nightly workflow's %s job)", c.Name, c.Host, c.Host)
			continue
		}
		dir := r.cellDir(c)
		if err := os.RemoveAll(dir); err != nil {
			r.say("%s: cannot clear its folder: %v", c.Name, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			r.say("%s: cannot make its folder: %v", c.Name, err)
			continue
		}
		runs[c.Name] = &matrix.CellRun{Name: c.Name, Layer: c.Layer, Command: c.Command, Timeout: c.TimeoutOrDefault().String()}
		if why := missingCommand(ctx, c.Command); why != "" {
			runs[c.Name].NotRun = why
			r.say("%s: not run: %s", c.Name, why)
			continue
		}
		todo = append(todo, c)
	}
	r.say("%d cells to run, %d at a time; folders under %s", len(todo), r.parallel, r.rel(r.cellsDir))
	r.schedule(ctx, todo, runs)
	for _, c := range cells {
		if run := runs[c.Name]; run != nil {
			if err := matrix.WriteCellRun(r.cellDir(c), *run); err != nil {
				r.say("%s: %v", c.Name, err)
			}
		}
	}
}

func (r *runner) cellDir(c matrix.CellConfig) string { return filepath.Join(r.cellsDir, c.Name) }

// prepared is a prepare step's outcome.
type prepared struct {
	cell string
	code int
}

// prepare runs the cell's prepare step, one cell's at a time, an identical
// step once, and says whether the command may run.
func (r *runner) prepare(ctx context.Context, c matrix.CellConfig, run *matrix.CellRun) bool {
	if c.Prepare == "" {
		return true
	}
	r.prepareMu.Lock()
	defer r.prepareMu.Unlock()
	if ctx.Err() != nil {
		run.NotRun = "interrupted (Ctrl-C to the matrix) before its prepare step"
		return false
	}
	logPath := filepath.Join(r.cellDir(c), matrix.PrepareLogFile)
	if prev, seen := r.prepared[c.Prepare]; seen {
		_ = os.WriteFile(logPath, []byte(fmt.Sprintf("# the same prepare step as cell %s ran before: see ../%s/%s\n", prev.cell, prev.cell, matrix.PrepareLogFile)), 0o644)
		if prev.code != 0 {
			run.PrepareFailed, run.PrepareExit = true, prev.code
			return false
		}
		return true
	}
	r.say("%s: prepare: %s", c.Name, c.Prepare)
	r.phase.Store(c.Name, "prepare step")
	start := time.Now()
	code, timedOut, interrupted := r.exec(ctx, c, c.Prepare, logPath, c.TimeoutOrDefault())
	run.PrepareSeconds = time.Since(start).Seconds()
	if interrupted {
		run.NotRun = "interrupted (Ctrl-C to the matrix) in its prepare step"
		r.say("%s: %s", c.Name, run.NotRun)
		return false
	}
	if timedOut {
		code = max(code, 1)
	}
	if r.prepared == nil {
		r.prepared = map[string]prepared{}
	}
	r.prepared[c.Prepare] = prepared{c.Name, code}
	if code != 0 {
		run.PrepareFailed, run.PrepareExit = true, code
		r.say("%s: prepare FAILED (exit %d) after %s: %s", c.Name, code, matrix.Duration(run.PrepareSeconds), matrix.LastLine(tailOf(logPath)))
		return false
	}
	r.say("%s: prepare done in %s", c.Name, matrix.Duration(run.PrepareSeconds))
	return true
}

// schedule runs the cells' commands: the first waiting cell (in the
// configuration's order) whose locks are free starts whenever fewer than
// parallel cells run.
func (r *runner) schedule(ctx context.Context, cells []matrix.CellConfig, runs map[string]*matrix.CellRun) {
	type finished struct{ cell matrix.CellConfig }
	waiting := append([]matrix.CellConfig(nil), cells...)
	running := map[string]time.Time{}
	held := map[string]string{} // lock -> cell
	done := make(chan finished)
	total, ended := len(cells), 0
	tick := time.NewTicker(r.progress)
	defer tick.Stop()
	interrupted := ctx.Done()
	for len(waiting) > 0 || len(running) > 0 {
		if ctx.Err() == nil {
			for i := 0; i < len(waiting) && len(running) < r.parallel; {
				c := waiting[i]
				if busy := lockedBy(c, held); busy != "" {
					i++
					continue
				}
				waiting = append(waiting[:i], waiting[i+1:]...)
				for _, l := range c.Locks {
					held[l] = c.Name
				}
				running[c.Name] = time.Now()
				r.say("[%d/%d] %s: started: %s (log %s)", total-len(waiting), total, c.Name, c.Command, r.rel(filepath.Join(r.cellDir(c), matrix.CellLogFile)))
				go func(c matrix.CellConfig) {
					r.runCell(ctx, c, runs[c.Name])
					done <- finished{c}
				}(c)
			}
		} else {
			for _, c := range waiting {
				runs[c.Name].NotRun = "interrupted before it started"
			}
			waiting = nil
			if len(running) == 0 {
				break
			}
		}
		select {
		case f := <-done:
			ended++
			delete(running, f.cell.Name)
			for _, l := range f.cell.Locks {
				delete(held, l)
			}
			_ = matrix.WriteCellRun(r.cellDir(f.cell), *runs[f.cell.Name])
			cell, _ := matrix.ReadCell(f.cell, r.cellDir(f.cell), r.pageDir)
			why := cell.Line
			if cell.Note != "" {
				why = cell.Note
			}
			r.say("[%d/%d done] %s: exit %d (%s) in %s: %s", ended, total, f.cell.Name, cell.ExitCode, cell.Exit, matrix.Duration(runs[f.cell.Name].Seconds), why)
		case <-tick.C:
			r.say("running: %s%s", r.describeRunning(running), waitingNote(waiting, held))
		case <-interrupted:
			// Start no more cells; wait for the running ones (runCell
			// interrupts them).
			interrupted = nil
			r.say("interrupted: waiting for the running cells to clean up (%s at most), starting no more", r.grace)
		}
	}
}

// lockedBy names the cell holding one of c's locks ("" when all are free).
func lockedBy(c matrix.CellConfig, held map[string]string) string {
	for _, l := range c.Locks {
		if h := held[l]; h != "" {
			return h
		}
	}
	return ""
}

func waitingNote(waiting []matrix.CellConfig, held map[string]string) string {
	if len(waiting) == 0 {
		return ""
	}
	var parts []string
	for _, c := range waiting {
		if h := lockedBy(c, held); h != "" {
			parts = append(parts, c.Name+" (lock "+strings.Join(c.Locks, ",")+" held by "+h+")")
		} else {
			parts = append(parts, c.Name)
		}
	}
	return "; waiting: " + strings.Join(parts, ", ")
}

// describeRunning lists the running cells with their time so far and the
// last line each one's programs printed.
func (r *runner) describeRunning(running map[string]time.Time) string {
	names := make([]string, 0, len(running))
	for n := range running {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		p := fmt.Sprintf("%s (%s", n, matrix.Duration(time.Since(running[n]).Seconds()))
		log := matrix.CellLogFile
		if ph, ok := r.phase.Load(n); ok {
			p += ", " + ph.(string)
			log = matrix.PrepareLogFile
		}
		if l := matrix.LastLine(tailOf(filepath.Join(r.cellsDir, n, log))); l != "" {
			p += ", last: " + truncate(l, 120)
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, "; ")
}

// runCell runs one cell: it takes the cell's file locks (held for its
// prepare step and its command together, so that it waits for a shared
// lock once), runs the prepare step, then the command into its log, and
// records how it ended.
func (r *runner) runCell(ctx context.Context, c matrix.CellConfig, run *matrix.CellRun) {
	release, err := r.fileLocks(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			run.NotRun = "interrupted (Ctrl-C to the matrix) while it waited for its lock"
			return
		}
		// The machine's fault, not the cell's: an error of the run.
		run.CommandExit = 3
		_ = os.WriteFile(filepath.Join(r.cellDir(c), matrix.CellLogFile), []byte("ectest-matrix: "+err.Error()+"\n"), 0o644)
		return
	}
	defer release()
	if !r.prepare(ctx, c, run) {
		return
	}
	r.phase.Delete(c.Name)
	run.Started = time.Now().UTC().Truncate(time.Second)
	start := time.Now()
	code, timedOut, interrupted := r.exec(ctx, c, c.Command, filepath.Join(r.cellDir(c), matrix.CellLogFile), c.TimeoutOrDefault())
	run.Seconds = time.Since(start).Seconds()
	run.CommandExit, run.TimedOut, run.Interrupted = code, timedOut, interrupted
}

// exec runs a shell command for a cell, with REPORT_DIR and CELL in its
// environment, its output into logPath. The command runs in a process
// group of its own: at its timeout or when ctx is done, the group gets
// SIGINT (the suites clean up on it), and SIGKILL after the grace period.
func (r *runner) exec(ctx context.Context, c matrix.CellConfig, command, logPath string, timeout time.Duration) (code int, timedOut, interrupted bool) {
	f, err := os.Create(logPath)
	if err != nil {
		r.say("%s: %v", c.Name, err)
		return 3, false, false
	}
	defer f.Close()
	dir := r.cellDir(c)
	fmt.Fprintf(f, "# ectest-matrix cell %s (%s layer): bash -c %q\n# REPORT_DIR=%s CELL=%s, started %s\n", c.Name, c.Layer, command, dir, c.Name, time.Now().UTC().Format(time.RFC3339))
	cmd := exec.Command("bash", "-c", command)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(cellEnviron(), "REPORT_DIR="+dir, "CELL="+c.Name)
	for k, v := range c.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(f, "ectest-matrix: cannot start the command: %v\n", err)
		return 3, false, false
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-waited:
	case <-timer.C:
		timedOut = true
		werr = r.stop(cmd, waited, f, fmt.Sprintf("the cell's timeout (%s)", timeout))
	case <-ctx.Done():
		interrupted = true
		werr = r.stop(cmd, waited, f, "Ctrl-C to the matrix")
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
		return 0, timedOut, interrupted
	case errors.As(werr, &ee):
		return ee.ExitCode(), timedOut, interrupted
	}
	return 3, timedOut, interrupted
}

// cellEnviron is the runner's environment without make's own variables: a
// cell's make is a make of its own, and an outer make's command-line
// variables (make matrix REPORT_DIR=x) passed down in MAKEFLAGS would
// override the cell's REPORT_DIR.
func cellEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// stop interrupts a command's process group and waits for it, killing it
// after the grace period.
func (r *runner) stop(cmd *exec.Cmd, waited <-chan error, log io.Writer, why string) error {
	fmt.Fprintf(log, "\nectest-matrix: interrupting the cell (%s); it has %s to clean up\n", why, r.grace)
	interruptGroup(cmd)
	select {
	case err := <-waited:
		return err
	case <-time.After(r.grace):
		fmt.Fprintf(log, "\nectest-matrix: the cell did not end within %s: killing it\n", r.grace)
		killGroup(cmd)
		return <-waited
	}
}

// tailOf is the end of a log file (what its last lines say).
func tailOf(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const n = 16 << 10
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

func (r *runner) rel(path string) string {
	if p, err := filepath.Rel(".", path); err == nil && !strings.HasPrefix(p, "..") {
		return p
	}
	return path
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// fileLocks takes the cell's locks that are files (an absolute path, like
// /run/ectest/heavy.lock, which other programs on the machine take with
// flock too), in the configuration's order, for one of the cell's steps.
func (r *runner) fileLocks(ctx context.Context, c matrix.CellConfig) (release func(), err error) {
	var held []func()
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	for _, l := range c.Locks {
		if !filepath.IsAbs(l) || r.noFileLocks {
			continue
		}
		rel, err := lockFile(ctx, l, func() {
			r.say("%s: waiting for the lock %s (another program on the machine holds it)", c.Name, l)
			r.phase.Store(c.Name, "waiting for the lock "+l)
		})
		if err != nil {
			release()
			return nil, fmt.Errorf("the lock %s: %w", l, err)
		}
		held = append(held, rel)
	}
	return release, nil
}
