package selftest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/report"
)

// A run whose loopback registry stopped after setup (hack/selftest.sh runs
// the pull-at-debug-time spec with ECTEST_SELFTEST_REGISTRY_DOWN=1) must
// end as an error of the run: exit 3, the capability's cell "error", and no
// nonconformance. The suite's broken fixture is never the runtime's fault.
func TestRegistryDownIsAnErrorNotANonconformance(t *testing.T) {
	item := os.Getenv("ECTEST_SELFTEST_REGISTRY_DOWN_RUN")
	if item == "" {
		t.Skip("ECTEST_SELFTEST_REGISTRY_DOWN_RUN is not set (make test sets it)")
	}
	dir, code, _ := strings.Cut(item, "=")
	exit, err := strconv.Atoi(code)
	if err != nil {
		t.Fatalf("ECTEST_SELFTEST_REGISTRY_DOWN_RUN=%q: want dir=exitcode", item)
	}
	if exit != framework.ExitRunFailed {
		t.Errorf("suite exit code %d, want %d (the run failed, no verdict)", exit, framework.ExitRunFailed)
	}
	var m capability.Matrix
	readJSON(t, filepath.Join(dir, report.MatrixJSONFile), &m)
	if nc := m.Nonconformant(); len(nc) > 0 {
		t.Errorf("nonconformant with the registry down: %v", nc)
	}
	for _, row := range m.Rows {
		if row.Capability == capability.PullAtDebugTime {
			if c := row.Layers[capability.LayerCRI]; c.Verdict != capability.VerdictError {
				t.Errorf("%s: %s (%v), want error", row.Capability, c.Verdict, c.Reasons)
			}
		}
	}
	sum, err := report.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, e := range sum.RunErrors {
		named = named || strings.Contains(e, "environment error: the loopback registry")
	}
	if sum.ExitCode != framework.ExitRunFailed || len(sum.Nonconformances) > 0 || !named {
		t.Errorf("summary: exit %d, nonconformances %v, run errors %q; want exit 3 with the registry's environment error among the run's errors", sum.ExitCode, sum.Nonconformances, sum.RunErrors)
	}
}
