package framework

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// Main is a suite's TestMain (through environment.Main, which first lets a
// binary started as one of the suite's programs run that program): it
// parses and validates the flags, then runs the checks handed in, those
// against the catalogs and those that need the outside world (is the
// endpoint there, does the cluster answer). Bad input ends the process with
// one "ectest:" line and exit code 2 before any spec or environment starts.
func Main(m *testing.M, cfg *Config, checks ...func(*Config) error) {
	if os.Getenv(ginkgoCLIEnv) != "" {
		runGinkgoCLIProcess() // -parallel's CLI process
	}
	parseFlags(flag.CommandLine, os.Args[1:])
	if cfg.ShowVersion {
		fmt.Println(VersionLine())
		os.Exit(0)
	}
	if err := cfg.Validate(); err != nil {
		Exit(err)
	}
	for _, check := range checks {
		if err := check(cfg); err != nil {
			Exit(err)
		}
	}
	// One run at a time in a report folder (reportdir.go).
	release := holdReportDir(cfg)
	if cfg.Parallel > 1 && !isParallelProcess() {
		code := runParallel(cfg)
		release()
		os.Exit(code)
	}
	progressURL = cfg.ProgressURL
	// A parallel process other than the first writes no reports; only a
	// serial run (or process 1) can speak for the run.
	_ = os.Remove(filepath.Join(cfg.ReportDir, OutcomeFile))
	code := m.Run()
	if suiteConfig, _ := ginkgo.GinkgoConfiguration(); suiteConfig.ParallelTotal > 1 {
		release()
		os.Exit(code) // the ginkgo CLI reports the run; make conformance reads the reports
	}
	code = exitCode(code, cfg.ReportDir)
	release()
	os.Exit(code)
}

// parseFlags parses the command line; a wrong flag is one "ectest:" line
// naming the nearest flag and exit 2 (Go's flag package would print the
// whole usage, Ginkgo's and the testing package's flags included).
func parseFlags(fs *flag.FlagSet, args []string) {
	fs.Init(fs.Name(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(renameParallel(args))
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs)
		os.Exit(0)
	case err != nil:
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			if near := nearestFlag(fs, name); near != "" {
				msg += " (nearest: -" + near + ")"
			}
		}
		Exit(errors.New(msg + "; -help lists the flags"))
	}
}

// printUsage lists the suite's own flags; Ginkgo's and Go's are named only.
func printUsage(fs *flag.FlagSet) {
	out := os.Stdout
	fmt.Fprintf(out, "Usage of %s (exit codes: 0 conformant or as expected, 1 nonconformant or changed, 2 bad input, 3 the run could not be done, 4 a probe was done):\n", filepath.Base(os.Args[0]))
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "ginkgo.") || strings.HasPrefix(f.Name, "test.") || strings.HasSuffix(f.Usage, "refused here)") {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(out, "%s\n    \t%s", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(out, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(out)
	})
	fmt.Fprintln(out, "Ginkgo's -ginkgo.* flags select and report specs (-ginkgo.label-filter, -ginkgo.focus, -ginkgo.v, -ginkgo.dry-run; -ginkgo.help? see https://onsi.github.io/ginkgo/#ginkgo-cli-overview); Go's -test.* flags apply too.")
}

// nearestFlag is the defined flag nearest to a wrong name ("" if none is near).
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", 4
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestD || (d == bestD && f.Name < best) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// progressURL is -progress-url, for RunSuite (set by Main).
var progressURL string

// RunSuite runs a suite's specs. Before anything runs, it checks the spec
// tree: every label registered (a misspelt capability, say) and every spec
// naming at least one requirement, and only known ones, so that reports
// and coverage cannot be silently wrong. Benchmarks and the kubectl debug
// profile matrix run only when a label filter asks for them (make
// benchmark, make kubectl-profiles).
func RunSuite(t *testing.T, description string) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	// A misspelt label selects nothing: bad input, not a verdict.
	if err := CheckLabelFilter(suiteConfig.LabelFilter); err != nil {
		Exit(err)
	}
	preview := ginkgo.PreviewSpecs(description)
	if err := errors.Join(CheckSpecLabels(preview), CheckSpecRequirements(preview)); err != nil {
		t.Fatalf("the spec tree is inconsistent:\n%v", err)
	}
	if kept, all := selected(preview); kept == 0 {
		Exit(fmt.Errorf("the selection (label filter %q, focus %q, skip %q) matches none of the suite's %d specs: a run that judges nothing has no verdict", suiteConfig.LabelFilter, strings.Join(suiteConfig.FocusStrings, " "), strings.Join(suiteConfig.SkipStrings, " "), all))
	}
	if os.Getenv("NO_COLOR") != "" || !isTerminal(os.Stdout) {
		reporterConfig.NoColor = true // a log file or a pipe gets no escape codes
	}
	if suiteConfig.LabelFilter == "" {
		suiteConfig.LabelFilter = DefaultLabelFilter
	}
	// After the preview: PreviewSpecs runs the tree's report nodes too
	// (every spec "passed" at once), which must post nothing.
	if progressURL != "" {
		registerProgress(progressURL)
	}
	return ginkgo.RunSpecs(t, description, suiteConfig, reporterConfig)
}

// SkipOnWindows skips a spec whose commands are written for the Linux debug
// image (busybox) when the runtime or node under test runs Windows.
func SkipOnWindows(os string) {
	if os == "windows" {
		ginkgo.Skip("this spec drives the Linux debug image (busybox); Windows debug commands come with the Windows profile's own specs")
	}
}

// Logf tells the person running the suite what a long step is doing: one
// "ectest:" line on standard error. In a parallel run, process 1's setup
// output reaches the ginkgo CLI as it is written.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ectest: "+format+"\n", args...)
}

// selected counts the specs of a preview that the run's filters keep, and
// all of them.
func selected(preview types.Report) (kept, all int) {
	for _, sr := range preview.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		all++
		if sr.State != types.SpecStateSkipped {
			kept++
		}
	}
	return kept, all
}

// isTerminal tells a terminal (a character device) from a file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
