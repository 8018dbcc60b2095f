package framework

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The spec processes of -parallel start in the suite binary's directory:
// relative paths are handed on absolute, names are left alone.
func TestAbsolutePaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("images.yaml", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory named as a builtin profile: the flag still names the profile.
	if err := os.Mkdir("containerd-runc", 0o755); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var c Config
	RegisterFlags(fs, &c, Choices{}, SuiteCRI)
	args := []string{"-report-dir=out", "-images-file=images.yaml", "-profile=containerd-runc", "-expect=builtin"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	got := absolutePaths(fs, args)
	for _, want := range []string{"-report-dir=" + filepath.Join(dir, "out"), "-images-file=" + filepath.Join(dir, "images.yaml")} {
		if !slices.Contains(got, want) {
			t.Errorf("args %q lack %q", got, want)
		}
	}
	if len(got) != len(args)+2 {
		t.Errorf("args %q: want only the two paths added", got)
	}
}
