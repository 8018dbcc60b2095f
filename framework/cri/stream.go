package cri

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// StreamResult is what a streaming session produced.
type StreamResult struct {
	Stdout, Stderr string
}

// stream runs one SPDY session against a URL from the runtime's streaming
// server, the way the kubelet proxies it.
func stream(ctx context.Context, rawURL string, stdin io.Reader, tty bool) (StreamResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return StreamResult{}, fmt.Errorf("streaming URL %q: %v", rawURL, err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{}, "POST", u)
	if err != nil {
		return StreamResult{}, err
	}
	var stdout, stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Tty: tty}
	if !tty {
		opts.Stderr = &stderr
	}
	err = exec.StreamWithContext(ctx, opts)
	return StreamResult{Stdout: stdout.String(), Stderr: stderr.String()}, err
}

// StreamExec runs cmd in the container through the CRI Exec streaming API.
func (f *Framework) StreamExec(ctx context.Context, c *Container, stdin io.Reader, tty bool, cmd ...string) (StreamResult, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	resp, err := f.Runtime.Runtime.Exec(cctx, &runtimeapi.ExecRequest{
		ContainerId: c.ID, Cmd: cmd, Tty: tty, Stdin: stdin != nil, Stdout: true, Stderr: !tty,
	})
	if err != nil {
		return StreamResult{}, fmt.Errorf("Exec %v in %s: %s", cmd, c.Name, StatusText(err))
	}
	return stream(cctx, resp.Url, stdin, tty)
}

// Attach attaches to the container's main process through the CRI Attach
// streaming API and returns what it printed until the stream ended.
func (f *Framework) Attach(ctx context.Context, c *Container, stdin io.Reader, tty bool) (StreamResult, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	resp, err := f.Runtime.Runtime.Attach(cctx, &runtimeapi.AttachRequest{
		ContainerId: c.ID, Stdin: stdin != nil, Tty: tty, Stdout: true, Stderr: !tty,
	})
	if err != nil {
		return StreamResult{}, fmt.Errorf("Attach to %s: %s", c.Name, StatusText(err))
	}
	return stream(cctx, resp.Url, stdin, tty)
}
