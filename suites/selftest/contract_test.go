//go:build linux

package selftest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
)

// The exit-code contract (README, "Reading results"), entry point by entry
// point: each documented way of running the CRI suite is run with bad
// input, a misspelt label, a nonconformance, an error of the run and
// Ctrl-C, and must end with the documented code and last line. make exits
// 2 for any failed recipe and its last line carries the suite's code
// ("Error N"); the ectest line is the one before it. The table of what was
// seen is written to $ECTEST_SELFTEST_CONTRACT_OUT/contract.md.
//
// hack/contract-selftest.sh sets the environment: ECTEST_SELFTEST_CONTRACT_BIN
// (a folder with cri.test), ECTEST_SELFTEST_CONTRACT_ENDPOINT (a runtime
// started outside the suite by ectest-runtime, for make certify, with its
// registry address in ECTEST_SELFTEST_CONTRACT_REGISTRY) and, for the
// expectation self-test, ECTEST_SELFTEST_CONTRACT_FAULT_ENDPOINT (the same
// runtime through the CRI proxy with a fault that adds a deviation).

type contractEntry struct {
	name string
	// argv builds the command for suite flags, a label filter and a report
	// folder.
	argv func(flags []string, labels, report string) []string
	make bool
	// only restricts the entry to some cases (the full make conformance
	// runs a cluster: its runs are the acceptance's, by hand).
	only []string
	// sub is the folder under the report folder the entry's suite writes to.
	sub string
}

type contractCase struct {
	name   string
	flags  []string
	labels string
	env    []string
	code   int
	line   string // a regular expression the ectest line must match
	signal bool
	// folder prepares the report folder: root is the one given, dir the
	// entry's suite's; it returns what {PID} in line stands for.
	folder func(t *testing.T, root, dir string) string
	// held: the case needs the runtime outside the suite and its registry
	// address, alone (after the other groups).
	held bool
}

