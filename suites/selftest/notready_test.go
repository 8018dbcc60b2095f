//go:build linux

package selftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/report"
)

// A runtime whose Status says it is not ready (Debian's containerd as it
// is installed: no CNI network) is an error of the run, never a verdict:
// exit 3, the last line naming the runtime's own NetworkReady reason, no
// nonconformance in any report, and nothing left in the runtime or in
// /run/netns. hack/contract-selftest.sh starts that runtime outside the
// suite (ectest-runtime -no-network) and names it in
// ECTEST_SELFTEST_CONTRACT_NOTREADY_ENDPOINT.
func TestNotReadyRuntimeIsRunError(t *testing.T) {
	endpoint := os.Getenv("ECTEST_SELFTEST_CONTRACT_NOTREADY_ENDPOINT")
	if endpoint == "" {
		t.Skip("ECTEST_SELFTEST_CONTRACT_NOTREADY_ENDPOINT is not set (hack/contract-selftest.sh sets it)")
	}
	bin := filepath.Join(os.Getenv("ECTEST_SELFTEST_CONTRACT_BIN"), "cri.test")
	netns := func() []string {
		entries, _ := os.ReadDir("/run/netns")
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	before := netns()
	dir := t.TempDir()
	cmd := exec.Command(bin, "-runtime-endpoint="+endpoint, "-registry-addr="+os.Getenv("ECTEST_SELFTEST_CONTRACT_NOTREADY_REGISTRY"), "-parallel=4", "-report-dir="+dir)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		t.Fatalf("the suite binary did not start: %v", err)
	}
	lines := nonEmptyLines(string(out))
	last := ""
	if len(lines) > 0 {
		last = lines[len(lines)-1]
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.HasPrefix(last, "ectest: RUN FAILED") || !strings.Contains(last, "NetworkReady=false (NetworkPluginNotReady") {
		t.Errorf("want exit 3 and a last line \"ectest: RUN FAILED ... NetworkReady=false (NetworkPluginNotReady ...\"; got exit %d, last line %q\n%s", code, last, out)
	}
	if strings.Contains(last, " conformant, ") {
		t.Errorf("a failed run's last line names verdicts: %q", last)
	}
	var s report.Summary
	readJSON(t, filepath.Join(dir, "summary.json"), &s)
	if len(s.Nonconformances) > 0 {
		t.Errorf("nonconformances of a runtime that was not ready: %v", s.Nonconformances)
	}
	for _, l := range s.Layers {
		if len(l.Nonconformant) > 0 {
			t.Errorf("nonconformant cells of a runtime that was not ready: %v", l.Nonconformant)
		}
	}
	if n := sandboxes(strings.TrimPrefix(endpoint, "unix://")); n > 0 {
		t.Errorf("%d sandboxes left in the runtime", n)
	}
	for _, n := range netns() {
		if !slices.Contains(before, n) {
			t.Errorf("network namespace left in /run/netns: %s", n)
		}
	}
	t.Logf("last line: %s", last)
}
