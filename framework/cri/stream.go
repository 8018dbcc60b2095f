package cri

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// StreamResult is what a streaming session produced.
type StreamResult struct {
	Stdout, Stderr string
}

// Input is what a streaming session types. Stdin stays open until the
// output contains Until (or the session ends): closing a TTY's stdin hangs
// the terminal up, and a shell would die before answering.
type Input struct {
	Text  string
	Until string
	// Then is typed once Until was seen, before stdin closes ("exit\n").
	Then string
}

// watchedBuffer is a buffer that closes seen once it contains a substring.
type watchedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	until string
	seen  chan struct{}
	once  sync.Once
}

func (w *watchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.until == "" || strings.Contains(w.buf.String(), w.until) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// stream runs one SPDY session against a URL from the runtime's streaming
// server, the way the kubelet proxies it.
func stream(ctx context.Context, rawURL string, in *Input, tty bool) (StreamResult, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return StreamResult{}, fmt.Errorf("streaming URL %q: %v", rawURL, err)
	}
	exec, err := remotecommand.NewSPDYExecutor(&rest.Config{}, "POST", u)
	if err != nil {
		return StreamResult{}, err
	}
	stdout := &watchedBuffer{seen: make(chan struct{})}
	var stderr bytes.Buffer
	opts := remotecommand.StreamOptions{Stdout: stdout, Tty: tty}
	if !tty {
		opts.Stderr = &stderr
	}
	if in != nil {
		stdout.until = in.Until
		r, w := io.Pipe()
		opts.Stdin = r
		go func() {
			_, _ = io.WriteString(w, in.Text)
			select {
			case <-stdout.seen:
				if in.Then != "" {
					_, _ = io.WriteString(w, in.Then)
				}
			case <-ctx.Done():
			}
			_ = w.Close()
		}()
		defer r.Close()
	}
	err = exec.StreamWithContext(ctx, opts)
	return StreamResult{Stdout: stdout.String(), Stderr: stderr.String()}, err
}

// StreamExec runs cmd in the container through the CRI Exec streaming API.
func (f *Framework) StreamExec(ctx context.Context, c *Container, in *Input, tty bool, cmd ...string) (StreamResult, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	resp, err := f.Runtime.Runtime.Exec(cctx, &runtimeapi.ExecRequest{
		ContainerId: c.ID, Cmd: cmd, Tty: tty, Stdin: in != nil, Stdout: true, Stderr: !tty,
	})
	if err != nil {
		return StreamResult{}, fmt.Errorf("Exec %v in %s: %s", cmd, c.Name, StatusText(err))
	}
	return stream(cctx, resp.Url, in, tty)
}

// Attach attaches to the container's main process through the CRI Attach
// streaming API and returns what it printed until the stream ended.
func (f *Framework) Attach(ctx context.Context, c *Container, in *Input, tty bool) (StreamResult, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	resp, err := f.Runtime.Runtime.Attach(cctx, &runtimeapi.AttachRequest{
		ContainerId: c.ID, Stdin: in != nil, Tty: tty, Stdout: true, Stderr: !tty,
	})
	if err != nil {
		return StreamResult{}, fmt.Errorf("Attach to %s: %s", c.Name, StatusText(err))
	}
	return stream(cctx, resp.Url, in, tty)
}
