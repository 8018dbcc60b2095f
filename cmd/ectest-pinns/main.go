// Command ectest-pinns is the project's stand-in for CRI-O's pinns
// (runtimes/pinns): installed as pinns (or named by CRI-O's pinns_path),
// it takes pinns's command line and pins a pod's namespaces the same way.
package main

import (
	"os"

	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/runtimes/pinns"
)

func main() {
	pinns.ChildMain() // the namespaces' holder, when re-executed by Run
	buildinfo.Arg("ectest-pinns")
	os.Exit(pinns.Main(os.Args[1:], os.Stderr))
}
