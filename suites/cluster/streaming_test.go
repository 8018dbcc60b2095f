package cluster_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	. "github.com/onsi/ginkgo/v2"
)

const (
	streamExecText   = "exec into an ephemeral container by name runs there, where its own process is [API-10] [CRI-8]"
	streamAttachText = "attach with stdin and a TTY to an ephemeral container's shell [API-10] [CRI-8]"
)

var _ = Describe("Streaming into ephemeral containers through the API server", framework.Label(framework.LabelCluster, framework.LabelStreaming), func() {
	It(streamExecText, func(ctx SpecContext) { streamExec(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(streamAttachText, func(ctx SpecContext) { streamAttach(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// streamExec: exec into the ephemeral container through the API server.
func streamExec(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.Exec)
	pod := f.RunPod(ctx, targetPod(f))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", "target"))
	// Where the session runs, read on the node: it must be where the
	// ephemeral container's own process is.
	placement, unavailable, perr := f.ObserveExec(ctx, pod, "debugger", f.DebugMarker("debugger"))
	// Exec is what this spec observes: its failure is the capability's.
	b := capability.Observe(capability.Exec)
	in := "hello-" + f.Token
	out, stderr, err := f.Exec(ctx, pod.Name, "debugger", strings.NewReader(in), false, "cat")
	b.Evidence("exec cat, stdin %q: stdout %q, stderr %q, err %v", in, out, stderr, err)
	if err != nil {
		b.Problem("exec through the API server failed: %v", err)
	} else {
		b.Check(out == in, "exec cat did not echo its stdin %q back: %q", in, out)
	}
	switch {
	case perr != nil:
		b.Problem("an exec session could not be observed on the node: %v", perr)
	case unavailable != "":
		AddReportEntry("exec placement not judged", unavailable)
		b.Evidence("exec placement not judged: %s", unavailable)
	default:
		b.Evidence("%s", placement.Evidence)
		b.Check(len(placement.Differences) == 0, "the exec session does not run where the container's own process does: %s", strings.Join(placement.Differences, "; "))
	}
	f.Checker.Record(b.Done("exec through the API server works, where the container's own process is"))
}

// streamAttach: attach to the ephemeral container's shell with stdin and a
// TTY through the API server.
func streamAttach(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.Attach)
	pod := f.RunPod(ctx, targetPod(f))
	ec := f.DebugContainer("debugger", "target")
	ec.Command, ec.Stdin, ec.StdinOnce, ec.TTY = []string{"sh"}, true, true, true
	f.RunEphemeral(ctx, pod.Name, ec)
	// Keep stdin open until the shell answered on the attached stream
	// itself (closing a TTY's stdin hangs it up), not in the log: attach
	// is judged apart from logs.
	r, w := io.Pipe()
	out := framework.NewBuffer()
	out.Until("attach-42-" + f.Token)
	go func() {
		defer GinkgoRecover()
		defer func() { _ = w.Close() }()
		// Enter until the shell's prompt shows, then the command
		// (framework.Prompt says why), bounded by Timeouts.Exec.
		pctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
		prompted := framework.Prompt(pctx, w, "\n", f.Timeouts.Keystroke, func() bool { return out.Holds("# ") })
		cancel()
		if !prompted {
			return
		}
		_, _ = io.WriteString(w, "echo attach-$((6*7))-"+f.Token+"\n")
		select {
		case <-out.Seen():
		case <-ctx.Done():
		case <-time.After(f.Timeouts.Exec):
		}
	}()
	// Attach is what this spec observes: its failure is the capability's.
	b := capability.Observe(capability.Attach)
	err := f.AttachTo(ctx, pod.Name, "debugger", r, true, out, nil)
	// A session that ended without reading stdin leaves the typing
	// goroutine's write waiting: it fails now.
	_ = r.Close()
	answered := out.Holds("attach-42-" + f.Token)
	b.Evidence("attach with a TTY: err %v; the shell wrote:\n%s", err, out.String())
	// What the session does once the client closed stdin after the answer
	// is the runtime's own: containerd ends it and leaves the shell
	// running (internal/cri/io/container_io.go Attach), CRI-O keeps it
	// open until the shell's output ends (conmon closes only its copy of
	// the terminal's fd), so the client's timeout ends it. No requirement
	// says which (the CRI layer judges the same way): the answer decides,
	// and a session that had to be cut is evidence, not a deviation.
	switch {
	case err != nil && !answered:
		b.Problem("attach through the API server failed: %v", err)
	case errors.Is(err, context.DeadlineExceeded):
		b.Evidence("the session stayed open after the client closed stdin until the client's timeout ended it (%v)", err)
	case err != nil:
		b.Evidence("the session ended with an error after the shell answered: %v", err)
	}
	b.Check(answered, "the shell's answer (attach-42-%s) is missing", f.Token)
	f.Checker.Record(b.Done("interactive shell answered through the API server"))
}
