package selftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built holds the suite binaries compiled by this test run, by suite.
var (
	buildMu  sync.Mutex
	builtDir string
	built    = map[string]string{}
)

// suiteBinary compiles a suite ("cri" or "cluster") once per test run, as a
// vendor would ship it (go test -c), or finds it in
// $ECTEST_SELFTEST_SUITE_DIR (SUITE.test), where the hack script that runs
// the test compiled it already: a link of a suite takes about 5 CPU-seconds.
func suiteBinary(t *testing.T, suite string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[suite]; ok {
		return bin
	}
	if dir := os.Getenv("ECTEST_SELFTEST_SUITE_DIR"); dir != "" {
		if bin := filepath.Join(dir, suite+".test"); fileExists(bin) {
			built[suite] = bin
			return bin
		}
	}
	if builtDir == "" {
		dir, err := os.MkdirTemp("", "ectest-selftest-")
		if err != nil {
			t.Fatal(err)
		}
		builtDir = dir
	}
	bin := filepath.Join(builtDir, suite+".test")
	if out, err := exec.Command("go", "test", "-c", "-o", bin, "github.com/ectest/ectest/suites/"+suite).CombinedOutput(); err != nil {
		t.Fatalf("build the %s suite: %v\n%s", suite, err, out)
	}
	built[suite] = bin
	return bin
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}
