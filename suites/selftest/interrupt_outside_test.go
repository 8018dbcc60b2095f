//go:build linux

package selftest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// SIGINT and SIGTERM at several points of a -parallel=4 run against a
// runtime started outside the suite (a vendor's: the suite removes only
// what it made, and must remove all of it) leave nothing of the run in the
// runtime and nothing on the host: no sandbox or container with the
// suite's labels, no mount, interface, network namespace file or rule.
// hack/contract-selftest.sh starts the runtime (ectest-runtime) and names
// it in ECTEST_SELFTEST_CONTRACT_ENDPOINT, after the contract's own runs.
func TestInterruptOutsideRuntimeLeavesNothing(t *testing.T) {
	endpoint := os.Getenv("ECTEST_SELFTEST_CONTRACT_ENDPOINT")
	if endpoint == "" {
		t.Skip("ECTEST_SELFTEST_CONTRACT_ENDPOINT is not set (hack/contract-selftest.sh sets it)")
	}
	bin := os.Getenv("ECTEST_SELFTEST_CONTRACT_BIN") + "/cri.test"
	for i, c := range []struct {
		name string
		sig  syscall.Signal
		// at: the signal goes once the run has this many sandboxes and
		// containers in the runtime.
		sandboxes, containers int
	}{
		{"SIGINT at the first sandbox", syscall.SIGINT, 1, 0},
		{"SIGTERM at the first sandbox", syscall.SIGTERM, 1, 0},
		{"SIGTERM with containers starting in several specs", syscall.SIGTERM, 3, 3},
		{"SIGINT with containers starting in several specs", syscall.SIGINT, 3, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := takeHostSnapshot(t)
			runID := fmt.Sprintf("intr-%d-%05d", i, time.Now().Unix()%100000)
			argv := []string{bin, "-runtime-endpoint=" + endpoint, "-registry-addr=" + os.Getenv("ECTEST_SELFTEST_CONTRACT_REGISTRY"),
				"-parallel=4", "-ginkgo.label-filter=pid || network || ipc", "-run-id=" + runID, "-report-dir=" + t.TempDir()}
			out, code := signalRun(t, argv, nil, c.sig, func() bool {
				sbs, cs := ofSuite(endpoint)
				return sbs >= c.sandboxes && cs >= c.containers
			}, fmt.Sprintf("%d sandboxes and %d containers of the run", c.sandboxes, c.containers), 4*time.Minute, 3*time.Minute)
			if code != framework.ExitRunFailed {
				t.Errorf("exit %d after %s, want %d", code, c.sig, framework.ExitRunFailed)
			}
			if lines := nonEmptyLines(out.String()); len(lines) > 0 && !strings.HasPrefix(lines[len(lines)-1], "ectest: ") {
				t.Errorf("the last line is not the suite's: %q", lines[len(lines)-1])
			}
			if sbs, cs := ofSuite(endpoint); sbs+cs > 0 {
				t.Errorf("%d sandboxes and %d containers of the suite left in the runtime started outside it", sbs, cs)
			}
			checkHostLeft(t, before)
			// The sandboxes' cgroup parents go with the run (cri.RemoveRunCgroups).
			if left, _ := filepath.Glob("/sys/fs/cgroup/*/ectest/" + runID); len(left) > 0 {
				t.Errorf("cgroups of the run left: %v", left)
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", out.String())
			}
		})
	}
}

// ofSuite counts the sandboxes and containers carrying the suite's label.
func ofSuite(endpoint string) (sandboxes, containers int) {
	conn, err := cri.Dial(endpoint)
	if err != nil {
		return 0, 0
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sel := map[string]string{cri.LabelSuite: "cri"}
	if resp, err := conn.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}}); err == nil {
		sandboxes = len(resp.Items)
	}
	if resp, err := conn.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}}); err == nil {
		containers = len(resp.Containers)
	}
	return sandboxes, containers
}
