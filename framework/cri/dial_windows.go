//go:build windows

package cri

import (
	"context"
	"fmt"
	"net"

	"github.com/Microsoft/go-winio"
	criutil "k8s.io/cri-client/pkg/util"
)

// contextDialer is the kubelet's own dialer for a named pipe (cri-client);
// Windows has AF_UNIX sockets too, which some runtimes listen on and
// cri-client does not dial on Windows.
func contextDialer(ep Endpoint) (func(context.Context, string) (net.Conn, error), error) {
	switch ep.Scheme {
	case "npipe":
		addr, dial, err := criutil.GetAddressAndDialer(ep.Raw)
		if err != nil {
			return nil, fmt.Errorf("CRI endpoint %s: %w", ep.Raw, err)
		}
		return func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, addr) }, nil
	case "unix":
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
