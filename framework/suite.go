package framework

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/onsi/ginkgo/v2"
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
	preview := ginkgo.PreviewSpecs(description)
	if err := errors.Join(CheckSpecLabels(preview), CheckSpecRequirements(preview)); err != nil {
		t.Fatalf("the spec tree is inconsistent:\n%v", err)
	}
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
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
