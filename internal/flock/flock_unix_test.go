//go:build unix

package flock

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLockSerializesAndReuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	unlock, err = Lock(path) // the file is left; taking it again works
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file mode %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestLockRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "x.lock")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink was followed: %v", err)
	}
	dangling := filepath.Join(dir, "y.lock")
	if err := os.Symlink(filepath.Join(dir, "nothing"), dangling); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dangling); err == nil {
		t.Error("a dangling symlink was followed")
	}
	if _, err := os.Stat(filepath.Join(dir, "nothing")); err == nil {
		t.Error("a file was created through a dangling symlink")
	}
}

func TestLockRefusesAWorldWritableDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(filepath.Join(dir, "x.lock")); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("a lock in a world-writable directory: %v", err)
	}
}

func TestLockRefusesAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file owned by another user")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.lock")
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); err == nil || !strings.Contains(err.Error(), "owned by") {
		t.Errorf("another user's lock file was taken: %v", err)
	}
	// A directory owned by another user is refused too.
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(other, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(filepath.Join(other, "x.lock")); err == nil {
		t.Error("a lock in another user's directory was taken")
	}
	if err := PrivateDir(other); err == nil {
		t.Error("PrivateDir accepted another user's directory")
	}
}

func TestLockRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.lock")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); err == nil {
		t.Error("a FIFO was taken as a lock")
	}
}

func TestPrivateDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b")
	if err := PrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(link); err == nil {
		t.Error("PrivateDir accepted a symlink")
	}
}
