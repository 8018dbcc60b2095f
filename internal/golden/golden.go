// Package golden compares generated text with a file pinned under a test's
// testdata folder; -update (go test ... -args -update) writes the files
// from the code, when a change of the generated text is meant.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the code (only when a change of the generated files is meant)")

// Check compares got with testdata/name (or writes it with -update). A
// missing file skips: something added after the goldens were taken is
// pinned only when wanted. onChange says what a change means and what to do.
func Check(t *testing.T, name, got, onChange string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("no %s: not pinned (go test -run %s -args -update writes it)", path, t.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s changed; %s:\n--- want\n%s\n--- got\n%s", path, onChange, want, got)
	}
}
