package framework

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/ginkgo/command"
	"github.com/onsi/ginkgo/v2/ginkgo/run"
	"github.com/onsi/ginkgo/v2/types"
)

// isParallelProcess says whether this process is one of a parallel run's
// (started by the Ginkgo CLI), as opposed to a serial run or the driver.
func isParallelProcess() bool {
	suiteConfig, _ := ginkgo.GinkgoConfiguration()
	return suiteConfig.ParallelTotal > 1
}

// runParallel is -parallel N (critest's flag): this binary drives itself
// through the Ginkgo CLI, which is linked in, so a vendor needs no ginkgo
// binary and gets the serial run's contract: bad input is one line and
// exit 2 before anything starts (a dry run of this binary checks the flags
// and the selection first), the last line is the run's outcome, and the
// exit code is the suite's own (0/1/2/3/4), never the CLI's 0 or 1.
// SIGINT and SIGTERM reach the spec processes (the driver's own children),
// which clean up and report an interrupted run (exit 3).
func runParallel(cfg *Config) int {
	self, cleanup, err := testBinary()
	if err != nil {
		fmt.Fprintf(os.Stderr, "ectest: -parallel: %v\n", err)
		return ExitRunFailed
	}
	defer cleanup()
	args := absolutePaths(flag.CommandLine, os.Args[1:])

	// The flags and the selection, checked as a serial run checks them.
	dry := exec.Command(self, append(append([]string{}, args...), "-parallel=1", "-ginkgo.dry-run", "-ginkgo.no-color")...)
	var stderr bytes.Buffer
	dry.Stdout, dry.Stderr = io.Discard, &stderr
	if err := dry.Run(); err != nil {
		os.Stderr.Write(stderr.Bytes())
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == ExitBadInput {
			return ExitBadInput
		}
		fmt.Fprintf(os.Stderr, "ectest: -parallel: checking the flags and the selection failed: %v\n", err)
		return ExitRunFailed
	}
	_ = os.Remove(filepath.Join(cfg.ReportDir, OutcomeFile))

	suiteConfig, reporterConfig := ginkgo.GinkgoConfiguration()
	if os.Getenv("NO_COLOR") != "" || !isTerminal(os.Stdout) {
		reporterConfig.NoColor = true
	}
	cliArgs, err := types.GenerateFlagArgs(types.SuiteConfigFlags.CopyAppend(types.ReporterConfigFlags...), map[string]any{"S": &suiteConfig, "R": &reporterConfig})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ectest: -parallel: %v\n", err)
		return ExitRunFailed
	}
	cliArgs = append(cliArgs, fmt.Sprintf("--procs=%d", cfg.Parallel), self)

	// The CLI runs in a child of its own process group, with the spec
	// processes it starts: Ctrl-C at a terminal (sent to the foreground
	// group) and a signal sent to this process alone both reach them
	// exactly once, through this process (a second SIGINT would make
	// Ginkgo skip the cleanup).
	cli := exec.Command(self, append(append(cliArgs, "--"), args...)...)
	cli.Env = append(os.Environ(), ginkgoCLIEnv+"=1")
	cli.Stdin, cli.Stdout, cli.Stderr = nil, os.Stdout, os.Stderr
	ownProcessGroup(cli)
	if err := cli.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "ectest: -parallel: %v\n", err)
		return ExitRunFailed
	}
	stop := forwardSignals(cli.Process)
	err = cli.Wait()
	stop()
	code := 0
	if err != nil {
		code = ExitRunFailed
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			code = exit.ExitCode()
		}
	}
	return exitCode(code, cfg.ReportDir)
}

// pathFlags are the flags that name files or directories (-test-images-file
// is -images-file's other name).
var pathFlags = []string{"report-dir", "images-file", "kubeconfig", "expect", "profile", "busybox", "embedded-containerd", "embedded-cni-bin-dir"}

