//go:build !linux

package host

import (
	"context"
	"errors"
)

func startDockerd(context.Context, func(string, ...any), bool) error {
	return errors.New("host preparation for kind is Linux-only")
}
