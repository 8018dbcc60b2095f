package nodebuild

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/internal/hostdeps"
	"github.com/ectest/ectest/kind/nodeimage"
)

// AptMirror finds the Debian mirror this machine's apt uses for a suite,
// from one-line (sources.list) or deb822 (*.sources) entries.
func AptMirror(suite string) (string, error) {
	files, _ := filepath.Glob("/etc/apt/sources.list.d/*")
	files = append([]string{"/etc/apt/sources.list"}, files...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if m := MirrorFromSources(string(data), suite); m != "" {
			return m, nil
		}
	}
	return "", fmt.Errorf("no Debian %s main mirror in /etc/apt/sources.list*", suite)
}

// MirrorFromSources parses apt sources text for a suite's main component.
func MirrorFromSources(text, suite string) string {
	var uris, suites, comps []string
	flush := func() string {
		defer func() { uris, suites, comps = nil, nil, nil }()
		if contains(suites, suite) && contains(comps, "main") && len(uris) > 0 {
			return uris[0]
		}
		return ""
	}
	s := bufio.NewScanner(strings.NewReader(text + "\n\n"))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		switch {
		case strings.HasPrefix(line, "deb "):
			f := strings.Fields(line)
			i := 1
			if i < len(f) && strings.HasPrefix(f[i], "[") {
				for i < len(f) && !strings.HasSuffix(f[i], "]") {
					i++
				}
				i++
			}
			if i+2 < len(f) && f[i+1] == suite && contains(f[i+2:], "main") {
				return f[i]
			}
		case strings.HasPrefix(line, "URIs:"):
			uris = strings.Fields(strings.TrimPrefix(line, "URIs:"))
		case strings.HasPrefix(line, "Suites:"):
			suites = strings.Fields(strings.TrimPrefix(line, "Suites:"))
		case strings.HasPrefix(line, "Components:"):
			comps = strings.Fields(strings.TrimPrefix(line, "Components:"))
		case line == "":
			if m := flush(); m != "" {
				return m
			}
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RootFSKey identifies a root filesystem build.
func RootFSKey(suite, mirror string, packages []string) string {
	return cacheKey("rootfs", suite, mirror, strings.Join(packages, ","), recipeVersion)
}

// rootFSPath is where the root filesystem's tarball for rt is cached.
func (b *Builder) rootFSPath(rt nodeimage.NodeRuntime) (string, error) {
	root, err := b.cacheRoot()
	if err != nil {
		return "", err
	}
	mirror, err := AptMirror(nodeimage.DebianSuite)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "rootfs", RootFSKey(nodeimage.DebianSuite, mirror, rt.RootFSPackages())+".tar"), nil
}

// RootFS debootstraps (or finds cached) the node's Debian root filesystem
// for rt and returns the path of its tarball. debootstrap is installed
// when missing.
func (b *Builder) RootFS(ctx context.Context, rt nodeimage.NodeRuntime) (_ string, err error) {
	tarball, err := b.rootFSPath(rt)
	if err != nil {
		return "", err
	}
	mirror, err := AptMirror(nodeimage.DebianSuite)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(tarball); err == nil {
		b.logf("Debian root filesystem: cached in %s", tarball)
		return tarball, nil
	}
	if err := hostdeps.Ensure(ctx, b.Log, hostdeps.NodeImage); err != nil {
		return "", err
	}
	done := b.stage("Debian root filesystem (debootstrap "+nodeimage.DebianSuite+" from the machine's apt mirror)", "about 3 min")
	defer func() { err = done(err) }()
	work, err := os.MkdirTemp("", "ectest-rootfs-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "rootfs")
	cmd := exec.CommandContext(ctx, "debootstrap", "--variant=minbase", "--include="+strings.Join(rt.RootFSPackages(), ","), nodeimage.DebianSuite, dir, mirror)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("debootstrap: %v\n%s", err, tail(string(out), 20))
	}
	for _, p := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		entries, _ := filepath.Glob(filepath.Join(dir, p, "*"))
		for _, e := range entries {
			_ = os.RemoveAll(e)
		}
	}
	if err := os.MkdirAll(filepath.Dir(tarball), 0o755); err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-C", dir, "-cf", tarball+".partial", ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("tar rootfs: %v: %s", err, out)
	}
	if err := os.Rename(tarball+".partial", tarball); err != nil {
		return "", err
	}
	return tarball, nil
}
