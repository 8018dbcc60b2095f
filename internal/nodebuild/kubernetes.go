package nodebuild

import (
	"bufio"
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
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/internal/progress"
	"github.com/ectest/ectest/kind/nodeimage"
)

// Components are the Kubernetes binaries a node image carries.
var Components = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet", "kubeadm", "kubectl"}

// recipeVersion changes whenever the way binaries are built changes, so
// cached builds of an older recipe are not reused.
const recipeVersion = "1"

// Builder runs go commands and logs progress.
type Builder struct {
	Go       string // "go" if empty
	CacheDir string // the user cache dir's ectest folder if empty
	Log      func(format string, args ...any)

	// step is the build under way (a node image's), whose stages are its
	// children (internal/progress); a Builder runs one build at a time.
	step *progress.Step
}

func (b *Builder) goCmd() string {
	if b.Go == "" {
		return "go"
	}
	return b.Go
}

func (b *Builder) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// cacheRoot is <user cache dir>/ectest.
func (b *Builder) cacheRoot() (string, error) {
	if b.CacheDir != "" {
		return b.CacheDir, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "ectest"), nil
}

// BinariesKey identifies a build of the Kubernetes binaries.
func BinariesKey(v nodeimage.Version, goVersion, arch string) string {
	return cacheKey("kubernetes", v.String(), goVersion, arch, recipeVersion)
}

// ComponentsKey identifies a build of some of the Kubernetes binaries (the
// kubelet of a skew worker, say); the full set keeps BinariesKey.
func ComponentsKey(v nodeimage.Version, goVersion, arch string, components []string) string {
	if isFullSet(components) {
		return BinariesKey(v, goVersion, arch)
	}
	c := append([]string(nil), components...)
	sort.Strings(c)
	return cacheKey("kubernetes", v.String()+"-"+strings.Join(c, "-"), goVersion, arch, recipeVersion)
}

func isFullSet(components []string) bool {
	for _, c := range Components {
		if !slices.Contains(components, c) {
			return false
		}
	}
	return true
}

func cacheKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return parts[0] + "-" + parts[1] + "-" + hex.EncodeToString(h[:])[:12]
}

// binariesDir is where the binaries for v built with this Go are cached.
func (b *Builder) binariesDir(ctx context.Context, v nodeimage.Version) (string, error) {
	return b.componentsDir(ctx, v, Components)
}

// componentsDir is where a build of some components of v is cached.
func (b *Builder) componentsDir(ctx context.Context, v nodeimage.Version, components []string) (string, error) {
	root, err := b.cacheRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", ComponentsKey(v, b.goVersion(ctx), runtime.GOARCH, components)), nil
}

// goVersion is the version of the Go toolchain that builds the binaries; a
// binary running where there is none (a suite binary on a node) looks for
// what the Go that built it would have built.
func (b *Builder) goVersion(ctx context.Context) string {
	if out, err := b.output(ctx, "", b.goCmd(), "env", "GOVERSION"); err == nil {
		return strings.TrimSpace(out)
	}
	return runtime.Version()
}

// CachedKubernetesBinaries returns the directory of already built binaries
// for v, without building.
func (b *Builder) CachedKubernetesBinaries(ctx context.Context, v nodeimage.Version) (string, error) {
	dir, err := b.binariesDir(ctx, v)
	if err != nil {
		return "", err
	}
	if !complete(dir, Components) {
		return "", fmt.Errorf("no cached kubernetes %s binaries", v)
	}
	return dir, nil
}

// KubernetesBinaries builds (or finds cached) static, version-stamped
// Kubernetes binaries and returns the directory holding them.
func (b *Builder) KubernetesBinaries(ctx context.Context, v nodeimage.Version) (string, error) {
	return b.KubernetesComponents(ctx, v, Components...)
}

