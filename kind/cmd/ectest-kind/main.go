// Command ectest-kind prepares hosts, builds offline node images and runs
// the suite's kind clusters. The Makefile's cluster targets call it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ectest/ectest/kind/host"
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
	case "prepare-host":
		var mod string
		if mod, err = moduleDir(); err == nil {
			err = host.Prepare(ctx, host.Options{ModuleDir: mod, Log: logf})
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ectest-kind: "+err.Error())
		os.Exit(1)
	}
}

// moduleDir is this repository's root (where go.mod is).
func moduleDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the ectest repository")
	}
	return filepath.Dir(mod), nil
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ectest-kind prepare-host | binaries [-kubernetes-version vX.Y.Z]")
	os.Exit(2)
}
