package embedded

import (
	"os"
	"path/filepath"
	"testing"
)

// The run's directory and its 0700 ancestors become searchable by others
// (a pod's user namespace root), up to the first that already was; nothing
// becomes listable, and the directories above are left alone.
func TestTraversable(t *testing.T) {
	top := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(top, 0o755))
	base := filepath.Join(top, "ectest", "embedded")
	run := filepath.Join(base, "abc")
	must(os.MkdirAll(run, 0o700))
	must(traversable(run))
	for _, d := range []string{run, base, filepath.Dir(base)} {
		fi, err := os.Stat(d)
		must(err)
		if fi.Mode().Perm() != 0o711 {
			t.Errorf("%s: mode %o, want 711", d, fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(top); fi.Mode().Perm() != 0o755 {
		t.Errorf("%s changed: %o", top, fi.Mode().Perm())
	}
}
