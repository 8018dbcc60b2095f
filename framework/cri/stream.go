package cri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/ectest/ectest/framework"
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
	// UntilStderr, without a TTY, is waited for on stderr as well.
	UntilStderr string
	// Then is typed once Until was seen, before stdin closes ("exit\n").
	Then string
	// Ready, when set, is typed again and again (every Timeouts.Keystroke)
	// before Text, until ReadyAnswer shows on stdout and, without a TTY,
	// on stderr: until the session's output streams are attached. A
	// runtime may pass stdin on before it attaches them (framework.Prompt):
	// seen once, stderr's answer missing, in the mutation stage at 1884439.
	Ready, ReadyAnswer string
	// Drop ends the session once Until (and UntilStderr) were seen by
	// dropping the connection, as a client that goes away does: stdin is
	// never closed, so the session sends no EOF. A dropped session returns
	// no error.
	Drop bool
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
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stdout, stderr := framework.NewBuffer(), framework.NewBuffer()
	opts := remotecommand.StreamOptions{Stdout: stdout, Tty: tty}
	if !tty {
		opts.Stderr = stderr
	}
	dropped := make(chan struct{})
	if in != nil {
		stdout.Until(in.Until)
		if in.UntilStderr == "" || tty {
			stderr.MarkSeen()
		} else {
			stderr.Until(in.UntilStderr)
		}
		r, w := io.Pipe()
		opts.Stdin = r
		go func() {
			if in.Ready != "" && !framework.Prompt(sctx, w, in.Ready, framework.DefaultTimeouts.Keystroke, func() bool {
				return stdout.Holds(in.ReadyAnswer) && (tty || stderr.Holds(in.ReadyAnswer))
			}) {
				return
			}
			_, _ = io.WriteString(w, in.Text)
			select {
			case <-stdout.Seen():
				select {
				case <-stderr.Seen():
				case <-sctx.Done():
				}
			case <-sctx.Done():
			}
			switch {
			case in.Drop && sctx.Err() == nil:
				// Cut the connection; stdin stays open until the
				// session is gone, so no EOF is ever sent.
				close(dropped)
				cancel()
				return
			case in.Drop:
				return
			case in.Then != "" && sctx.Err() == nil:
				_, _ = io.WriteString(w, in.Then)
			}
			_ = w.Close()
		}()
		// After the session, whose connection is closed by then: EOF
		// for the stdin copier, which would report a closed reader.
		defer func() {
			_ = w.Close()
			if !in.Drop {
				_ = r.Close()
			}
		}()
	}
	err = exec.StreamWithContext(sctx, opts)
	select {
	case <-dropped:
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	default:
	}
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
