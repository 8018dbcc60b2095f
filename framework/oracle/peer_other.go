//go:build !linux

package oracle

import "errors"

func peerPID(string) (int, error) {
	return 0, errors.New("peer credentials of a unix socket are read on Linux only")
}
