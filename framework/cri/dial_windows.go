//go:build windows

package cri

import (
	"context"
	"fmt"
	"net"

	"github.com/Microsoft/go-winio"
)

func contextDialer(ep Endpoint) (func(context.Context, string) (net.Conn, error), error) {
	switch ep.Scheme {
	case "npipe":
		return func(ctx context.Context, _ string) (net.Conn, error) { return winio.DialPipeContext(ctx, ep.Path) }, nil
	case "unix": // Windows has AF_UNIX sockets too; some runtimes listen on them.
		return func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", ep.Path)
		}, nil
	}
	return nil, fmt.Errorf("CRI endpoint %s: unsupported scheme %q", ep.Raw, ep.Scheme)
}

func checkExists(ep Endpoint) error {
	if ep.Scheme == "npipe" {
		c, err := winio.DialPipe(ep.Path, nil)
		if err != nil {
			return fmt.Errorf("CRI endpoint %s: %v", ep.Raw, err)
		}
		return c.Close()
	}
	return nil
}
