//go:build linux

package selftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A runtime that cannot be set up is an error of the run (exit 3, an
// "ectest: RUN FAILED" line naming the cause), never a verdict, and leaves
// nothing behind: CRI-O without conmon, cri-dockerd with a dockerd that
// will not start. Each run gets a PATH of the host's programs with the one
// program missing or replaced.
func TestBadRuntimeConfigurationIsRunError(t *testing.T) {
	runs(t) // needs the runtimes installed, as make test does
	bin := suiteBinary(t, "cri")
	for _, c := range []struct {
		runtime, program, replacement, want string
	}{
		{"cri-o", "conmon", "", "conmon not found"},
		{"cri-dockerd", "dockerd", "#!/bin/sh\necho 'failed to start daemon: a self-test' >&2\nexit 1\n", "dockerd exited before it was ready"},
	} {
		t.Run(c.runtime+" without a working "+c.program, func(t *testing.T) {
			path := hostPathWithout(t, c.program, c.replacement)
			before := takeHostSnapshot(t)
			cmd := exec.Command(bin, "-runtime="+c.runtime, "-report-dir="+t.TempDir())
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "PATH="+path)
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState == nil {
				t.Fatalf("the suite binary did not start: %v", err)
			}
			code := cmd.ProcessState.ExitCode()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			last := lines[len(lines)-1]
			if code != 3 || !strings.HasPrefix(last, "ectest: RUN FAILED") || !strings.Contains(last, c.want) {
				t.Errorf("want exit 3 and a last line \"ectest: RUN FAILED ... %s ...\"; got exit %d (%v), last line %q\n%s", c.want, code, err, last, out)
			}
			if strings.Contains(string(out), "goroutine ") {
				t.Errorf("a stack trace instead of one line:\n%s", out)
			}
			checkNoEmbeddedLeft(t)
			checkHostLeft(t, before)
		})
	}
}

// hostPathWithout is a directory of links to every program of the host's
// PATH but program, which is missing (replacement empty) or a script.
func hostPathWithout(t *testing.T, program, replacement string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if e.Name() == program {
				continue
			}
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier directory of PATH has it
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	if replacement != "" {
		if err := os.WriteFile(filepath.Join(dir, program), []byte(replacement), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
