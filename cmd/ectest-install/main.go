// Command ectest-install builds (or finds cached) the embedded runtimes a run
// will start, with the Go toolchain, so that a suite binary run later
// without Go (hack/selftest.sh does, as a vendor would) finds them:
//
//	ectest-install [NAME ...]   default: the suite's default runtime
//	ectest-install -list        the embedded runtimes (runtimes/catalog), name and description, one a line
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/runtimes/embedded"
)

func main() {
	buildinfo.Arg("ectest-install")
	names := os.Args[1:]
	if len(names) == 1 && (names[0] == "-list" || names[0] == "--list") {
		for _, f := range embedded.Flavors {
			fmt.Printf("%-20s %s\n", f.Name, f.Description)
		}
		return
	}
	if len(names) == 0 {
		names = []string{framework.DefaultRuntime}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cache, err := os.UserCacheDir()
	if err != nil {
		fail(err)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ectest: "+format+"\n", args...) }
	for _, n := range names {
		f, err := embedded.LookupFlavor(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ectest: "+err.Error())
			os.Exit(2)
		}
		dir, err := f.Install(ctx, filepath.Join(cache, "ectest"), logf)
		if err != nil {
			fail(err)
		}
		if dir == "" {
			dir = "Debian's packages, on PATH"
		}
		logf("runtime %s ready (%s)", n, dir)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ectest: "+err.Error())
	os.Exit(3)
}
