package hostdeps

import (
	"os"
	"syscall"
)

// lockPath serializes installs between ectest processes: apt's own lock
// covers apt, not the policy-rc.d put in place around it.
var lockPath = "/run/lock/ectest-hostdeps.lock"

// lockHost takes the lock, waiting for another ectest's install to end.
func lockHost() (unlock func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
