//go:build !linux

package embedded

import (
	"context"
	"errors"
)

// Runtime is a running private containerd (Linux only).
type Runtime struct{}

var errUnsupported = errors.New("embedded runtime: only available on Linux; give -runtime-endpoint (for example npipe:////./pipe/containerd-containerd)")

// Start fails: there is no embedded runtime on this OS.
func Start(context.Context, Options) (*Runtime, error) { return nil, errUnsupported }

// Endpoint is never reached.
func (*Runtime) Endpoint() string { return "" }

// Dir is never reached.
func (*Runtime) Dir() string { return "" }

// Stop does nothing.
func (*Runtime) Stop() error { return nil }

// Sweep does nothing.
func Sweep(string) error { return nil }
