//go:build !linux

package host

import (
	"context"
	"errors"
)

const oNoFollow = 0

var errLinuxOnly = errors.New("host preparation for kind is Linux-only")

func startDockerd(context.Context, func(string, ...any)) error { return errLinuxOnly }
func stopDockerd(context.Context, func(string, ...any)) error  { return errLinuxOnly }
func reloadDockerd(context.Context) error                      { return errLinuxOnly }
func dockerdPid() int                                          { return 0 }
func dockerdConfigFile(int) string                             { return DaemonJSON }
