package cri

import (
	"bytes"
	"context"
	crilogs "k8s.io/cri-client/pkg/logs"
)

// LogStreams reads the container's CRI log file (the runtime writes it on
// this host) the way the kubelet does (cri-client's reader), split into
// what the container wrote to stdout and to stderr.
func LogStreams(ctx context.Context, path string) (stdout, stderr string, err error) {
	var out, errw bytes.Buffer
	if err := crilogs.ReadLogs(ctx, path, "", &crilogs.LogOptions{}, nil, &out, &errw); err != nil {
		return out.String(), errw.String(), err
	}
	return out.String(), errw.String(), nil
}
