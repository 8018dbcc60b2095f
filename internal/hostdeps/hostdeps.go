// Package hostdeps is the one list of what ectest needs from the host's
// Debian packages, by purpose, and the one place that installs it: every
// entry point (make, the suite binaries, ectest-kind) asks for the purposes
// it is about to use, and only what is missing is installed, once.
package hostdeps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// Purpose names one use of host packages.
type Purpose string

// The purposes, and the packages each needs.
const (
	// EmbeddedNetwork: what every embedded runtime (the private containerd
	// the CRI suite starts without -runtime-endpoint) runs with, whoever
	// built it: the CNI plugins, iptables for the bridge plugin's
	// masquerading, iproute2 (ip, to remove the bridge and network
	// namespaces a run leaves).
	EmbeddedNetwork Purpose = "embedded-network"
	// DebianContainerd: Debian's containerd and runc, for the one embedded
	// runtime that is Debian's (containerd-1.6) and the self-tests that
	// start containerd from PATH. The other embedded runtimes build their
	// own from the Go module proxy and never need these (installing
	// containerd also enables its systemd service, see Ensure).
	DebianContainerd Purpose = "debian-containerd"
	// DebugImage: the static busybox the suite's debug image is made of.
	DebugImage Purpose = "debug-image"
	// KindHost: a Docker engine for kind clusters.
	KindHost Purpose = "kind-host"
	// NodeImage: building the offline kind node image's Debian root filesystem.
	NodeImage Purpose = "node-image"
	// CgoSeccomp: building runc from the Go module proxy (cgo with libseccomp).
	CgoSeccomp Purpose = "cgo-seccomp"
	// Crun: Debian's crun, the OCI runtime of the embedded runtime
	// containerd-2-crun.
	Crun Purpose = "crun"
	// Conmon: Debian's conmon, the container monitor of the embedded
	// runtime cri-o (CRI-O runs one per container).
	Conmon Purpose = "conmon"
	// DockerEngine: Debian's Docker engine with the containerd and runc it
	// runs on, for the embedded runtime cri-dockerd, which starts a private
	// dockerd and containerd of its own (never the system's services).
	DockerEngine Purpose = "docker-engine"
	// Browser: Debian's Chromium, for the test that renders matrix.html
	// headless (make test; the test skips where it is missing).
	Browser Purpose = "browser"
)

// Packages is the list: Debian package names per purpose.
var Packages = map[Purpose][]string{
	EmbeddedNetwork:  {"containernetworking-plugins", "iptables", "iproute2"},
	DebianContainerd: {"containerd", "runc"},
	DebugImage:       {"busybox-static"},
	KindHost:         {"docker.io"},
	NodeImage:        {"debootstrap"},
	CgoSeccomp:       {"gcc", "libc6-dev", "pkg-config", "libseccomp-dev"},
	Crun:             {"crun"},
	Conmon:           {"conmon"},
	DockerEngine:     {"docker.io", "containerd", "runc"},
	Browser:          {"chromium"},
}

