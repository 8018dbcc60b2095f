// Command ectest-report merges the capability matrices of several suites'
// report directories into one, side by side, and prints it; it merges their
// requirement coverage (coverage.json/md) too:
//
//	ectest-report -o _artifacts _artifacts/cri _artifacts/cluster
//
//	ectest-report -outcome _artifacts/probe   # one run's last line and exit code
//
// It merges the runs' summaries too, and ends on one line saying how the
// whole run ended, with its exit code: 0 conformant, 1 nonconformant, 3 the
// run itself could not be done (a suite wrote no reports, say); 2 is bad
// input to this command. With -expect, 0 is "as expected" and 1 "changed".
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/runtimes/embedded"
	"github.com/ectest/ectest/runtimes/expected"
	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	out := flag.String("o", "", "directory for the merged matrix.json/md and coverage.json/md")
	runtimes := flag.Bool("runtimes", false, "make runtimes: arguments are NAME=REPORT_DIR of CRI-suite runs, one per runtime; writes runtimes.json/md")
	listRuntimes := flag.Bool("list-runtimes", false, "print the embedded runtimes' names, one a line")
	expect := flag.String("expect", "", "compare the merged verdicts with expectation files (runtimes/expected's format; builtin for the project's own): exit 0 as expected, 1 changed")
	soak := flag.String("soak", "", "make soak: compare the runs (REPORT_DIR... of one suite, same runtime) under this title; writes soak.json/md into -o; exit 0 when nothing differed, 1 otherwise")
	compare := flag.Bool("compare-critest", false, "make critest-compare: arguments are the CRI suite's report folder and critest's Ginkgo JSON report of runs against the same runtime; prints and writes (critest-compare.json into -o) each one's per-spec times and the ratio of the means")
	outcome := flag.String("outcome", "", "print the last line of the run whose reports are in this directory and exit with its code (a ginkgo -p run exits 0 or 1 itself)")
	showVersion := buildinfo.Flag(flag.CommandLine, "ectest-report")
	flag.Parse()
	showVersion()
	var files []*expected.File
	if *expect != "" {
		var err error
		if files, err = expected.Load(*expect); err != nil {
			fmt.Fprintln(os.Stderr, "ectest: "+err.Error())
			os.Exit(framework.ExitBadInput)
		}
	}
	if *outcome != "" {
		run, err := report.ReadRun(*outcome)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ectest: the run wrote no outcome in %s (%v); its output says why\n", *outcome, err)
			os.Exit(framework.ExitRunFailed)
		}
		fmt.Println(run.Summary.Line)
		os.Exit(run.ExitCode())
	}
	if *listRuntimes {
		for _, f := range embedded.Flavors {
			fmt.Println(f.Name)
		}
		return
	}
	if *runtimes {
		writeRuntimes(*out, flag.Args())
		return
	}
	if *compare {
		writeCompare(*out, flag.Args())
		return
	}
	if *soak != "" {
		writeSoak(*out, *soak, flag.Args())
		return
	}
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -o DIR REPORT_DIR...")
		os.Exit(2)
	}
	var ms []capability.Matrix
	var cs []report.Coverage
	var ss []report.Summary
	for _, dir := range flag.Args() {
		run, err := report.ReadRun(dir)
		if err != nil {
			// The suite ended before writing its reports: its setup failed
			// or it was killed. Its output says why.
			s := report.Summary{RunErrors: []string{fmt.Sprintf("%s: the suite wrote no reports (%v); its output says why", dir, err)}}
			ss = append(ss, s)
			continue
		}
		if run.Matrix == nil {
			fail(fmt.Errorf("%s: the run wrote a summary and no %s", dir, report.MatrixJSONFile))
		}
		if run.Coverage == nil {
			fail(fmt.Errorf("%s: the run wrote a summary and no %s", dir, report.CoverageJSONFile))
		}
		ms, cs, ss = append(ms, *run.Matrix), append(cs, *run.Coverage), append(ss, run.Summary)
	}
	m := report.Merge(ms...)
	if err := report.WriteMatrix(*out, m); err != nil {
		fail(err)
	}
	if err := report.WriteCoverage(*out, report.MergeCoverage(cs...)); err != nil {
		fail(err)
	}
	fmt.Print(report.Table(m))
	sum := report.MergeSummaries(*out, ss...)
	if *expect != "" {
		report.ApplyExpectations(&sum, files)
	}
	if err := report.WriteSummary(*out, sum); err != nil {
		fail(err)
	}
	fmt.Println(sum.Line)
	os.Exit(sum.ExitCode)
}

