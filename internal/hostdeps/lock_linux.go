package hostdeps

import (
	"path/filepath"

	"github.com/ectest/ectest/internal/flock"
)

// lockPath, when set, replaces the host lock's path (tests). The lock
// serializes installs between ectest processes: apt's own lock covers apt,
// not the policy-rc.d put in place around it. It lives in a private
// directory (/run/ectest for root), never in the world-writable /run/lock.
var lockPath = ""

// lockHost takes the lock, waiting for another ectest's install to end.
func lockHost() (unlock func(), err error) {
	path := lockPath
	if path == "" {
		dir, err := flock.Dir()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(dir, "hostdeps.lock")
	}
	return flock.Lock(path)
}
