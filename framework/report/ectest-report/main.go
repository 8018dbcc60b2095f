// Command ectest-report merges the capability matrices of several suites'
// report directories into one, side by side, and prints it; it merges their
// requirement coverage (coverage.json/md) too:
//
//	ectest-report -o _artifacts _artifacts/cri _artifacts/cluster
//
// It exits 1 when any capability is nonconformant.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
)

func main() {
	out := flag.String("o", "", "directory for the merged matrix.json/md and coverage.json/md")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -o DIR REPORT_DIR...")
		os.Exit(2)
	}
	var ms []capability.Matrix
	var cs []report.Coverage
	for _, dir := range flag.Args() {
		m, err := report.ReadMatrix(dir)
		if err != nil {
			fail(err)
		}
		c, err := report.ReadCoverage(dir)
		if err != nil {
			fail(err)
		}
		ms, cs = append(ms, m), append(cs, c)
	}
	m := report.Merge(ms...)
	if err := report.WriteMatrix(*out, m); err != nil {
		fail(err)
	}
	if err := report.WriteCoverage(*out, report.MergeCoverage(cs...)); err != nil {
		fail(err)
	}
	fmt.Print(report.Table(m))
	if len(m.Nonconformant()) > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ectest-report: "+err.Error())
	os.Exit(2)
}
