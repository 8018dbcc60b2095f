//go:build linux

package selftest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Ctrl-C in the middle of a run, while a spec's sandbox exists, must leave
// nothing of the runtime behind: no sandbox, container, runtime process,
// state directory, mount, network interface, network namespace file or
// iptables rule. Checked for each CRI implementation: the default embedded
// containerd, CRI-O (conmon, pinns' namespace files, its attach directory)
// and cri-dockerd (a private dockerd and containerd).
func TestInterruptLeavesNothingBehind(t *testing.T) {
	runs(t) // needs the host set up for the embedded runtime, as make test does
	bin := suiteBinary(t, "cri")
	for _, rt := range []struct{ name, socket string }{
		{"", "containerd.sock"},
		{"cri-o", "crio.sock"},
		{"cri-dockerd", "cri-dockerd.sock"},
	} {
		name := rt.name
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			before := takeHostSnapshot(t)
			argv := []string{bin, "-ginkgo.focus=PID namespaces", "-ginkgo.v", "-report-dir=" + t.TempDir()}
			if rt.name != "" {
				argv = append(argv, "-runtime="+rt.name)
			}
			// Ctrl-C once a spec has a sandbox running in the embedded runtime.
			out := interruptRun(t, argv, true, func() bool {
				socks, _ := filepath.Glob("/var/lib/ectest/embedded/*/" + rt.socket)
				for _, s := range socks {
					if sandboxes(s) > 0 {
						return true
					}
				}
				return false
			}, "a sandbox of the run", 4*time.Minute, 3*time.Minute)
			checkNoEmbeddedLeft(t)
			checkHostLeft(t, before)
			if t.Failed() {
				t.Logf("suite output:\n%s", out.String())
			}
		})
	}
}

// checkNoEmbeddedLeft: no embedded runtime's state or process is left.
func checkNoEmbeddedLeft(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir("/var/lib/ectest/embedded")
	for _, e := range entries {
		t.Errorf("embedded runtime state left after Ctrl-C: %s", e.Name())
	}
	if procs := processesMentioning("/var/lib/ectest/embedded"); len(procs) > 0 {
		t.Errorf("processes left after Ctrl-C:\n%v", procs)
	}
}

func sandboxes(socket string) int {
	conn, err := cri.Dial("unix://" + socket)
	if err != nil {
		return 0
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := conn.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0
	}
	return len(resp.Items)
}
