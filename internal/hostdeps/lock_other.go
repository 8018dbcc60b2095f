//go:build !linux

package hostdeps

// lockHost: installs happen on Debian hosts (Linux) only.
func lockHost() (unlock func(), err error) { return func() {}, nil }