// All returns every purpose, sorted.
func All() []Purpose {
	var out []Purpose
	for p := range Packages {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParsePurpose checks a purpose name ("all" is every purpose).
func ParsePurpose(s string) ([]Purpose, error) {
	if s == "all" {
		return All(), nil
	}
	if _, ok := Packages[Purpose(s)]; ok {
		return []Purpose{Purpose(s)}, nil
	}
	var names []string
	for _, p := range All() {
		names = append(names, string(p))
	}
	return nil, fmt.Errorf("unknown host-package purpose %q (known: %s, all)", s, strings.Join(names, ", "))
}

// Missing lists the packages of the purposes that are not installed.
func Missing(ctx context.Context, purposes ...Purpose) []string {
	seen := map[string]bool{}
	var missing []string
	for _, p := range purposes {
		for _, pkg := range Packages[p] {
			if seen[pkg] {
				continue
			}
			seen[pkg] = true
			if !installed(ctx, pkg) {
				missing = append(missing, pkg)
			}
		}
	}
	return missing
}

func installed(ctx context.Context, pkg string) bool {
	out, _ := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Status}", pkg).Output()
	return strings.Contains(string(out), "install ok installed")
}

// mu serializes installs within a process; the host lock (lockHost)
// between ectest processes, around apt-get update too (whose lists lock
// apt does not wait for), and apt's own lock (waited for, see lockTimeout)
// with any other apt.
var mu sync.Mutex

// lockTimeout is how long apt waits for another apt to finish.
const lockTimeout = 5 * time.Minute

// Ensure installs the packages of the purposes that are missing, saying so
// through logf; the packages' services are neither started nor left
// enabled at boot (see services.go). It fails with one sentence naming the packages when it
// cannot install them (not root, no apt-get).
func Ensure(ctx context.Context, logf func(string, ...any), purposes ...Purpose) error {
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		// Not a Debian-like host: nothing to check against; the caller's own
		// checks (a binary on PATH) will say what is missing.
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	missing := Missing(ctx, purposes...)
	if len(missing) == 0 {
		return nil
	}
	what := strings.Join(missing, " ")
	if os.Geteuid() != 0 {
		return fmt.Errorf("needs the Debian packages %s, and only root can install them: run `sudo apt-get install %s` (or `sudo make deps`) once", what, what)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("needs the Debian packages %s and there is no apt-get to install them", what)
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	unlock, err := lockHost()
	if err != nil {
		return fmt.Errorf("the host-package lock: %w", err)
	}
	defer unlock()
	// Another ectest process may have installed them while this one waited.
	if missing = Missing(ctx, purposes...); len(missing) == 0 {
		return nil
	}
	what = strings.Join(missing, " ")
	start := time.Now()
	logf("host packages: installing %s (for %s)", what, joinPurposes(purposes))
	lock := fmt.Sprintf("DPkg::Lock::Timeout=%d", int(lockTimeout.Seconds()))
	if out, err := run(ctx, "apt-get", "-o", lock, "update", "-qq"); err != nil {
		return fmt.Errorf("apt-get update (to install %s): %v: %s", what, err, lastLines(out, 5))
	}
	if err := install(ctx, lock, missing, logf); err != nil {
		return fmt.Errorf("apt-get install %s: %w", what, err)
	}
	if still := Missing(ctx, purposes...); len(still) > 0 {
		return fmt.Errorf("apt-get install %s succeeded but %s is still not installed", what, strings.Join(still, " "))
	}
	logf("host packages: installed %s in %s", what, time.Since(start).Round(time.Second))
	return nil
}

// install runs apt-get install with services neither started nor left
// enabled at boot (services.go), putting the host's policy-rc.d back
// whatever happens. The caller holds the host lock.
func install(ctx context.Context, lock string, pkgs []string, logf func(string, ...any)) (err error) {
	restore, err := forbidServiceStarts(policyRCD)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, restore()) }()
	before := bootLinks("/")
	// A package install cut short (a killed run, a machine stopped) leaves
	// dpkg refusing every install until it is finished; apt says to run
	// this. With nothing pending it does nothing; its failure (another
	// package manager holds the lock) is apt-get's to report below.
	if out, err := run(ctx, "dpkg", "--configure", "-a"); err == nil && strings.TrimSpace(out) != "" {
		logf("host packages: finished an install that was cut short first (dpkg --configure -a)")
	}
	args := append([]string{"-o", lock, "install", "-y", "-qq", "--no-install-recommends"}, pkgs...)
	out, err := run(ctx, "apt-get", args...)
	// Undo enabling even after a failed install: a package configured
	// before another failed enabled its services all the same.
	err = errors.Join(err, disableAtBoot(context.WithoutCancel(ctx), before, logf))
	if err != nil {
		return fmt.Errorf("%w: %s", err, lastLines(out, 10))
	}
	return nil
}

func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return string(out), err
}

func joinPurposes(ps []Purpose) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
