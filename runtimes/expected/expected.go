// Package expected holds what the suite must report for the project's own
// embedded runtimes (one YAML file each, built into the binaries) and reads
// expectation files of the same format: a runtime's known deviations, each
// with the upstream code or issue behind it. make test checks the embedded
// runtimes' verdicts against these files (suites/selftest); -expect=FILE
// (or -expect=builtin, these files) makes a run's exit code say whether the
// verdicts are as expected (0) or changed (1).
package expected

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"sigs.k8s.io/yaml"
)

// Builtin names the project's own files in -expect.
const Builtin = "builtin"

//go:embed *.yaml
var builtin embed.FS

// File is one expectation file.
type File struct {
	// RuntimeName and VersionPrefix match the runtime under test (the CRI
	// Version's runtime name, and the start of its version).
	RuntimeName   string `json:"runtimeName"`
	VersionPrefix string `json:"versionPrefix"`
	// Handler is the runtime handler the sandboxes ran with (gVisor's
	// "runsc"; "default" for the runtime's own): "" matches any.
	Handler string `json:"handler,omitempty"`
	// Profile is the runtime profile the run must have used.
	Profile string `json:"profile"`
	// Verdicts are the capabilities whose verdict is not conformant; every
	// capability not listed must be conformant.
	Verdicts map[capability.Name]Entry `json:"verdicts"`
	// Path is where the file was read from ("builtin:<name>" for the
	// project's own).
	Path string `json:"-"`
}

// Entry is one capability's expected verdict.
type Entry struct {
	Verdict capability.Verdict `json:"verdict"`
	// Reason says why, from the upstream code read.
	Reason string `json:"reason"`
	// Upstream names the upstream code or issue behind a known deviation
	// (required for nonconformant entries).
	Upstream string `json:"upstream,omitempty"`
}

// Parse reads one file strictly: unknown fields, unknown capabilities and
// deviations without their upstream reference are errors.
func Parse(path string, data []byte) (*File, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	var errs []error
	if f.RuntimeName == "" {
		errs = append(errs, errors.New("runtimeName is empty"))
	}
	for n, e := range f.Verdicts {
		if _, err := capability.Lookup(string(n)); err != nil {
			errs = append(errs, err)
		}
		if e.Reason == "" {
			errs = append(errs, fmt.Errorf("%s: no reason", n))
		}
		if e.Verdict == capability.Nonconformant && e.Upstream == "" {
			errs = append(errs, fmt.Errorf("%s: a known deviation needs the upstream code or issue behind it (upstream:)", n))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// BuiltinFiles are the project's own files.
func BuiltinFiles() []*File {
	entries, err := builtin.ReadDir(".")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []*File
	for _, e := range entries {
		data, err := builtin.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		f, err := Parse("builtin:"+e.Name(), data)
		if err != nil {
			panic(err) // a unit test parses every file
		}
		out = append(out, f)
	}
	return out
}

// Load reads what -expect names: builtin, a file, or a directory of files
// (each *.yaml in it).
func Load(what string) ([]*File, error) {
	if what == Builtin {
		return BuiltinFiles(), nil
	}
	st, err := os.Stat(what)
	if err != nil {
		return nil, fmt.Errorf("-expect: %w", err)
	}
	paths := []string{what}
	if st.IsDir() {
		if paths, err = filepath.Glob(filepath.Join(what, "*.yaml")); err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("-expect: no *.yaml file in %s", what)
		}
	}
	var out []*File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("-expect: %w", err)
		}
		f, err := Parse(p, data)
		if err != nil {
			return nil, fmt.Errorf("-expect: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Matches says whether the file is about this runtime.
func (f *File) Matches(rt capability.RuntimeInfo) bool {
	h := rt.Handler
	if h == "" {
		h = "default"
	}
	// A release's version may start with v (containerd's: "v2.4.2").
	return f.RuntimeName == rt.Name && strings.HasPrefix(strings.TrimPrefix(rt.Version, "v"), strings.TrimPrefix(f.VersionPrefix, "v")) && (f.Handler == "" || f.Handler == h)
}

// For is the file of files that is about rt: the one with the longest
// version prefix, a handler named before any handler (nil if none).
func For(files []*File, rt capability.RuntimeInfo) *File {
	var best *File
	for _, f := range files {
		if !f.Matches(rt) {
			continue
		}
		if best == nil || len(f.VersionPrefix) > len(best.VersionPrefix) || (len(f.VersionPrefix) == len(best.VersionPrefix) && f.Handler != "" && best.Handler == "") {
			best = f
		}
	}
	return best
}

// Deviations are the capabilities the file expects nonconformant, sorted.
func (f *File) Deviations() []capability.Name {
	var out []capability.Name
	for n, e := range f.Verdicts {
		if e.Verdict == capability.Nonconformant {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
