//go:build !unix

// Package flock holds an exclusive flock(2) on a file between processes.
package flock

import (
	"os"
	"path/filepath"
)

// Lock does nothing where there is no flock(2): what it serializes (host
// packages, kind clusters) happens on Linux hosts only.
func Lock(string) (unlock func(), err error) { return func() {}, nil }

// PrivateDir makes dir (and missing parents).
func PrivateDir(dir string) error { return os.MkdirAll(dir, 0o700) }

// Dir is the user cache directory's ectest/locks.
func Dir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "ectest", "locks")
	return dir, PrivateDir(dir)
}
