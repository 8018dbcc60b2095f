package cluster_test

import (
	"io"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
	observe(f, capability.Exec, "exec through the API server works, where the container's own process is", func() {
		out, stderr, err := f.Exec(ctx, pod.Name, "debugger", strings.NewReader("hello-"+f.Token), false, "cat")
		Expect(err).NotTo(HaveOccurred(), stderr)
		Expect(out).To(Equal("hello-" + f.Token))
		Expect(perr).NotTo(HaveOccurred(), "an exec session could not be observed on the node")
		Expect(placement.Differences).To(BeEmpty(), "the exec session does not run where the container's own process does:\n%s", placement.Evidence)
		if unavailable != "" {
			AddReportEntry("exec placement not judged", unavailable)
		}
	})
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
	out := kube.NewWatch("attach-42-" + f.Token)
	go func() {
		defer GinkgoRecover()
		_, _ = io.WriteString(w, "echo attach-$((6*7))-"+f.Token+"\n")
		select {
		case <-out.Seen():
		case <-ctx.Done():
		case <-time.After(f.Timeouts.Exec):
		}
		_ = w.Close()
	}()
	observe(f, capability.Attach, "interactive shell answered through the API server", func() {
		err := f.AttachTo(ctx, pod.Name, "debugger", r, true, out, nil)
		Expect(err).NotTo(HaveOccurred(), "attach; the shell wrote:\n%s", out.String())
		Expect(out.String()).To(ContainSubstring("attach-42-" + f.Token))
	})
}
