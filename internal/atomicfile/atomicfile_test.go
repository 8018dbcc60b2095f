package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails when a temporary file was left in dir.
func noTemps(t *testing.T, dir string, want ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(want) {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Fatalf("files in %s: %v, want %v", dir, names, want)
	}
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "new\n" {
		t.Fatalf("got %q", got)
	}
	noTemps(t, dir, "summary.json")
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m&0o600 != 0o600 || m&^0o644 != 0 {
			t.Fatalf("mode %v", fi.Mode())
		}
	}
}

// A write that fails midway (the disk fills, say) leaves the previous file
// whole and no temporary file.
func TestFailedWriteKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.json")
	if err := WriteFile(path, []byte(`{"format":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := Write(path, 0o644, func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"form`); err != nil {
			return err
		}
		return full
	})
	if !errors.Is(err, full) {
		t.Fatalf("err %v, want %v", err, full)
	}
	if got := read(t, path); got != `{"format":1}`+"\n" {
		t.Fatalf("previous file changed: %q", got)
	}
	noTemps(t, dir, "matrix.json")
}

func TestFailedGenerateKeepsPrevious(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit_01.xml")
	if err := WriteFile(path, []byte("<testsuites/>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Generate(path, 0o644, func(tmp string) error {
		if filepath.Dir(tmp) != dir {
			t.Errorf("temporary file %s not beside %s", tmp, path)
		}
		if err := os.WriteFile(tmp, []byte("<testsui"), 0o644); err != nil {
			return err
		}
		return errors.New("killed")
	})
	if err == nil {
		t.Fatal("no error")
	}
	if got := read(t, path); got != "<testsuites/>\n" {
		t.Fatalf("previous file changed: %q", got)
	}
	noTemps(t, dir, "junit_01.xml")
	if err := Generate(path, 0o644, func(tmp string) error { return os.WriteFile(tmp, []byte("new"), 0o644) }); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "new" {
		t.Fatalf("got %q", got)
	}
}

// A directory the suite cannot write into: the write fails and the file
// there is left as it was.
func TestReadOnlyDirKeepsPrevious(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		t.Skip("needs a directory the test cannot write (not as root, not on Windows)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "coverage.json")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	if err := WriteFile(path, []byte("new"), 0o644); err == nil {
		t.Fatal("no error writing into a read-only directory")
	}
	if got := read(t, path); got != "old" {
		t.Fatalf("previous file changed: %q", got)
	}
}
