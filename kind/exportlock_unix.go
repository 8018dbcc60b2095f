//go:build unix

package kind

import (
	"os"
	"syscall"
)

// lockFile holds an exclusive flock(2) on path+".ectest-lock" until unlock:
// runs that reuse one cluster at once (the self-test's parallel Ctrl-C
// cases) export its kubeconfig one at a time, since kind's own lock on the
// file fails at once when another holds it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".ectest-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
