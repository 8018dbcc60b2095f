package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const asPinns = "ECTEST_PINNS_TEST_AS_PINNS"

// The test binary is the command when asPinns is set (its re-executed
// child inherits it).
func TestMain(m *testing.M) {
	if os.Getenv(asPinns) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// run execs the command as CRI-O does (nsmgr_linux.go: CombinedOutput).
func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asPinns+"=1")
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func TestBadInputExitsOneWithOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-d", dir, "-f", "x"},
		{"-d", dir, "-f", "x", "--user"},
		{"-f", "x", "--net"},
		{"-d", dir, "-f", "x", "-n", "--nope"},
	} {
		out, code := run(t, args...)
		if code != 1 || !strings.HasPrefix(out, "[pinns:e]: ") || strings.Count(out, "\n") != 1 {
			t.Errorf("pinns %q: exit %d, output %q; want 1 and one [pinns:e] line", args, code, out)
		}
	}
}

// The invocation CRI-O v1.36.3 builds for a pod with its own namespaces
// (internal/config/nsmgr/nsmgr_linux.go NewPodNamespaces, namespaces in
// server/sandbox_run_linux.go configureGeneratorForSandboxNamespaces'
// order): exit 0, no output, one pinned file per namespace.
func TestCRIOInvocation(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir, err := os.MkdirTemp("", "ectest-pinns-cmd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	const id = "3f0d4e9a-1c2b-4d5e-8f70-123456789abc"
	for _, ns := range []string{"ipc", "net", "uts"} {
		path := dir + "/" + ns + "ns/" + id
		t.Cleanup(func() { _ = exec.Command("umount", "-l", path).Run() })
	}
	out, code := run(t, "-d", dir, "-f", id, "-s", "net.ipv4.ip_unprivileged_port_start=1000", "--ipc", "--net", "--uts")
	if code != 0 || out != "" {
		t.Fatalf("exit %d, output %q; want 0 and none", code, out)
	}
	for _, ns := range []string{"ipc", "net", "uts"} {
		path := dir + "/" + ns + "ns/" + id
		pinned, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		host, err := os.Stat("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		if os.SameFile(pinned, host) || pinned.Size() != 0 {
			t.Errorf("%s: not a new %s namespace", path, ns)
		}
		if !strings.Contains(mountinfo(t), " "+path+" ") {
			t.Errorf("%s is not a mount point", path)
		}
	}
}

func mountinfo(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
