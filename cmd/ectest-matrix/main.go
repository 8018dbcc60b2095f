// Command ectest-matrix runs the nightly matrix (make matrix): the cells a
// configuration file lists (hack/matrix.yaml: a suite run against one
// runtime, cluster or Kubernetes release each, by a make target), side by
// side where they do not conflict, past failures, each cell's reports in
// its own folder, then one combined page:
//
//	ectest-matrix [-config hack/matrix.yaml] [-o _artifacts/matrix] [-cells a,b] [-parallel N]
//	ectest-matrix -merge-only [-cells-dir DIR] [-previous FILE]   # the page from existing cell folders (CI)
//	ectest-matrix -list [-json]                                   # the cells, for a CI job matrix
//
// It writes matrix.json, matrix.md and matrix.html into -o, keeps the
// previous matrix.json as matrix.previous.json and lists what changed first.
// It ends on one line with the worst cell's exit code (2 bad input, 3 a
// cell's run could not be done, 1 a cell is nonconformant, 0 all
// conformant); 2 is also bad input to this command.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/report/matrix"
	"github.com/ectest/ectest/internal/buildinfo"
)

func main() {
	config := flag.String("config", "hack/matrix.yaml", "the matrix's configuration: its cells")
	out := flag.String("o", defaultOut(), "folder for matrix.json, matrix.md, matrix.html and cells/<cell>/")
	cellsDir := flag.String("cells-dir", "", "the cells' folders (default: <o>/cells)")
	cells := flag.String("cells", "", "comma-separated cells to run (default: all); the others are shown as not run")
	parallel := flag.Int("parallel", defaultParallel(), "cells run at once (cells sharing a lock never do)")
	mergeOnly := flag.Bool("merge-only", false, "run nothing: build the page from the cell folders there are (a CI job's downloads)")
	previous := flag.String("previous", "", "the previous run's combined matrix.json to list changes against (default: <o>/matrix.json before this run)")
	grace := flag.Duration("grace", 5*time.Minute, "how long a cell ended by its timeout or Ctrl-C gets to clean up before it is killed")
	progress := flag.Duration("progress", time.Minute, "how often to say which cells are running")
	noFileLocks := flag.Bool("no-file-locks", false, "do not take the cells' file locks (/run/ectest/heavy.lock): a machine of the matrix's own, where nothing else runs")
	list := flag.Bool("list", false, "print the cells (name, layer, command or why skipped) and exit")
	listJSON := flag.Bool("json", false, "with -list: the names of the cells that run, as a JSON array (a CI job matrix)")
	showVersion := buildinfo.Flag(flag.CommandLine, "ectest-matrix")
	flag.Parse()
	showVersion()
	if flag.NArg() > 0 {
		badInput(fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	cfg, err := matrix.LoadConfig(*config)
	if err != nil {
		badInput(err)
	}
	var names []string
	if *cells != "" {
		names = strings.Split(*cells, ",")
	}
	selected, err := cfg.Select(names)
	if err != nil {
		badInput(err)
	}
	if *list {
		listCells(selected, *listJSON)
		return
	}
	if *parallel < 1 {
		badInput(fmt.Errorf("-parallel %d: want 1 or more", *parallel))
	}
	pageDir, err := filepath.Abs(*out)
	if err != nil {
		badInput(err)
	}
	dir := filepath.Join(pageDir, matrix.CellsDir)
	if *cellsDir != "" {
		if dir, err = filepath.Abs(*cellsDir); err != nil {
			badInput(err)
		}
	}
	shown := cfg.Cells
	if *mergeOnly {
		if len(names) > 0 {
			shown = selected
		}
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		r := &runner{cellsDir: dir, pageDir: pageDir, parallel: *parallel, grace: *grace, progress: *progress, noFileLocks: *noFileLocks, log: os.Stderr}
		r.run(ctx, selected)
		stop()
		shown = notSelected(cfg.Cells, selected, *cells)
	}
	m := matrix.Combine(shown, dir, pageDir, *mergeOnly && len(names) == 0, time.Now())
	if m, err = matrix.Write(pageDir, m, *previous); err != nil {
		fmt.Fprintln(os.Stderr, "ectest-matrix: "+err.Error())
		os.Exit(framework.ExitRunFailed)
	}
	for _, c := range m.Changes {
		if c.Direction == matrix.Worse {
			fmt.Fprintf(os.Stderr, "ectest-matrix: worse since the previous run: %s %s: %s -> %s\n", c.Cell, c.Row, c.From, c.To)
		}
	}
	fmt.Println(m.Line)
	os.Exit(m.ExitCode)
}

// notSelected marks the cells a run did not select as skipped, so that an
// earlier run's folders are not taken for this run's.
func notSelected(all, selected []matrix.CellConfig, flag string) []matrix.CellConfig {
	if len(all) == len(selected) {
		return all
	}
	in := map[string]bool{}
	for _, c := range selected {
		in[c.Name] = true
	}
	out := append([]matrix.CellConfig(nil), all...)
	for i := range out {
		if !in[out[i].Name] && out[i].Skip == "" {
			out[i].Skip = "not selected in this run (CELLS=" + flag + ")"
		}
	}
	return out
}

func listCells(cells []matrix.CellConfig, asJSON bool) {
	if asJSON {
		names := []string{}
		for _, c := range cells {
			// A Linux runner's job matrix: a cell of another host has a
			// job of its own.
			if c.Skip == "" && c.Host == "" {
				names = append(names, c.Name)
			}
		}
		b, _ := json.Marshal(names)
		fmt.Println(string(b))
		return
	}
	for _, c := range cells {
		what := c.Command
		if c.Skip != "" {
			what = "skipped: " + c.Skip
		}
		if c.Host != "" {
			what += "  [host: " + c.Host + " only]"
		}
		if len(c.Locks) > 0 {
			what += "  [locks: " + strings.Join(c.Locks, ", ") + "]"
		}
		fmt.Printf("%-28s %-8s %s\n", c.Name, c.Layer, what)
	}
}

// defaultParallel: each cell's suite runs Ginkgo processes of its own
// (PROCS), so one cell per two CPUs.
func defaultParallel() int { return max(1, runtime.NumCPU()/2) }

func defaultOut() string {
	dir := os.Getenv("REPORT_DIR")
	if dir == "" {
		dir = os.Getenv("ARTIFACTS")
	}
	if dir == "" {
		dir = "_artifacts"
	}
	return filepath.Join(dir, "matrix")
}

func badInput(err error) {
	fmt.Fprintln(os.Stderr, "ectest: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	os.Exit(framework.ExitBadInput)
}
