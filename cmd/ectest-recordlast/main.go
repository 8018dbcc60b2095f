// Command recordlast is make verify's check that no suite asserts after
// recording its observation, nor sets an observation's outcome by hand
// (see package recordlast).
package main

import (
	"fmt"
	"os"

	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/internal/recordlast"
)

func main() {
	buildinfo.Arg("ectest-recordlast")
	findings, err := recordlast.Check(os.Args[1:]...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ectest: recordlast:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
}
