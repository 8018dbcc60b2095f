// Package gobuild builds Go programs of a given module version from the Go
// module proxy, once, into a cache keyed by everything that changes the
// result: the node image's etcd and CoreDNS, and the embedded runtimes'
// containerd, shims and runc. A throwaway module requires the module and
// carries what go install refuses: sibling modules its go.mod replaces with
// local directories are pinned to the same version, and its exclude
// directives are kept (containerd 1.7 has one).
package gobuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Program is one main package at a module version.
type Program struct {
	Module  string // github.com/containerd/containerd/v2
	Package string // github.com/containerd/containerd/v2/cmd/containerd
	Version string // v2.4.2
	Binary  string // the file name in the cache
	// Tags are build tags (seccomp for runc); CGO builds with cgo (runc
	// needs it for libseccomp). Both enter the cache key.
	Tags []string
	CGO  bool
	// Recipe changes when the way this program is built changes.
	Recipe string
	// VersionVar is the package variable the module's own release build
	// stamps its version into (-X VersionVar=Version), so that the program
	// reports its real version (containerd says "2.4.2+unknown" without).
	// It enters the cache key.
	VersionVar string
	// Edits are small changes the project makes to the module's source
	// before building (a copy of it; the module cache is never touched).
	// An edit whose Old text is missing fails the build.
	Edits []Edit
	// Replaces carries the module's go.mod replace directives that name
	// another module version (not a directory) into the throwaway module:
	// a dependency's replaces apply only in its own module, and a module
	// that pins its Kubernetes libraries that way (cri-dockerd, 28 of
	// them) does not build without them. It enters the cache key.
	Replaces bool
}

// Edit replaces Old with New, once, in File (a path inside the module).
type Edit struct {
	File, Old, New string
	// Why is documented in the README next to the runtime that needs it.
	Why string
}

// Key identifies a build of p for this architecture.
func (p Program) Key() string {
	parts := []string{p.Binary, p.Version, p.Package, runtime.GOARCH, p.Recipe}
	if len(p.Tags) > 0 || p.CGO {
		parts = append(parts, strings.Join(p.Tags, ","), fmt.Sprint(p.CGO))
	}
	for _, e := range p.Edits {
		parts = append(parts, e.File, e.Old, e.New)
	}
	if p.Replaces {
		parts = append(parts, "replaces")
	}
	if p.VersionVar != "" {
		parts = append(parts, "version:"+p.VersionVar)
	}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return parts[0] + "-" + parts[1] + "-" + hex.EncodeToString(h[:])[:12]
}

// Path is where p is cached under cacheRoot.
func (p Program) Path(cacheRoot string) string {
	return filepath.Join(cacheRoot, "bin", p.Key(), p.Binary)
}

// Cached reports whether p is already built.
func (p Program) Cached(cacheRoot string) bool {
	_, err := os.Stat(p.Path(cacheRoot))
	return err == nil
}

// Build builds p into the cache (unless it is there) with the go command
// and returns the binary's path.
func Build(ctx context.Context, goCmd, cacheRoot string, p Program) (string, error) {
	out := p.Path(cacheRoot)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	work, err := os.MkdirTemp("", "ectest-gobuild-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	info, err := run(ctx, work, nil, goCmd, "mod", "download", "-json", p.Module+"@"+p.Version)
	if err != nil {
		return "", err
	}
	var m struct{ Dir, GoMod, Error string }
	if err := json.Unmarshal([]byte(info), &m); err != nil || m.Error != "" {
		return "", fmt.Errorf("%s@%s: %v %s", p.Module, p.Version, err, m.Error)
	}
	gomod, err := os.ReadFile(m.GoMod)
	if err != nil {
		return "", err
	}
	modfile := ThrowawayGoMod(p.Module, p.Version, string(gomod))
	if p.Replaces {
		modfile += ReplaceBlock(string(gomod))
	}
	if len(p.Edits) > 0 {
		if err := editedCopy(ctx, m.Dir, filepath.Join(work, "mod"), p.Edits); err != nil {
			return "", fmt.Errorf("%s@%s: %w", p.Module, p.Version, err)
		}
		modfile += fmt.Sprintf("\nreplace %s => ./mod\n", p.Module)
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(modfile), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp := out + ".partial"
	ldflags := "-s -w"
	if p.VersionVar != "" {
		ldflags += " -X " + p.VersionVar + "=" + p.Version
	}
	args := []string{"build", "-mod=mod", "-trimpath", "-ldflags=" + ldflags, "-o", tmp}
	if len(p.Tags) > 0 {
		args = append(args, "-tags="+strings.Join(p.Tags, ","))
	}
	cgo := "CGO_ENABLED=0"
	if p.CGO {
		cgo = "CGO_ENABLED=1"
	}
	if _, err := run(ctx, work, []string{cgo, "GOFLAGS=-mod=mod"}, goCmd, append(args, p.Package)...); err != nil {
		return "", fmt.Errorf("build %s@%s: %w", p.Package, p.Version, err)
	}
	return out, os.Rename(tmp, out)
}

// editedCopy copies the module's source to dst and applies the edits.
func editedCopy(ctx context.Context, src, dst string, edits []Edit) error {
	if _, err := run(ctx, "", nil, "cp", "-r", src, dst); err != nil {
		return err
	}
	if _, err := run(ctx, "", nil, "chmod", "-R", "u+w", dst); err != nil {
		return err
	}
	for _, e := range edits {
		path := filepath.Join(dst, e.File)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), e.Old) {
			return fmt.Errorf("edit of %s: the text to change is not there (%s); the edit needs updating for this version", e.File, e.Why)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), e.Old, e.New, 1)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var (
	localReplaceRE = regexp.MustCompile(`^\s*(?:replace\s+)?(\S+)\s+=>\s+\.\.?/(\S+)\s*$`)
	excludeRE      = regexp.MustCompile(`^\s*(?:exclude\s+)?(\S+)\s+(v\S+)\s*$`)
)

// LocalReplacements lists the modules a go.mod replaces with a directory of
// the same repository (skipping placeholders that forbid a dependency).
func LocalReplacements(goMod string) []string {
	var out []string
	for _, line := range strings.Split(goMod, "\n") {
		if m := localReplaceRE.FindStringSubmatch(line); m != nil && !strings.Contains(m[2], "FORBIDDEN") {
			out = append(out, m[1])
		}
	}
	return out
}

// Excludes lists a go.mod's exclude directives ("module version"), single
// or in a block.
func Excludes(goMod string) []string {
	var out []string
	inBlock := false
	for _, line := range strings.Split(goMod, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "exclude ("):
			inBlock = true
		case inBlock && t == ")":
			inBlock = false
		case inBlock || strings.HasPrefix(t, "exclude "):
			if i := strings.Index(t, "//"); i >= 0 {
				t = t[:i]
			}
			if m := excludeRE.FindStringSubmatch(strings.TrimPrefix(t, "exclude ")); m != nil {
				out = append(out, m[1]+" "+m[2])
			}
		}
	}
	return out
}

