package embedded

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A run directory appears with its owner in it, and Sweep leaves a run
// being claimed (hidden) alone: another process starting at the same
// moment must not take it for a dead run's.
func TestClaimWritesTheOwnerBeforeTheDirectoryAppears(t *testing.T) {
	base := t.TempDir()
	l := layout{id: "abcd1234", dir: filepath.Join(base, "abcd1234")}
	if err := claim(base, l); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(l.ownerFile())
	if err != nil || !strings.HasPrefix(string(b), strconv.Itoa(os.Getpid())+" ") {
		t.Fatalf("owner file: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(base, ".abcd1234")); !os.IsNotExist(err) {
		t.Errorf("the hidden claim is left: %v", err)
	}
	being := filepath.Join(base, ".feedbeef")
	if err := os.Mkdir(being, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(base, "deadbeef") // no owner: a run that died before writing one
	if err := os.Mkdir(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Sweep(base); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{l.dir: true, being: true, dead: false} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", path, err == nil, want)
		}
	}
}