// absolutePaths appends to args an absolute form of every path flag given
// (or defaulted, -report-dir) relatively, and makes a relative $KUBECONFIG
// absolute: the Ginkgo CLI starts the spec processes in the suite binary's
// directory (a temporary one for a binary not named .test), where a
// relative path would name something else. A flag's last value wins.
// Names that are not paths ("builtin", a profile's name, a binary looked
// up on PATH) stay as they are.
func absolutePaths(fs *flag.FlagSet, args []string) []string {
	out := append([]string(nil), args...)
	for _, name := range pathFlags {
		f := fs.Lookup(name)
		if f == nil {
			continue
		}
		v := f.Value.String()
		if v == "" || filepath.IsAbs(v) {
			continue
		}
		if name != "report-dir" {
			if _, err := os.Stat(v); err != nil {
				continue // not a path here: a name, or what the flag's check refuses
			}
			// A name these flags also take ("builtin", a builtin profile,
			// containerd on PATH) stays a name even when a file of that
			// name happens to be here: a path says so with a separator or
			// a YAML extension.
			switch name {
			case "profile", "expect":
				if !strings.ContainsRune(v, os.PathSeparator) && !strings.HasSuffix(v, ".yaml") && !strings.HasSuffix(v, ".yml") {
					continue
				}
			case "embedded-containerd":
				if !strings.ContainsRune(v, os.PathSeparator) {
					continue
				}
			}
		}
		if abs, err := filepath.Abs(v); err == nil {
			out = append(out, "-"+name+"="+abs)
		}
	}
	// $KUBECONFIG as the cluster suite reads it: one file ("rel:" is "rel").
	if kcs := KubeconfigPaths(os.Getenv("KUBECONFIG")); len(kcs) == 1 && !filepath.IsAbs(kcs[0]) {
		if abs, err := filepath.Abs(kcs[0]); err == nil {
			os.Setenv("KUBECONFIG", abs)
		}
	}
	return out
}

// KubeconfigPaths are the files a $KUBECONFIG value lists, empty entries
// dropped (":" lists none), as kubectl reads it.
func KubeconfigPaths(env string) []string {
	var paths []string
	for _, p := range filepath.SplitList(env) {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// ginkgoCLIEnv marks the process that runs the Ginkgo CLI for -parallel.
const ginkgoCLIEnv = "ECTEST_GINKGO_CLI"

// runGinkgoCLIProcess is that process: its arguments are the CLI's, then
// "--" and the spec processes'. It never returns.
func runGinkgoCLIProcess() {
	os.Unsetenv(ginkgoCLIEnv) // the spec processes it starts are specs'
	args := os.Args[1:]
	var passThrough []string
	for i, a := range args {
		if a == "--" {
			args, passThrough = args[:i], args[i+1:]
			break
		}
	}
	os.Exit(runGinkgoCLI(args, passThrough))
}

// runGinkgoCLI runs `ginkgo run` in this process and returns its exit code
// (the CLI ends by panicking with its exit code, which its own main turns
// into os.Exit).
func runGinkgoCLI(args, passThrough []string) (code int) {
	cmd := run.BuildRunCommand()
	defer func() {
		if r := recover(); r != nil {
			details, ok := r.(command.AbortDetails)
			if !ok {
				panic(r)
			}
			if details.Error != nil {
				fmt.Fprintf(os.Stderr, "ectest: -parallel: %v\n", details.Error)
			}
			code = details.ExitCode
		}
	}()
	cmd.Run(args, passThrough)
	return 0
}

// testBinary is this binary under a name the Ginkgo CLI takes for a
// compiled suite (ending in .test or .exe): itself, or a link to it in a
// temporary directory.
func testBinary() (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", func() {}, err
	}
	if ext := filepath.Ext(self); ext == ".test" || ext == ".exe" {
		return self, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "ectest-parallel-")
	if err != nil {
		return "", func() {}, err
	}
	link := filepath.Join(dir, strings.TrimSuffix(filepath.Base(self), filepath.Ext(self))+".test")
	if err := os.Symlink(self, link); err != nil {
		os.RemoveAll(dir)
		return "", func() {}, err
	}
	return link, func() { os.RemoveAll(dir) }, nil
}

// forwardSignals passes SIGINT and SIGTERM on to the CLI's process group
// until stop is called.
func forwardSignals(p *os.Process) (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				signalGroup(p, sig.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