// Requires maps each module a go.mod requires to its version (read with
// golang.org/x/mod's lax parser: a go.mod that does not parse requires
// nothing here).
func Requires(goMod string) map[string]string {
	out := map[string]string{}
	f, err := modfile.ParseLax("go.mod", []byte(goMod), nil)
	if err != nil {
		return out
	}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}

// SiblingVersion is the version a sibling module of the same repository is
// required at: the release's own version, unless the sibling's major
// version differs from it. Then its go.mod's requirement names the
// sibling's tag of that release (etcd 3.5's go.etcd.io/etcd/client/v2 is
// v2.305.x beside server/v3 v3.5.x), and v3.5.x would be invalid for a /v2
// path.
func SiblingVersion(sibling, version string, required map[string]string) string {
	if module.CheckPathMajor(version, pathMajor(sibling)) == nil {
		return version
	}
	if v, ok := required[sibling]; ok {
		return v
	}
	return version
}

// pathMajor is a module path's major version suffix ("/v2"), or "".
func pathMajor(path string) string {
	_, major, _ := module.SplitPathVersion(path)
	return major
}

// ModuleReplaces lists a go.mod's replace directives whose target is a
// module version ("old [version] => new version"), skipping those that
// name a directory (LocalReplacements' business).
func ModuleReplaces(goMod string) []string {
	// Parse, not ParseLax: the lax parser drops replace directives.
	f, err := modfile.Parse("go.mod", []byte(goMod), nil)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range f.Replace {
		if r.New.Version == "" {
			continue // a directory
		}
		old := r.Old.Path
		if r.Old.Version != "" {
			old += " " + r.Old.Version
		}
		out = append(out, old+" => "+r.New.Path+" "+r.New.Version)
	}
	return out
}

// ReplaceBlock is a replace block of ModuleReplaces(goMod), for a
// throwaway go.mod ("" when there are none).
func ReplaceBlock(goMod string) string {
	reps := ModuleReplaces(goMod)
	if len(reps) == 0 {
		return ""
	}
	return "\nreplace (\n\t" + strings.Join(reps, "\n\t") + "\n)\n"
}

// ThrowawayGoMod is the go.mod of a module that builds mod at version.
func ThrowawayGoMod(mod, version, modGoMod string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module ectest.local/build\n\ngo 1.24\n\nrequire (\n\t%s %s\n", mod, version)
	required := Requires(modGoMod)
	for _, sib := range LocalReplacements(modGoMod) {
		fmt.Fprintf(&b, "\t%s %s\n", sib, SiblingVersion(sib, version, required))
	}
	b.WriteString(")\n")
	if ex := Excludes(modGoMod); len(ex) > 0 {
		b.WriteString("\nexclude (\n")
		for _, e := range ex {
			fmt.Fprintf(&b, "\t%s\n", e)
		}
		b.WriteString(")\n")
	}
	return b.String()
}

func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, strings.Join(lines, "\n"))
	}
	return string(out), nil
}
