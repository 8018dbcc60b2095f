//go:build unix

package framework

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestCheckReportDir(t *testing.T) {
	dir := t.TempDir()
	if err := checkReportDir(filepath.Join(dir, "new", "sub"), MinReportDirFree); err != nil {
		t.Errorf("a folder to be made: %v", err)
	}
	if err := checkReportDir(dir, MinReportDirFree); err != nil {
		t.Errorf("a writable folder: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left %v", entries)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkReportDir(filepath.Join(file, "sub"), MinReportDirFree); err == nil || !strings.Contains(err.Error(), "is not a directory") || environmentOnly(err) {
		t.Errorf("a file on the path: %v", err)
	}
	err := checkReportDir(dir, 1<<62)
	if err == nil || !strings.Contains(err.Error(), "free on its file system") || !environmentOnly(err) {
		t.Errorf("no room: %v, want an error of the environment", err)
	}
	if environmentOnly(errors.Join(err, errors.New("-registry-addr x"))) {
		t.Error("bad input beside no room must be bad input (exit 2)")
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{ro, filepath.Join(ro, "sub")} {
			if err := checkReportDir(d, MinReportDirFree); err == nil || !strings.Contains(err.Error(), "not writable") || environmentOnly(err) {
				t.Errorf("%s: %v, want not writable (bad input)", d, err)
			}
		}
	}
}

func TestLockReportDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "reports")
	release, err := lockReportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockReportDir(dir)
	var held heldError
	if !errors.As(err, &held) || held.pid != strconv.Itoa(os.Getpid()) || !strings.Contains(err.Error(), "PID "+strconv.Itoa(os.Getpid())) {
		t.Errorf("a second lock: %v, want held by PID %d", err, os.Getpid())
	}
	release()
	if _, err := os.Stat(filepath.Join(dir, ReportDirLock)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is left after the release: %v", err)
	}
	release, err = lockReportDir(dir)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	release()
	// A link planted in the folder is never followed.
	target := filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(target, filepath.Join(dir, ReportDirLock)); err != nil {
		t.Fatal(err)
	}
	if _, err := lockReportDir(dir); err == nil {
		t.Error("a symbolic link was taken as the lock")
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("a file was made through the link")
	}
}
