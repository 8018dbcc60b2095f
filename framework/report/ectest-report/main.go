// Command ectest-report merges the capability matrices of several suites'
// report directories into one, side by side, and prints it:
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
	out := flag.String("o", "", "directory for the merged matrix.json and matrix.md")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: ectest-report -o DIR REPORT_DIR...")
		os.Exit(2)
	}
	var ms []capability.Matrix
	for _, dir := range flag.Args() {
		m, err := report.ReadMatrix(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ectest-report: "+err.Error())
			os.Exit(2)
		}
		ms = append(ms, m)
	}
	m := report.Merge(ms...)
	if err := report.WriteMatrix(*out, m); err != nil {
		fmt.Fprintln(os.Stderr, "ectest-report: "+err.Error())
		os.Exit(2)
	}
	fmt.Print(report.Table(m))
	if len(m.Nonconformant()) > 0 {
		os.Exit(1)
	}
}