func writeRuntimes(out string, args []string) {
	if out == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -runtimes -o DIR NAME=REPORT_DIR...")
		os.Exit(framework.ExitBadInput)
	}
	var names, dirs []string
	for _, a := range args {
		n, d, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "ectest: %q: want NAME=REPORT_DIR\n", a)
			os.Exit(framework.ExitBadInput)
		}
		names, dirs = append(names, n), append(dirs, d)
	}
	cols := report.RuntimesTable(names, dirs)
	if err := report.WriteRuntimes(out, cols); err != nil {
		fail(err)
	}
	fmt.Print(report.RuntimesMarkdown(cols, out))
	ran := 0
	for _, c := range cols {
		if c.Ran {
			ran++
		}
	}
	fmt.Printf("ectest: runtimes: %d of %d ran; table in %s/%s\n", ran, len(cols), out, report.RuntimesMDFile)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ectest-report: "+err.Error())
	os.Exit(framework.ExitBadInput)
}

// writeSoak compares a flake campaign's runs (report.Soak) and exits 1 when
// anything differed between them.
func writeSoak(out, title string, dirs []string) {
	if out == "" || len(dirs) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -soak TITLE -o DIR REPORT_DIR REPORT_DIR...")
		os.Exit(framework.ExitBadInput)
	}
	var runs []report.Run
	for _, d := range dirs {
		run, err := report.ReadRun(d)
		if err != nil {
			// A run that wrote nothing still counts: as a run error.
			run = report.Run{Dir: d, Specs: map[string]report.SpecVerdict{}}
			run.Summary.ExitCode, run.Summary.Line = framework.ExitRunFailed, fmt.Sprintf("the suite wrote no reports (%v)", err)
		}
		runs = append(runs, run)
	}
	diffs := report.Soak(runs)
	md := report.SoakMarkdown(title, runs, diffs)
	data, _ := json.MarshalIndent(struct {
		Title string            `json:"title"`
		Runs  []string          `json:"runs"`
		Diffs []report.SoakDiff `json:"differed"`
	}{title, dirs, diffs}, "", "  ")
	if err := os.MkdirAll(out, 0o755); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(out, "soak.json"), append(data, '\n'), 0o644); err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(out, "soak.md"), []byte(md), 0o644); err != nil {
		fail(err)
	}
	fmt.Printf("ectest: soak %s: %d runs, %d things differed between them; %s\n", title, len(runs), len(diffs), filepath.Join(out, "soak.md"))
	// Runs that all failed the same way agree, and prove nothing: a run
	// error in any run makes the campaign an error of its own.
	var broken []string
	for _, r := range runs {
		if r.ExitCode() == framework.ExitRunFailed || r.ExitCode() == framework.ExitBadInput {
			broken = append(broken, filepath.Base(r.Dir))
		}
	}
	switch {
	case len(broken) > 0:
		fmt.Fprintf(os.Stderr, "ectest: soak %s: runs with run errors (no verdict to compare): %s\n", title, strings.Join(broken, ", "))
		os.Exit(framework.ExitRunFailed)
	case len(diffs) > 0:
		os.Exit(1)
	}
}

// writeCompare puts the CRI suite's per-spec times next to critest's, from
// the Ginkgo reports of their runs against the same runtime.
func writeCompare(out string, args []string) {
	if out == "" || len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -compare-critest -o DIR CRI_REPORT_DIR CRITEST_JSON_REPORT")
		os.Exit(framework.ExitBadInput)
	}
	var runs [2][]types.Report
	for i, path := range []string{filepath.Join(args[0], report.JSONFile), args[1]} {
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &runs[i])
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "ectest: %s: %v\n", path, err)
			os.Exit(framework.ExitRunFailed)
		}
	}
	names := [2]string{"ectest CRI suite", "critest"}
	stats, err := report.WriteBenchmark(out, "critest-compare.json", report.CompareSpecTimes(names, runs), nil)
	if err != nil {
		fail(err)
	}
	means := map[string]time.Duration{}
	for _, st := range stats {
		fmt.Printf("%-70s n=%-3d mean %-8s median %-8s p90 %-8s max %s\n", st.Name, st.Samples, st.Mean.Round(time.Millisecond), st.P50.Round(time.Millisecond), st.P90.Round(time.Millisecond), st.Max.Round(time.Millisecond))
		means[st.Name] = st.Mean
	}
	ours, theirs := means[names[0]+": passed spec, start to end, cleanup included"], means[names[1]+": passed spec, start to end, cleanup included"]
	if ours == 0 || theirs == 0 {
		fmt.Fprintln(os.Stderr, "ectest: a run has no spec that passed")
		os.Exit(framework.ExitRunFailed)
	}
	fmt.Printf("ectest: per-spec mean: ectest CRI suite %s, critest %s: %.2fx critest's\n", ours.Round(time.Millisecond), theirs.Round(time.Millisecond), float64(ours)/float64(theirs))
}
