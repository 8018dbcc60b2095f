// Package atomicfile writes report files so that a reader (a CI job, a
// dashboard, the next run's diff) never sees a partial one: each is written
// to a temporary file in the destination's directory and renamed into place
// only once it is complete. A full disk, an error or a kill midway leaves the
// previous file, or none, never a truncated one.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile writes data to path atomically, with mode perm (before umask).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// Write calls write with a temporary file in path's directory and renames
// that file to path when write and closing it succeed; otherwise it removes
// the temporary file and path is left as it was.
func Write(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	f, err := createTemp(path, perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// Generate is for generators that take a file name and write it themselves
// (Ginkgo's reporters.GenerateJSONReport, ...): gen writes a temporary path
// in path's directory, which is renamed to path when gen succeeds and removed
// otherwise.
func Generate(path string, perm os.FileMode, gen func(tmp string) error) (err error) {
	f, err := createTemp(path, perm)
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err = gen(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// createTemp creates a new file beside path, hidden and named after it,
// with mode perm as the umask lets it (as a plain os.WriteFile would; a
// generator that truncates it keeps that mode).
func createTemp(path string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(uint64(rand.Uint32()), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("writing %s: no free temporary name beside it", path)
}