// KubernetesComponents builds (or finds cached) the named Kubernetes
// binaries of v only, and returns the directory holding them: a skew
// worker needs its release's kubelet and nothing else of it. A cached
// build of every component serves any subset.
func (b *Builder) KubernetesComponents(ctx context.Context, v nodeimage.Version, components ...string) (_ string, err error) {
	for _, c := range components {
		if !slices.Contains(Components, c) {
			return "", fmt.Errorf("unknown Kubernetes component %q (known: %s)", c, strings.Join(Components, ", "))
		}
	}
	if full, err := b.binariesDir(ctx, v); err == nil && complete(full, components) {
		b.logf("Kubernetes %s %s: cached in %s", v, strings.Join(components, ", "), full)
		return full, nil
	}
	dir, err := b.componentsDir(ctx, v, components)
	if err != nil {
		return "", err
	}
	if complete(dir, components) {
		b.logf("Kubernetes %s %s: cached in %s", v, strings.Join(components, ", "), dir)
		return dir, nil
	}
	what, cold := fmt.Sprintf("Kubernetes %s binaries (%s)", v, strings.Join(components, ", ")), "about 8 min"
	switch {
	case len(components) == 1 && components[0] == "kubectl":
		cold = "about 1 to 2 min"
	case !isFullSet(components):
		cold = "about 4 min"
	}
	done := b.stage(what, cold)
	defer func() { err = done(err) }()
	work, err := os.MkdirTemp("", "ectest-k8sbuild-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	staging, err := b.stagingModules(ctx, work, v)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(throwawayGoMod(v, staging)), 0o644); err != nil {
		return "", err
	}
	tmp := dir + ".partial"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	var pkgs []string
	for _, c := range components {
		pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
	}
	args := append([]string{"build", "-mod=mod", "-trimpath", "-tags=providerless", "-ldflags=" + ldflags(v), "-o", tmp + "/"}, pkgs...)
	cmd := exec.CommandContext(ctx, b.goCmd(), args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kubernetes %s: %v\n%s", v, err, tail(string(out), 30))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	return dir, nil
}

func complete(dir string, files []string) bool {
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

var stagingRE = regexp.MustCompile(`^\s*(k8s\.io/[A-Za-z0-9._-]+)\s+=>\s+\./staging/`)

// StagingModules lists the modules a kubernetes go.mod replaces with its
// staging directory: a throwaway module must pin them to v0.MINOR.PATCH.
func StagingModules(goMod string) []string {
	var out []string
	s := bufio.NewScanner(strings.NewReader(goMod))
	for s.Scan() {
		if m := stagingRE.FindStringSubmatch(s.Text()); m != nil {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

func (b *Builder) stagingModules(ctx context.Context, work string, v nodeimage.Version) ([]string, error) {
	out, err := b.output(ctx, work, b.goCmd(), "mod", "download", "-json", "k8s.io/kubernetes@"+v.String())
	if err != nil {
		return nil, fmt.Errorf("download k8s.io/kubernetes@%s from the Go module proxy: %w", v, err)
	}
	var info struct{ GoMod, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return nil, err
	}
	if info.Error != "" {
		return nil, fmt.Errorf("k8s.io/kubernetes@%s: %s", v, info.Error)
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, err
	}
	mods := StagingModules(string(data))
	if len(mods) == 0 {
		return nil, fmt.Errorf("k8s.io/kubernetes@%s: no staging replacements found in its go.mod", v)
	}
	return mods, nil
}

func throwawayGoMod(v nodeimage.Version, staging []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module ectest.local/kubernetes-build\n\ngo 1.24\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n", v)
	for _, m := range staging {
		fmt.Fprintf(&b, "\t%s => %s %s\n", m, m, v.StagingVersion())
	}
	b.WriteString(")\n")
	return b.String()
}

// ldflags stamp the version the way the Kubernetes release build does;
// unstamped binaries report v0.0.0-master and confuse kubeadm.
func ldflags(v nodeimage.Version) string {
	date := "2026-01-01T00:00:00Z"
	var parts []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		parts = append(parts,
			"-X "+pkg+".gitVersion="+v.String(),
			"-X "+pkg+".gitMajor="+fmt.Sprint(v.Major),
			"-X "+pkg+".gitMinor="+fmt.Sprint(v.Minor),
			"-X "+pkg+".gitTreeState=clean",
			"-X "+pkg+".buildDate="+date,
		)
	}
	return "-s -w " + strings.Join(parts, " ")
}

func (b *Builder) output(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, tail(string(ee.Stderr), 10))
		}
		return "", fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
