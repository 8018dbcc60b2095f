//go:build unix

package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// writableDir says whether this process may make entries in dir.
func writableDir(dir string) error {
	return syscall.Access(dir, 2|1) // W_OK|X_OK; EROFS for root on a read-only mount
}

// freeBytes is what an unprivileged write may still use on path's file
// system.
func freeBytes(path string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

// lockReportDir makes dir and takes the exclusive lock of its
// ReportDirLock without waiting; the release removes the file, then
// unlocks it.
func lockReportDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("-report-dir %s: %v", dir, cause(err))
	}
	path := filepath.Join(dir, ReportDirLock)
	for {
		fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o644)
		if err != nil {
			return nil, fmt.Errorf("-report-dir %s: its lock %s: %v", dir, ReportDirLock, err)
		}
		f := os.NewFile(uintptr(fd), path)
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || int(st.Uid) != os.Geteuid() || st.Nlink != 1 {
			f.Close()
			return nil, fmt.Errorf("-report-dir %s: its lock %s is not a regular file of this user's (uid %d), refused", dir, ReportDirLock, os.Geteuid())
		}
		if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			defer f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				held := heldError{dir: dir, pid: readHolder(f)}
				if fi, err := f.Stat(); err == nil {
					held.since = fi.ModTime()
				}
				return nil, held
			}
			return nil, fmt.Errorf("-report-dir %s: its lock %s: %v", dir, ReportDirLock, err)
		}
		// A run that ended between the open and the lock removed the
		// file: lock the one there is now.
		var now syscall.Stat_t
		if err := syscall.Stat(path, &now); err != nil || now.Ino != st.Ino || now.Dev != st.Dev {
			f.Close()
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() { os.Remove(path); f.Close() }, nil
	}
}
