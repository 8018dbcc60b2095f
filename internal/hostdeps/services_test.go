package hostdeps

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// policyExit runs a policy-rc.d as invoke-rc.d does and returns its exit code.
func policyExit(t *testing.T, path string) int {
	t.Helper()
	err := exec.Command(path, "containerd", "start").Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("running %s: %v", path, err)
	}
	return 0
}

func TestForbidServiceStartsWithoutHostPolicy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy-rc.d")
	restore, err := forbidServiceStarts(path)
	if err != nil {
		t.Fatal(err)
	}
	if code := policyExit(t, path); code != 101 {
		t.Errorf("policy-rc.d during the install exits %d, want 101 (action forbidden)", code)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a host without a policy-rc.d has one after the install: %v", err)
	}
}

func TestForbidServiceStartsRestoresTheHostsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy-rc.d")
	own := "#!/bin/sh\n# the host's\nexit 0\n"
	if err := os.WriteFile(path, []byte(own), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	restore, err := forbidServiceStarts(path)
	if err != nil {
		t.Fatal(err)
	}
	if code := policyExit(t, path); code != 101 {
		t.Errorf("policy-rc.d during the install exits %d, want 101", code)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != own || after.Mode() != before.Mode() || !os.SameFile(before, after) {
		t.Errorf("the host's policy-rc.d came back changed: %q %v (was %v), same file %v", b, after.Mode(), before.Mode(), os.SameFile(before, after))
	}
	if _, err := os.Lstat(path + savedSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the saved copy is left: %v", err)
	}
}

// A process killed mid-install left ectest's policy-rc.d and the host's
// moved aside: the next install puts the host's back first.
func TestForbidServiceStartsRecoversAKilledInstall(t *testing.T) {
	for _, hadOwn := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "policy-rc.d")
		own := "#!/bin/sh\nexit 0\n"
		if hadOwn {
			if err := os.WriteFile(path, []byte(own), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := forbidServiceStarts(path); err != nil { // killed: no restore
			t.Fatal(err)
		}
		restore, err := forbidServiceStarts(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := restore(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		switch {
		case hadOwn && string(b) != own:
			t.Errorf("host's policy-rc.d after a killed install and another: %q, %v", b, err)
		case !hadOwn && !errors.Is(err, os.ErrNotExist):
			t.Errorf("policy-rc.d left on a host that had none: %q, %v", b, err)
		}
	}
}

func TestNewlyEnabled(t *testing.T) {
	root := t.TempDir()
	link := func(rel string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/lib/systemd/system/x", p); err != nil {
			t.Fatal(err)
		}
	}
	link("etc/systemd/system/multi-user.target.wants/ssh.service")
	link("etc/rc2.d/S01ssh")
	link("etc/rc2.d/K01old")
	before := bootLinks(root)
	link("etc/systemd/system/multi-user.target.wants/containerd.service")
	link("etc/systemd/system/multi-user.target.wants/docker.service")
	link("etc/systemd/system/sockets.target.wants/docker.socket")
	link("etc/rc2.d/S01docker")
	link("etc/rc3.d/S01docker")
	link("etc/rc0.d/K01docker")
	units, scripts := newlyEnabled(before, bootLinks(root))
	if want := []string{"containerd.service", "docker.service", "docker.socket"}; !slices.Equal(units, want) {
		t.Errorf("units = %v, want %v", units, want)
	}
	if want := []string{"docker"}; !slices.Equal(scripts, want) {
		t.Errorf("scripts = %v, want %v", scripts, want)
	}
}
