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
// vendor would ship it (go test -c).
func suiteBinary(t *testing.T, suite string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[suite]; ok {
		return bin
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

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}
