// Command ectest-kind prepares hosts, builds offline node images and runs
// the suite's kind clusters. The Makefile's cluster targets call it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ectest/ectest/kind/nodeimage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	version := fs.String("kubernetes-version", nodeimage.DefaultKubernetesVersion, "Kubernetes version to build")
	_ = fs.Parse(os.Args[2:])
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ectest-kind: "+format+"\n", args...) }
	var err error
	switch os.Args[1] {
	case "binaries":
		var v nodeimage.Version
		if v, err = nodeimage.ParseVersion(*version); err == nil {
			var dir string
			b := &nodeimage.Builder{Log: logf}
			if dir, err = b.KubernetesBinaries(ctx, v); err == nil {
				fmt.Println(dir)
			}
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ectest-kind: "+err.Error())
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ectest-kind binaries [-kubernetes-version vX.Y.Z]")
	os.Exit(2)
}
