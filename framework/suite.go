package framework

import (
	"errors"
	"flag"
	"fmt"
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
	flag.Parse()
	if err := cfg.Validate(); err != nil {
		Exit(err)
	}
	for _, check := range checks {
		if err := check(cfg); err != nil {
			Exit(err)
		}
	}
	// A parallel process other than the first writes no reports; only a
	// serial run (or process 1) can speak for the run.
	_ = os.Remove(filepath.Join(cfg.ReportDir, OutcomeFile))
	code := m.Run()
	if suiteConfig, _ := ginkgo.GinkgoConfiguration(); suiteConfig.ParallelTotal > 1 {
		os.Exit(code) // the ginkgo CLI reports the run; make conformance reads the reports
	}
	os.Exit(exitCode(code, cfg.ReportDir))
}

// RunSuite runs a suite's specs. Before anything runs, it checks the spec
// tree: every label registered (a misspelt capability, say) and every spec
// naming at least one requirement, and only known ones, so that reports
// and coverage cannot be silently wrong. Benchmarks run only when a label
// filter asks for them (make benchmark).
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
		suiteConfig.LabelFilter = "!" + LabelBenchmark
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
