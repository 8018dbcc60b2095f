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
	"github.com/ectest/ectest/runtimes/builds"
)

// Flavor is one runtime the suite can embed: where its binaries come from
// and which configuration format it reads.
type Flavor struct {
	Name        string
	Description string
	// ConfigVersion is containerd's configuration format: 2 for
	// containerd 1.x, 3 for 2.x.
	ConfigVersion int
	// Programs are built from the Go module proxy (internal/gobuild); none
	// means Debian's packages (hostdeps.EmbeddedRuntime), from PATH.
	Programs []gobuild.Program
	// BuildNeeds are host packages the builds need (cgo with libseccomp).
	BuildNeeds []hostdeps.Purpose
	// Handler is the runtime handler sandboxes use ("" for the default,
	// runc); runsc makes containerd run them with gVisor, crun with
	// Debian's crun (through ectest-crun, see crunwrapper).
	Handler string
	// HostNeeds are host packages the flavor runs with, beyond the
	// embedded runtime's (Debian's crun).
	HostNeeds []hostdeps.Purpose
}

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
	switch f.Handler {
	case "runsc":
		return filepath.Join(binDir, "runsc")
	case "crun":
		return "crun" // Debian's, on PATH
	}
	if binDir == "" {
		return "runc"
	}
	return filepath.Join(binDir, "runc")
}

// The programs of the flavors built from the Go module proxy are
// runtimes/builds' (the kind node image uses the same builds).
var (
	containerd2  = builds.Containerd2
	containerd17 = builds.Containerd17
	runc         = builds.Runc
	runsc        = builds.Runsc
	runscShim    = builds.RunscShim
)

// Flavors are the runtimes -runtime can name (framework.DefaultRuntime runs
// without it).
var Flavors = []Flavor{
	{Name: "containerd-1.6", ConfigVersion: 2,
		Description: "Debian bookworm's containerd 1.6 with its runc 1.1 (end of life upstream)"},
	{Name: "containerd-1.7", ConfigVersion: 2,
		Description: "containerd " + builds.Containerd17Version + " with runc " + builds.RuncVersion + ", both built from the Go module proxy (1.7 is supported upstream until September 2026)",
		Programs:    []gobuild.Program{containerd17("containerd"), containerd17("containerd-shim-runc-v2"), runc},
		BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
	{Name: "containerd-2", ConfigVersion: 3,
		Description: "containerd " + builds.Containerd2Version + " with runc " + builds.RuncVersion + ", both built from the Go module proxy",
		Programs:    []gobuild.Program{containerd2("containerd"), containerd2("containerd-shim-runc-v2"), runc},
		BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
	{Name: "containerd-2-crun", ConfigVersion: 3, Handler: "crun",
		Description: "containerd " + builds.Containerd2Version + " (built from the Go module proxy) running sandboxes with Debian's crun through the runtime handler crun: the runc shim runs ectest-crun, which hides the hybrid cgroup hierarchy crun refuses (see README)",
		Programs:    []gobuild.Program{containerd2("containerd"), containerd2("containerd-shim-runc-v2"), runc},
		BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp},
		HostNeeds:   []hostdeps.Purpose{hostdeps.Crun}},
	{Name: "containerd-2-gvisor", ConfigVersion: 3, Handler: "runsc",
		Description: "containerd " + builds.Containerd2Version + " running sandboxes with gVisor (runsc and its shim " + builds.GVisorVersion + ", built from the Go module proxy, the shim with one edit: see README) through the runtime handler runsc",
		Programs:    []gobuild.Program{containerd2("containerd"), containerd2("containerd-shim-runc-v2"), runc, runsc, runscShim},
		BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
}

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

// Install makes the flavor's binaries ready and returns the directory that
// holds containerd, its runc shim and runc ("" for Debian's, on PATH).
// Builds happen once per version (cacheRoot/bin), with the Go toolchain;
// a cached flavor needs none.
func (f Flavor) Install(ctx context.Context, cacheRoot string, logf func(string, ...any)) (string, error) {
	needs := append([]hostdeps.Purpose{hostdeps.EmbeddedRuntime}, f.HostNeeds...)
	if len(f.Programs) == 0 {
		return "", hostdeps.Ensure(ctx, logf, needs...)
	}
	// The CNI plugins and iptables still come from Debian.
	if err := hostdeps.Ensure(ctx, logf, needs...); err != nil {
		return "", err
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
		if !p.Cached(cacheRoot) {
			logf("runtime %s: building %s %s from the Go module proxy: started (about 1 to 3 min cold)", f.Name, p.Binary, p.Version)
		}
		path, err := gobuild.Build(ctx, "go", cacheRoot, p)
		if err != nil {
			return "", fmt.Errorf("runtime %s: %w", f.Name, err)
		}
		link := filepath.Join(dir, p.Binary)
		_ = os.Remove(link)
		if err := os.Symlink(path, link); err != nil {
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
