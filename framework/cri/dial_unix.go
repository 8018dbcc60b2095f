//go:build !windows

package cri

import (
	"context"
	"fmt"
	"net"
	"os"

	criutil "k8s.io/cri-client/pkg/util"
)

// contextDialer is the kubelet's own dialer for the endpoint (cri-client).
func contextDialer(ep Endpoint) (func(context.Context, string) (net.Conn, error), error) {
	if ep.Scheme != "unix" {
		return nil, fmt.Errorf("CRI endpoint %s: %s:// endpoints exist only on Windows", ep.Raw, ep.Scheme)
	}
	addr, dial, err := criutil.GetAddressAndDialer(ep.Raw)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s: %w", ep.Raw, err)
	}
	return func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, addr) }, nil
}

func checkExists(ep Endpoint) error {
	if ep.Scheme != "unix" {
		return fmt.Errorf("CRI endpoint %s: %s:// endpoints exist only on Windows", ep.Raw, ep.Scheme)
	}
	fi, err := os.Stat(ep.Path)
	if err != nil {
		return fmt.Errorf("CRI endpoint %s: %v", ep.Raw, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("CRI endpoint %s: %s is not a socket", ep.Raw, ep.Path)
	}
	return nil
}
