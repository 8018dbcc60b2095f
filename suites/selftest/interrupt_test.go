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
// no sandbox, container, containerd process or runtime state behind.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	runs(t) // needs the host set up for the embedded runtime, as make test does
	bin := suiteBinary(t, "cri")
	// Ctrl-C once a spec has a sandbox running in the embedded runtime.
	out := interruptRun(t, []string{bin, "-ginkgo.focus=PID namespaces", "-ginkgo.v", "-report-dir=" + t.TempDir()}, true, func() bool {
		socks, _ := filepath.Glob("/var/lib/ectest/embedded/*/containerd.sock")
		for _, s := range socks {
			if sandboxes(s) > 0 {
				return true
			}
		}
		return false
	}, "a sandbox of the run", 4*time.Minute, 3*time.Minute)
	checkNoEmbeddedLeft(t)
	if t.Failed() {
		t.Logf("suite output:\n%s", out.String())
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
