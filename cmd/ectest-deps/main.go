// Command ectest-deps installs the host packages ectest needs (make deps).
// The list lives in internal/hostdeps; this is its command line.
//
//	ectest-deps [all|PURPOSE ...]   install what is missing
//	ectest-deps -list               print the list, one purpose a line
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/internal/hostdeps"
)

func main() {
	list := flag.Bool("list", false, "print the packages per purpose and exit")
	showVersion := buildinfo.Flag(flag.CommandLine, "ectest-deps")
	flag.Parse()
	showVersion()
	if *list {
		for _, p := range hostdeps.All() {
			fmt.Printf("%s: %s\n", p, strings.Join(hostdeps.Packages[p], " "))
		}
		return
	}
	args := flag.Args()
	if len(args) == 0 {
		args = []string{"all"}
	}
	var purposes []hostdeps.Purpose
	for _, a := range args {
		ps, err := hostdeps.ParsePurpose(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ectest: "+err.Error())
			os.Exit(2)
		}
		purposes = append(purposes, ps...)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ectest: "+format+"\n", args...) }
	if err := hostdeps.Ensure(ctx, logf, purposes...); err != nil {
		fmt.Fprintln(os.Stderr, "ectest: "+err.Error())
		os.Exit(1)
	}
}
