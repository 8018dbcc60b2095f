package selftest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildOut  []byte
)

// suiteBinary compiles the CRI suite once per test run, as a vendor would
// ship it (go test -c).
func suiteBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ectest-selftest-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "cri.test")
		buildOut, buildErr = exec.Command("go", "test", "-c", "-o", binary, "github.com/ectest/ectest/suites/cri").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build the CRI suite: %v\n%s", buildErr, buildOut)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}
