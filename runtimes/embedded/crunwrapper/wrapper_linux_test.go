package crunwrapper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary plays the wrapper when started under its name, as every
// ectest binary does (fixtures/programs).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == Name {
		os.Exit(Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// What crun sees through the wrapper: an empty cgroup.controllers, while
// the host's is unchanged. cat stands in for crun.
func TestWrapperHidesTheHybridHierarchyFromCrunOnly(t *testing.T) {
	hybrid, err := Hybrid()
	if err != nil {
		t.Fatal(err)
	}
	if !hybrid || os.Geteuid() != 0 {
		t.Skipf("needs root on a hybrid cgroup host (hybrid %v, euid %d)", hybrid, os.Geteuid())
	}
	before, _ := os.ReadFile(Controllers)
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, Name)
	if err := os.Symlink(self, wrapper); err != nil {
		t.Fatal(err)
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip(err)
	}
	run := func() (string, error) {
		cmd := exec.Command(wrapper, Controllers, "/proc/self/mountinfo")
		cmd.Env = append(os.Environ(), EnvCrun+"="+cat)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Without the empty file next to it, the wrapper refuses, saying why.
	if out, err := run(); err == nil || !strings.Contains(out, EmptyFile) {
		t.Errorf("without %s: %v, %q", EmptyFile, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, EmptyFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.HasPrefix(out, string(before)) {
		t.Errorf("crun would still see the controllers %q:\n%s", before, out)
	}
	if !strings.Contains(out, " "+Controllers+" ") {
		t.Errorf("no bind mount over %s in crun's mount namespace:\n%s", Controllers, out)
	}
	after, _ := os.ReadFile(Controllers)
	if string(after) != string(before) {
		t.Errorf("the host's %s changed: %q, was %q", Controllers, after, before)
	}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), " "+Controllers+" ") {
		t.Errorf("the bind mount leaked into the host's mount namespace")
	}
}
