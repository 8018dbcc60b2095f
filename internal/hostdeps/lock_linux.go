package hostdeps

import "github.com/ectest/ectest/internal/flock"

// lockPath serializes installs between ectest processes: apt's own lock
// covers apt, not the policy-rc.d put in place around it.
var lockPath = "/run/lock/ectest-hostdeps.lock"

// lockHost takes the lock, waiting for another ectest's install to end.
func lockHost() (unlock func(), err error) { return flock.Lock(lockPath) }
