//go:build !linux

package oracle

import "errors"

// Enter is Linux only.
func (Proc) Enter(Process, Kind, func() error) error {
	return errors.New("joining a namespace is Linux only")
}
