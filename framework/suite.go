package framework

import (
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Main is a suite's TestMain: it parses and validates the flags, then runs
// the checks that need the outside world (is the endpoint there, does the
// cluster answer). Bad input ends the process with one "ectest:" line and
// exit code 2 before any spec or environment starts.
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
	os.Exit(m.Run())
}

// RunSuite runs a suite's specs. Benchmarks run only when a label filter
// asks for them (make benchmark).
func RunSuite(t *testing.T, description string) bool {
	gomega.RegisterFailHandler(ginkgo.Fail)
	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	if suiteConfig.LabelFilter == "" {
		suiteConfig.LabelFilter = "!" + LabelBenchmark
	}
	return ginkgo.RunSpecs(t, description, suiteConfig, reporterConfig)
}

// CheckLabelsBeforeSuite fails the run before any spec when a spec carries a
// label outside the registry (a misspelt capability, say). Suites register
// it with ReportBeforeSuite.
func CheckLabelsBeforeSuite(r ginkgo.Report) {
	if err := CheckSpecLabels(r); err != nil {
		ginkgo.Fail(err.Error())
	}
}
