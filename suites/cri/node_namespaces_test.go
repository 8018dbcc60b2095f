package cri_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var _ = Describe("Host namespaces", framework.Label(framework.LabelCRI, framework.LabelLinuxOnly), func() {
	// Whether a namespace is the node's is judged by the oracle where the
	// debug container's process is visible in the node's /proc: its
	// namespace link against the node's reference process's (the server
	// of the CRI socket, not the suite's own process, which may be in a
	// container of its own). What the debug container can reach of the
	// node's own objects is evidence beside it: a TCP server the suite
	// opens on the node's loopback, a SysV segment it makes in the node's
	// IPC namespace (both made from a thread that joined the node's
	// namespace). Where the process is not visible (gVisor's Sentry, a
	// kernel of its own that numbers namespaces itself), those objects
	// decide, and the report says the inside view did.
	DescribeTable("a sandbox with NODE mode is in the host's namespace, and so is a debug container in it: it reaches the host's own objects [CRI-5] [WIN-1]",
		func(ctx SpecContext, n capability.Name, kind string, opts cri.SandboxOptions) {
			if windowsBranch(ctx, n) {
				return
			}
			f := newFramework(n)
			out := f.Outside()
			host, ok := out.NodeLink(oracle.Kind(kind))
			if !ok {
				Skip("not judged: the node's namespace cannot be told from here: " + out.NoNode)
			}
			if kind == "ipc" {
				f.RequireDebugHelper()
			}
			sb, err := f.TryRunSandbox(ctx, opts)
			if err != nil {
				f.Checker.Record(cri.RefusalObservation(n, false, err))
				return
			}
			dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
			link, err := f.NamespaceLink(ctx, dbg, kind)
			if err != nil {
				link = "unreadable: " + err.Error()
			}
			kernels := sameKernel(ctx, f, dbg)
			want := f.TargetToken("host")
			var reached bool
			var what, evidence string
			switch kind {
			case "net":
				srv, err := nodeLoopbackServer(out, want)
				Expect(err).NotTo(HaveOccurred(), "opening a server on the node's loopback (the suite's environment)")
				DeferCleanup(srv.Close)
				url := "http://" + srv.Listener.Addr().String() + "/"
				r, err := f.Exec(ctx, dbg, f.Tools.HTTPGet(url)...)
				Expect(err).NotTo(HaveOccurred())
				if r.ExitCode == 127 {
					Skip("the debug image has no wget to reach the host's loopback with:\n" + r.String())
				}
				reached = r.ExitCode == 0 && strings.TrimSpace(r.Stdout) == want
				what, evidence = "a server on the host's loopback ("+url+")", r.String()
			case "ipc":
				key := shmKey(f.Token, 0x3c7f0000)
				inNodeIPC := func(fn func() error) error { return out.Proc.Enter(out.Node.Process, oracle.IPC, fn) }
				Expect(inNodeIPC(func() error { return helper.CreateShm(key, want) })).To(Succeed(), "making a SysV segment in the node's IPC namespace (the suite's environment)")
				DeferCleanup(func() { _ = inNodeIPC(func() error { return helper.RemoveShm(key) }) })
				res, r, err := f.Helper(ctx, dbg, helper.ModeShmFind, key)
				Expect(err).NotTo(HaveOccurred())
				reached = res.OK() && res.Content == want
				what, evidence = fmt.Sprintf("the host's SysV shared memory segment key %d", key), r.String()
			}
			own, err := f.Own(dbg)
			Expect(err).NotTo(HaveOccurred(), "reading the node's /proc")
			b := capability.Observe(n)
			detail := fmt.Sprintf("the suite made %s holding %q; in the debug container:\n%s\nnamespace links: the debug container's %s (its own /proc/self/ns), the node's %s (%s; %s)", what, want, evidence, link, host, out.Node.How, kernels)
			var works string
			if len(own) > 0 {
				// Outside: the debug container's own process decides.
				ownLink := own[0].Namespaces[oracle.Kind(kind)]
				b.Evidence("decided outside, from the node's /proc: the debug container's process %s\n%s", own[0], detail)
				works = "node namespace: its process is in the node's namespace and reaches " + what
				switch {
				case ownLink == host && reached:
				case ownLink == host:
					b.Problem("its process is in the node's namespace, but it does not reach %s", what)
				default:
					b.Problem("its process is in %s, not the node's %s (reaches %s: %v)", ownLink, host, what, reached)
				}
			} else {
				b.Evidence("%s\n%s", cri.InsideNote, detail)
				works = "node namespace: reaches " + what
				b.Check(reached, "a namespace of its own, not the node's: does not reach %s", what)
			}
			f.Checker.Record(b.Done(works))
		},
		Entry("network NODE", framework.Label(string(capability.NetNode), framework.LabelNetwork), capability.NetNode, "net",
			cri.SandboxOptions{Network: runtimeapi.NamespaceMode_NODE}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("IPC NODE", framework.Label(string(capability.IPCNode), framework.LabelIPC), capability.IPCNode, "ipc",
			cri.SandboxOptions{IPC: runtimeapi.NamespaceMode_NODE}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("a debug container targeting a container in the host's PID namespace lands in the host's namespace [CRI-2] [WIN-2]",
		framework.Label(string(capability.PIDTarget), framework.LabelPID), func(ctx SpecContext) {
			if windowsBranch(ctx, capability.PIDTarget, capability.PIDNode) {
				return
			}
			f := newFramework(capability.PIDTarget, capability.PIDNode)
			f.RequireNode(cri.ViewNode)
			sb := f.RunSandbox(ctx, cri.SandboxOptions{PID: runtimeapi.NamespaceMode_NODE})
			target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target", PID: cri.Mode(runtimeapi.NamespaceMode_NODE)})
			f.RecordPIDView(ctx, capability.PIDTarget, cri.ViewNode, sb,
				cri.DebugOptions{Name: "debug", PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}, target)
		}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// nodeLoopbackServer answers every request with body, on the node's
// loopback (127.0.0.1, a port of its own): its socket is opened from a
// thread that joined the node's network namespace.
func nodeLoopbackServer(out *cri.Outside, body string) (*httptest.Server, error) {
	var l net.Listener
	err := out.Proc.Enter(out.Node.Process, oracle.Net, func() (err error) {
		l, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	})
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	_ = srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return srv, nil
}

// shmKey is a SysV key of the spec's own (from its token) above base.
func shmKey(token string, base int) int {
	key, err := helper.KeyFor(token, base)
	Expect(err).NotTo(HaveOccurred())
	return key
}

// sameKernel says, for the evidence, whether the container runs on the
// host's kernel (the same boot_id): only then are namespace links of the
// two comparable.
func sameKernel(ctx context.Context, f *cri.Framework, c *cri.Container) string {
	const bootID = "/proc/sys/kernel/random/boot_id"
	h, err := os.ReadFile(bootID)
	if err != nil {
		return "the host's boot_id unreadable"
	}
	r, err := f.Exec(ctx, c, "cat", bootID)
	if err != nil || r.ExitCode != 0 {
		return "the container's boot_id unreadable"
	}
	if strings.TrimSpace(r.Stdout) == strings.TrimSpace(string(h)) {
		return "the host's kernel (same boot_id): the links are comparable"
	}
	return "a kernel of its own (boot_id " + strings.TrimSpace(r.Stdout) + "): the links are not comparable"
}
