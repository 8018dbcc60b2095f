//go:build unix

// Package flock holds an exclusive flock(2) on a file between processes,
// in directories other users cannot write.
package flock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive lock on path (created when missing), waiting for
// whoever holds it; unlock releases it. It refuses a path whose directory
// others can write, a link, and a file owned by another user.
func Lock(path string) (unlock func(), err error) {
	if err := checkDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("lock %s: is a symbolic link, refused", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Geteuid() {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file owned by uid %d (uid %d, mode %o), refused", path, os.Geteuid(), st.Uid, st.Mode)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// checkDir refuses a directory that is a link, or that a user other than
// this one (or root) owns or can write.
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (a link?), refused", dir)
	case !ok:
		return nil
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return fmt.Errorf("directory %s is owned by uid %d, refused", dir, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("directory %s is writable by other users (mode %o): locks go in a private one (flock.Dir)", dir, fi.Mode().Perm())
	}
	return nil
}

// PrivateDir makes dir (and missing parents) 0700 and checks it: a
// directory, not a link, owned by this user, mode 0700 afterwards.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a link?), refused", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("directory %s is owned by uid %d, not %d, refused", dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm() != 0o700 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Dir is this user's private directory for ectest's locks, made if
// missing: /run/ectest for root, else $XDG_RUNTIME_DIR/ectest or the user
// cache directory's ectest/locks.
func Dir() (string, error) {
	dir := "/run/ectest"
	if os.Geteuid() != 0 {
		if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
			dir = filepath.Join(rt, "ectest")
		} else {
			cache, err := os.UserCacheDir()
			if err != nil {
				return "", err
			}
			dir = filepath.Join(cache, "ectest", "locks")
		}
	}
	return dir, PrivateDir(dir)
}
