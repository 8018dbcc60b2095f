package embedded

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/internal/gobuild"
	"github.com/ectest/ectest/internal/hostdeps"
	"github.com/ectest/ectest/internal/progress"
	"github.com/ectest/ectest/runtimes/catalog"
)

// Flavor is one runtime the suite can embed: where its binaries come from
// and which configuration format it reads. Flavors are a view of the
// runtimes catalog (runtimes/catalog), its entries with an Embedded part.
type Flavor struct {
	Name        string
	Description string
	// ConfigVersion is containerd's configuration format: 2 for
	// containerd 1.x, 3 for 2.x.
	ConfigVersion int
	// Programs are built from the Go module proxy (internal/gobuild); none
	// means Debian's packages (hostdeps.DebianContainerd), from PATH.
	Programs []gobuild.Program
	// BuildNeeds are host packages the builds need (cgo with libseccomp).
	BuildNeeds []hostdeps.Purpose
	// Handler is the runtime handler sandboxes use ("" for the default,
	// runc); runsc makes containerd run them with gVisor, crun with
	// Debian's crun (through ectest-crun, see crunwrapper).
	Handler string
	// HostNeeds are host packages the flavor runs with, beyond every
	// embedded runtime's (hostdeps.EmbeddedNetwork): Debian's crun.
	HostNeeds []hostdeps.Purpose
	// Runtime is the catalog entry the flavor is a view of: its handlers
	// (Options.Handlers), implementation and profile.
	Runtime catalog.Runtime
}

// Handlers are the OCI handlers containerd is configured with beyond the
// default (Options.Handlers).
func (f Flavor) Handlers() []catalog.Handler { return f.Runtime.Handlers }

// OCIRuntimeVersion names the OCI runtime and its version for the reports,
// "runc 1.5.2", from its --version ("" when it does not answer). A build
// from the proxy that was not version-stamped (runsc says VERSION_MISSING)
// is named by the module version it was built from.
func (f Flavor) OCIRuntimeVersion(ctx context.Context, binDir string) string {
	bin := f.OCIRuntime(binDir)
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v := strings.TrimSpace(strings.Replace(first, " version ", " ", 1))
	if strings.Contains(v, "VERSION_MISSING") {
		for _, p := range f.Programs {
			if p.Binary == filepath.Base(bin) {
				v = strings.Replace(v, "VERSION_MISSING", p.Version, 1)
			}
		}
	}
	return v
}

// OCIRuntime is the OCI runtime binary the flavor's sandboxes run with,
// for the reports: runc, runsc or crun, in binDir when the flavor built it.
func (f Flavor) OCIRuntime(binDir string) string {
	h, ok := f.Runtime.Handler(f.Handler)
	if !ok {
		h = f.Runtime.Default
	}
	return handlerBinary(h, binDir)
}

// Options are the options that start the flavor from binDir (its
// Install's result); the caller adds the run's CNI, registry, sandbox
// image and log.
func (f Flavor) Options(binDir string) Options {
	return Options{Implementation: f.Runtime.Implementation, BinDir: binDir, ConfigVersion: f.ConfigVersion, Handlers: f.Handlers()}
}

// handlerBinary is where h's OCI runtime is: binDir's build, or the host's
// on PATH.
func handlerBinary(h catalog.Handler, binDir string) string {
	if h.HostBinary || binDir == "" {
		return h.Binary
	}
	return filepath.Join(binDir, h.Binary)
}

// Flavors are the runtimes -runtime can name (framework.DefaultRuntime runs
// without it): the catalog's embedded runtimes, in its order.
var Flavors = flavors()

func flavors() []Flavor {
	var out []Flavor
	for _, r := range catalog.Runtimes {
		if e := r.Embedded; e != nil {
			out = append(out, Flavor{Name: r.Name, Description: e.Description, ConfigVersion: e.ConfigVersion,
				Programs: e.Programs, BuildNeeds: e.BuildNeeds, Handler: e.Handler, HostNeeds: e.HostNeeds, Runtime: r})
		}
	}
	return out
}

