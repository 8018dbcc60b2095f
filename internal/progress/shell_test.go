package progress

import (
	"os/exec"
	"runtime"
	"testing"
)

// TestShellProgress runs hack/lib_test.sh, the self-test of the shell side
// of this package (hack/lib.sh's progress: the same lines, every 15 s): its
// done and failed lines, exit code passthrough, and no ticker left behind
// after an end, set -e, SIGINT, SIGTERM or SIGKILL. About 10 s.
func TestShellProgress(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hack/lib.sh is for Linux hosts")
	}
	if testing.Short() {
		t.Skip("-short: hack/lib_test.sh takes about 10 s")
	}
	for _, tool := range []string{"bash", "setsid", "ps"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("hack/lib_test.sh needs %s: %v", tool, err)
		}
	}
	out, err := exec.Command("bash", "../../hack/lib_test.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("hack/lib_test.sh: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
