package nodebuild

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/kind/nodeimage"
)

// missingLibraries lists the shared libraries (and the loader) a binary in
// the root filesystem needs but the root filesystem lacks. runc is built
// with cgo: it needs glibc and libseccomp there, at the host's versions
// (the node's Debian release is the host's).
func missingLibraries(root, binary string) ([]string, error) {
	f, err := elf.Open(filepath.Join(root, binary))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	var missing []string
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return nil, err
		}
		interp := strings.TrimRight(string(b), "\x00")
		if _, err := os.Lstat(filepath.Join(root, interp)); err != nil {
			missing = append(missing, interp)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "usr/lib/*-linux-gnu*"))
	dirs = append(dirs, filepath.Join(root, "usr/lib"), filepath.Join(root, "lib"), filepath.Join(root, "usr/lib64"))
	for _, lib := range libs {
		found := false
		for _, d := range dirs {
			if _, err := os.Lstat(filepath.Join(d, lib)); err == nil {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, lib)
		}
	}
	return missing, nil
}

// installPrograms copies the runtime's built programs into the root
// filesystem and checks each finds its libraries there.
func installPrograms(root string, rt nodeimage.NodeRuntime, built map[string]string) error {
	var errs []error
	for _, p := range rt.Programs {
		data, err := os.ReadFile(built[p.Binary])
		if err != nil {
			return err
		}
		dst := filepath.Join(root, nodeimage.NodePath(p.Binary))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		_ = os.Remove(dst)
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
		missing, err := missingLibraries(root, nodeimage.NodePath(p.Binary))
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s (built with cgo=%v) needs %s, which the node's root filesystem lacks: add the Debian package to NodePackages", p.Binary, p.CGO, strings.Join(missing, ", ")))
		}
	}
	return errors.Join(errs...)
}