// DaemonName is the flavor's CRI daemon: containerd, crio or cri-dockerd.
func (f Flavor) DaemonName() string {
	switch f.Runtime.Implementation {
	case catalog.CriO:
		return "crio"
	case catalog.CriDockerd:
		return "cri-dockerd"
	}
	return "containerd"
}

// LogName is the daemon's log in a report directory:
// embedded-containerd.log, embedded-crio.log, embedded-cri-dockerd.log
// (cri-dockerd's Docker engine and its containerd log beside it,
// embedded-dockerd.log and embedded-dockerd-containerd.log).
func (f Flavor) LogName() string { return "embedded-" + f.DaemonName() + ".log" }

// LookupFlavor finds a flavor by name.
func LookupFlavor(name string) (Flavor, error) {
	var names []string
	for _, f := range Flavors {
		if f.Name == name {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Flavor{}, fmt.Errorf("unknown runtime %q (embedded runtimes: %s)", name, strings.Join(names, ", "))
}

// HostPurposes are the host packages the flavor runs with: the network
// every embedded runtime uses, Debian's containerd and runc only for the
// flavor that is Debian's (no Programs: the built flavors bring their own,
// and installing Debian's containerd would also enable a systemd service
// nobody asked for), and the flavor's own HostNeeds (Debian's crun).
func (f Flavor) HostPurposes() []hostdeps.Purpose {
	needs := []hostdeps.Purpose{hostdeps.EmbeddedNetwork}
	if len(f.Programs) == 0 {
		needs = append(needs, hostdeps.DebianContainerd)
	}
	return append(needs, f.HostNeeds...)
}

// Install makes the flavor's binaries ready and returns the directory that
// holds containerd, its runc shim and runc ("" for Debian's, on PATH).
// Builds happen once per version (cacheRoot/bin), with the Go toolchain;
// a cached flavor needs none. The host packages installed are
// HostPurposes' (and BuildNeeds' when a build is due), nothing else.
func (f Flavor) Install(ctx context.Context, cacheRoot string, logf func(string, ...any)) (string, error) {
	if err := hostdeps.Ensure(ctx, logf, f.HostPurposes()...); err != nil {
		return "", err
	}
	if len(f.Programs) == 0 {
		return "", nil
	}
	dir := filepath.Join(cacheRoot, "runtimes", f.Name+"-"+f.key())
	missing := false
	for _, p := range f.Programs {
		if !p.Cached(cacheRoot) {
			missing = true
		}
	}
	if missing {
		if _, err := exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("runtime %s is not built yet, and building it needs the Go toolchain (go is not on PATH): run once where Go is (make runtimes), or give -runtime-endpoint", f.Name)
		}
		if err := hostdeps.Ensure(ctx, logf, f.BuildNeeds...); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, p := range f.Programs {
		var step *progress.Step
		if !p.Cached(cacheRoot) {
			step = progress.StartExpect(logf, fmt.Sprintf("runtime %s: building %s %s from the Go module proxy", f.Name, p.Binary, p.Version), "about 1 to 3 min cold")
		}
		path, err := gobuild.Build(ctx, "go", cacheRoot, p)
		if step != nil {
			step.Done(err)
		}
		if err != nil {
			return "", fmt.Errorf("runtime %s: %w", f.Name, err)
		}
		// Linked under a temporary name and renamed over the old link: a
		// runtime of this flavor starting at the same moment (two
		// ectest-runtime, make matrix cells) never finds the link missing.
		link := filepath.Join(dir, p.Binary)
		tmp := fmt.Sprintf("%s.%d.tmp", link, os.Getpid())
		_ = os.Remove(tmp)
		if err := os.Symlink(path, tmp); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, link); err != nil {
			_ = os.Remove(tmp)
			return "", err
		}
	}
	return dir, nil
}

func (f Flavor) key() string {
	var parts []string
	for _, p := range f.Programs {
		parts = append(parts, p.Key())
	}
	k := gobuild.Program{Binary: "f", Version: "v", Package: strings.Join(parts, ",")}.Key()
	return k[len(k)-12:]
}