func TestExitCodeContract(t *testing.T) {
	binDir := os.Getenv("ECTEST_SELFTEST_CONTRACT_BIN")
	if binDir == "" {
		t.Skip("ECTEST_SELFTEST_CONTRACT_BIN is not set (hack/contract-selftest.sh sets it)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := os.Getenv("ECTEST_SELFTEST_CONTRACT_ENDPOINT")
	registry := os.Getenv("ECTEST_SELFTEST_CONTRACT_REGISTRY")
	bin := filepath.Join(binDir, "cri.test")
	withLabels := func(argv []string, labels string) []string {
		if labels != "" {
			argv = append(argv, "-ginkgo.label-filter="+labels)
		}
		return argv
	}
	makeArgs := func(target string, flags []string, labels, report string, extra ...string) []string {
		return append([]string{"make", "--no-print-directory", "-C", root, target, "ECTEST_FLAGS=" + strings.Join(flags, " "), "LABELS=" + labels, "REPORT_DIR=" + report, "PROCS=4"}, extra...)
	}
	entries := []contractEntry{
		{name: "cri.test (serial)", argv: func(f []string, l, r string) []string {
			return withLabels(append([]string{bin, "-report-dir=" + r}, f...), l)
		}},
		{name: "cri.test -parallel=4", argv: func(f []string, l, r string) []string {
			return withLabels(append([]string{bin, "-parallel=4", "-report-dir=" + r}, f...), l)
		}},
		{name: "make conformance-cri", make: true, sub: "cri", argv: func(f []string, l, r string) []string { return makeArgs("conformance-cri", f, l, r) }},
		{name: "make certify", make: true, sub: "certify", argv: func(f []string, l, r string) []string {
			return makeArgs("certify", append([]string{"-registry-addr=" + registry}, f...), l, r, "RUNTIME_ENDPOINT="+endpoint)
		}},
		{name: "make conformance", make: true, sub: "cri", only: []string{"bad input", "misspelt label", "read-only report folder", "full report folder", "report folder in use"}, argv: func(f []string, l, r string) []string {
			if l != "" {
				f = append(f, "-ginkgo.label-filter="+l)
			}
			return makeArgs("conformance", f, "", r)
		}},
	}
	cases := []contractCase{
		{name: "bad input", flags: []string{"-runtime-endpiont=unix:///x.sock"}, code: 2, line: `^ectest: flag provided but not defined: -runtime-endpiont \(nearest: -runtime-endpoint\)`},
		{name: "misspelt label", labels: "pid-targt", code: 2, line: `^ectest: .*"pid-targt" \(nearest: pid-target`},
		{name: "nonconformance", labels: "target-id-validation", code: 1, line: `^ectest: NONCONFORMANT .*target-id-validation.*\(exit 1\)$`},
		{name: "run error", labels: "image-pull-at-debug-time", env: []string{"ECTEST_SELFTEST_REGISTRY_DOWN=1"}, code: 3, line: `^ectest: RUN FAILED .*\(exit 3\)$`},
		{name: "SIGINT", labels: "pid", signal: true, code: 3, line: `^ectest: RUN FAILED .*(nterrupt|no verdict).*\(exit 3\)$`},
		// The report folder, checked before anything runs (issue 41).
		{name: "read-only report folder", code: 2, line: `^ectest: -report-dir \S+ (is not writable|cannot be made: \S+ is not writable): read-only file system$`,
			folder: func(t *testing.T, root, _ string) string { mountTmpfs(t, root, syscall.MS_RDONLY); return "" }},
		{name: "full report folder", code: 3, line: `^ectest: RUN FAILED: -report-dir \S+: 1\.0 MiB free on its file system, a run needs \d+\.\d MiB for its reports; nothing ran, no verdict \(exit 3\)$`,
			folder: func(t *testing.T, root, _ string) string { mountTmpfs(t, root, 0); return "" }},
		{name: "report folder in use", code: 3, held: true, line: `^ectest: RUN FAILED: -report-dir \S+ is in use by another run \(PID {PID}, since [0-9:]+; lock \S+\): .*\(exit 3\)$`,
			folder: func(t *testing.T, _, dir string) string { return holdFolder(t, bin, endpoint, registry, dir) }},
	}
	// One row per entry point and case, in this order whichever finishes
	// first. The cases of bad input run side by side (they touch no
	// runtime), then the other runs side by side (each has a runtime and a
	// registry of its own, but make certify's, which share the runtime
	// started outside the suite and the registry address it was told, so
	// they take turns in one subtest), then the SIGINT cases one after
	// another (each checks that no runtime state is left at all).
	var (
		rowsMu sync.Mutex
		rows   = map[int]string{}
	)
	groupOf := func(c contractCase) string {
		switch {
		case c.held:
			return "held"
		case c.name == "bad input" || c.name == "misspelt label" || c.folder != nil:
			return "input"
		case c.signal:
			return "interrupts"
		}
		return "runs"
	}
	runCase := func(t *testing.T, row int, e contractEntry, c contractCase) {
		report := t.TempDir()
		if c.folder != nil {
			c.line = strings.ReplaceAll(c.line, "{PID}", c.folder(t, report, filepath.Join(report, e.sub)))
		}
		code, out, took := runContract(t, e.argv(c.flags, c.labels, report), c.env, c.signal)
		lines := nonEmptyLines(out)
		last := ""
		if len(lines) > 0 {
			last = lines[len(lines)-1]
		}
		wantCode, ectestLine := c.code, last
		if e.make && c.code != 0 {
			// make exits 2 for a failed recipe, its line naming the
			// recipe's code; on Ctrl-C it says Interrupt and dies of
			// the signal (a shell's 130; -1 here).
			wantCode = 2
			wantMake := regexp.MustCompile(fmt.Sprintf(`^make(\[\d+\])?: \*\*\* \[Makefile:\d+: [a-z-]+\] Error %d$`, c.code))
			if c.signal {
				wantCode, wantMake = -1, regexp.MustCompile(`^make(\[\d+\])?: \*\*\* \[Makefile:\d+: [a-z-]+\] Interrupt$`)
			}
			if !wantMake.MatchString(last) {
				t.Errorf("last line %q, want /%s/", last, wantMake)
			}
			ectestLine = ""
			if len(lines) > 1 {
				ectestLine = lines[len(lines)-2]
			}
		}
		shown := "`" + truncateLine(last, 160) + "`"
		if ectestLine != last {
			shown = "`" + truncateLine(ectestLine, 110) + "` then `" + truncateLine(last, 60) + "`"
		}
		rowsMu.Lock()
		rows[row] = fmt.Sprintf("| %s | %s | %d | %s (%s) |\n", e.name, c.name, code, shown, took.Round(time.Second))
		rowsMu.Unlock()
		if code != wantCode {
			t.Errorf("exit code %d, want %d", code, wantCode)
		}
		if !regexp.MustCompile(c.line).MatchString(ectestLine) {
			t.Errorf("ectest line %q, want /%s/", ectestLine, c.line)
		}
		if c.name == "bad input" || c.name == "misspelt label" || c.folder != nil {
			if n := strings.Count(out, "\n"); !e.make && n > 1 {
				t.Errorf("bad input printed %d lines, want one:\n%s", n, out)
			}
			if strings.Contains(out, "Ginkgo timed out") || strings.Contains(out, "Ran ") {
				t.Errorf("bad input ran something:\n%s", out)
			}
		}
		if c.signal {
			checkNothingLeft(t, endpoint)
		}
		if t.Failed() {
			t.Logf("output:\n%s", out)
		}
	}
	for _, group := range []struct {
		name     string
		parallel bool
	}{{"input", true}, {"runs", true}, {"interrupts", false}, {"held", false}} {
		t.Run(group.name, func(t *testing.T) {
			row := 0
			for _, e := range entries {
				// make certify's runs share one runtime and registry
				// address: one after another, beside the others.
				inTurn := e.name == "make certify" && group.name == "runs"
				var turns []func(*testing.T)
				for _, c := range cases {
					row++
					if len(e.only) > 0 && !contains(e.only, c.name) || (e.name == "make certify" || c.held) && endpoint == "" || groupOf(c) != group.name {
						continue
					}
					r := row // the parallel ones run once this loop is done
					if inTurn {
						turns = append(turns, func(t *testing.T) { t.Run(c.name, func(t *testing.T) { runCase(t, r, e, c) }) })
						continue
					}
					t.Run(e.name+"/"+c.name, func(t *testing.T) {
						if group.parallel {
							t.Parallel()
						}
						runCase(t, r, e, c)
					})
				}
				if len(turns) > 0 {
					t.Run(e.name, func(t *testing.T) {
						t.Parallel()
						for _, turn := range turns {
							turn(t)
						}
					})
				}
			}
		})
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| entry point | case | exit code | last line (make: the ectest line, then make's) |\n|---|---|---|---|\n")
	for row := 1; row <= len(entries)*len(cases); row++ {
		table.WriteString(rows[row])
	}
	if dir := os.Getenv("ECTEST_SELFTEST_CONTRACT_OUT"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "contract.md"), []byte(table.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("\n%s", table.String())
}

// TestExpectationsTurnOnAChange: make certify with the project's
// expectation file exits 0 "as expected" against the runtime as it is, and
// 1 "CHANGED" through a CRI-proxy fault that adds a deviation (a self-test:
// the fault must not be absorbed by the expectations). Both runs select the
// specs of the capabilities in question (expectationLabels): what a full run
// compares with the expectation files the self-test of the reports checks
// (TestVerdictsMatchExpectations), and the focus keeps this one about the
// contract, at a third of a full run's time.
func TestExpectationsTurnOnAChange(t *testing.T) {
	endpoint, faulty := os.Getenv("ECTEST_SELFTEST_CONTRACT_ENDPOINT"), os.Getenv("ECTEST_SELFTEST_CONTRACT_FAULT_ENDPOINT")
	if endpoint == "" || faulty == "" {
		t.Skip("ECTEST_SELFTEST_CONTRACT_ENDPOINT and _FAULT_ENDPOINT are not set (hack/contract-selftest.sh sets them)")
	}
	root, _ := filepath.Abs("../..")
	registry := os.Getenv("ECTEST_SELFTEST_CONTRACT_REGISTRY")
	for _, c := range []struct {
		endpoint, code, line string
	}{
		{endpoint, "0", `^ectest: (SELF-TEST [^:]*: )?as expected: 2 known deviations \(target-id-validation, unknown-namespace-mode-error\).*\(exit 0\)$`},
		{faulty, "1", `^ectest: (SELF-TEST [^:]*: )?CHANGED from expectations \(1 new nonconformances: logs \(cri layer\)\).*\(exit 1\)$`},
	} {
		report := t.TempDir()
		code, out, _ := runContract(t, []string{"make", "--no-print-directory", "-C", root, "certify", "RUNTIME_ENDPOINT=" + c.endpoint, "EXPECT=builtin", "LABELS=" + expectationLabels, "ECTEST_FLAGS=-registry-addr=" + registry, "REPORT_DIR=" + report}, nil, false)
		lines := nonEmptyLines(out)
		ectestLine := lines[len(lines)-1]
		if c.code != "0" {
			ectestLine = lines[len(lines)-2]
			if !strings.HasSuffix(lines[len(lines)-1], "Error "+c.code) {
				t.Errorf("%s: make's line %q, want Error %s", c.endpoint, lines[len(lines)-1], c.code)
			}
		}
		if fmt.Sprint(code) != c.code && !(c.code != "0" && code == 2) {
			t.Errorf("%s: exit %d, want %s", c.endpoint, code, c.code)
		}
		if !regexp.MustCompile(c.line).MatchString(ectestLine) {
			t.Errorf("%s: line %q, want /%s/\n%s", c.endpoint, ectestLine, c.line, out)
		}
	}
}

// expectationLabels select the specs of the known deviations (the
// project's expectation file for the runtime) and of the capability the
// fault turns nonconformant (logs-empty).
const expectationLabels = "target-id-validation || unknown-namespace-mode-error || logs"

// runContract runs argv in a process group of its own (as a terminal runs
// a command); with signal, Ctrl-C goes to the group once a spec's sandbox
// exists.
func runContract(t *testing.T, argv, env []string, signal bool) (int, string, time.Duration) {
	t.Helper()
	if signal {
		start := time.Now()
		out, code := interruptRunEnv(t, argv, env, true, func() bool {
			socks, _ := filepath.Glob("/var/lib/ectest/*/*/containerd.sock")
			for _, s := range socks {
				if sandboxes(s) > 0 {
					return true
				}
			}
			return false
		}, "a sandbox of the run", 6*time.Minute, 3*time.Minute)
		return code, out.String(), time.Since(start)
	}
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err := cmd.Run()
	code := 0
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%v: %v", argv, err)
		}
		code = exit.ExitCode()
	}
	return code, out.String(), time.Since(start)
}

// mountTmpfs mounts a tmpfs of 1 MiB at dir (flags: syscall.MS_RDONLY for
// a read-only one) for the rest of the test.
func mountTmpfs(t *testing.T, dir string, flags uintptr) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", flags, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// holdFolder starts a run of the CRI suite into dir against the runtime
// outside the suite and pauses it (SIGSTOP) once it holds the folder; at
// the test's end it resumes, and must end as it would have (exit 0). It
// returns the run's PID.
func holdFolder(t *testing.T, bin, endpoint, registry, dir string) string {
	t.Helper()
	out := framework.NewBuffer()
	cmd := exec.Command(bin, "-runtime-endpoint="+endpoint, "-registry-addr="+registry, "-report-dir="+dir, "-ginkgo.label-filter=logs", "-ginkgo.no-color")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	for deadline := time.Now().Add(time.Minute); ; {
		if b, _ := os.ReadFile(filepath.Join(dir, framework.ReportDirLock)); strings.TrimSpace(string(b)) == pid {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the run to hold the folder ended (%v) before it held it:\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the run did not hold the folder within a minute:\n%s", out.String())
		}
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
		if err := <-done; err != nil {
			t.Errorf("the run that held the folder (paused, then resumed): %v, want exit 0:\n%s", err, out.String())
		}
	})
	return pid
}

// checkNothingLeft: after Ctrl-C, no runtime the suite started is left, and
// the runtime started outside the suite has no sandbox of the run.
func checkNothingLeft(t *testing.T, endpoint string) {
	t.Helper()
	checkNoEmbeddedLeft(t)
	if endpoint != "" {
		if n := sandboxes(strings.TrimPrefix(endpoint, "unix://")); n > 0 {
			t.Errorf("%d sandboxes left in the runtime started outside the suite", n)
		}
	}
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

func truncateLine(s string, n int) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
