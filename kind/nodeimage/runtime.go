package nodeimage

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ectest/ectest/internal/gobuild"
	"github.com/ectest/ectest/runtimes/catalog"
)

// NodeRuntime is the container runtime a node image carries: containerd,
// its shims and OCI runtimes, and the RuntimeClasses a cluster of it offers.
// NodeRuntimes are a view of the runtimes catalog (runtimes/catalog), its
// entries with a Node part.
type NodeRuntime struct {
	Name        string
	Description string
	// Programs are built from the Go module proxy: the builds the embedded
	// runtimes use (runtimes/builds), copied into /usr/local/bin (runc into
	// /usr/local/sbin, as kind's own node images have them). None means
	// Debian's containerd and runc packages.
	Programs []gobuild.Program
	// Packages are what the root filesystem adds to NodePackages for it.
	Packages []string
	// RuntimeClasses are made when a cluster of this node runtime is
	// created: RuntimeClass name to containerd runtime handler.
	RuntimeClasses map[string]string
	// OCIRuntimes names the OCI runtime binary behind each containerd
	// runtime handler ("" is the default handler).
	OCIRuntimes map[string]string
	// Runtime is the catalog entry the node runtime is a view of: its
	// handlers (configured in the node's containerd) and profile.
	Runtime catalog.Runtime
}

// DefaultNodeRuntime is the node runtime without -node-runtime: containerd
// 2.x, what current Kubernetes supports (kind's own node images ship it).
const DefaultNodeRuntime = "containerd-2"

// GVisorRuntimeClass is the RuntimeClass of gVisor's handler runsc.
const GVisorRuntimeClass = catalog.GVisorRuntimeClass

// NodeRuntimes are the node runtimes -node-runtime can name: the catalog's,
// the default first, then the newest first.
var NodeRuntimes = nodeRuntimes()

func nodeRuntimes() []NodeRuntime {
	var out []NodeRuntime
	for i := len(catalog.Runtimes) - 1; i >= 0; i-- {
		r := catalog.Runtimes[i]
		n := r.Node
		if n == nil {
			continue
		}
		oci := map[string]string{"": r.Default.Binary}
		for _, h := range r.Handlers {
			oci[h.Name] = h.Binary
		}
		rt := NodeRuntime{Name: r.Name, Description: n.Description, Programs: n.Programs, Packages: n.Packages,
			RuntimeClasses: n.RuntimeClasses, OCIRuntimes: oci, Runtime: r}
		if r.Name == DefaultNodeRuntime {
			out = append([]NodeRuntime{rt}, out...)
		} else {
			out = append(out, rt)
		}
	}
	return out
}

// LookupNodeRuntime finds a node runtime by name ("" is the default).
func LookupNodeRuntime(name string) (NodeRuntime, error) {
	if name == "" {
		name = DefaultNodeRuntime
	}
	var names []string
	for _, r := range NodeRuntimes {
		if r.Name == name {
			return r, nil
		}
		names = append(names, r.Name)
	}
	return NodeRuntime{}, fmt.Errorf("unknown node runtime %q (known: %s)", name, strings.Join(names, ", "))
}

// RuntimeClassNames lists the RuntimeClasses a cluster of rt offers, sorted.
func (rt NodeRuntime) RuntimeClassNames() []string {
	var out []string
	for n := range rt.RuntimeClasses {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Handler is the containerd runtime handler a RuntimeClass names (""
// for none, the default handler).
func (rt NodeRuntime) Handler(runtimeClass string) string { return rt.RuntimeClasses[runtimeClass] }

// handlerPaths are where a handler's files are in the node: its OCI
// runtime where installPrograms puts the builds (the host's on PATH), its
// state under /run/containerd, its shim's configuration next to
// containerd's; cgroups through systemd, as kind's runc has them.
func handlerPaths(h catalog.Handler) catalog.Paths {
	p := catalog.Paths{Binary: "/" + nodePath(h.Binary), Root: "/run/containerd/" + h.Name, SystemdCgroup: true}
	if h.HostBinary {
		p.Binary = h.Binary
	}
	if h.ShimConfig != nil {
		p.ShimConfig = "/etc/containerd/" + h.ShimConfig.File
	}
	return p
}

// shimConfigs are the handlers' own configuration files (gVisor's
// runsc.toml), by path in the node.
func (rt NodeRuntime) shimConfigs() map[string]string {
	files := map[string]string{}
	for _, h := range rt.Runtime.Handlers {
		if h.ShimConfig != nil {
			p := handlerPaths(h)
			files[p.ShimConfig] = h.ShimConfigTOML(p)
		}
	}
	return files
}

// packages is the root filesystem's package list for rt.
func (rt NodeRuntime) packages() []string {
	return append(append([]string{}, NodePackages...), rt.Packages...)
}

// key identifies the runtime's programs (their builds' keys).
func (rt NodeRuntime) key() string {
	parts := []string{rt.Name}
	for _, p := range rt.Programs {
		parts = append(parts, p.Key())
	}
	return strings.Join(parts, ",")
}

// nodePath is where a program goes in the node (kind's places: runc in
// /usr/local/sbin, the rest in /usr/local/bin).
func nodePath(binary string) string {
	if binary == "runc" {
		return "usr/local/sbin/" + binary
	}
	return "usr/local/bin/" + binary
}

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
func installPrograms(root string, rt NodeRuntime, built map[string]string) error {
	var errs []error
	for _, p := range rt.Programs {
		data, err := os.ReadFile(built[p.Binary])
		if err != nil {
			return err
		}
		dst := filepath.Join(root, nodePath(p.Binary))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		_ = os.Remove(dst)
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			return err
		}
		missing, err := missingLibraries(root, nodePath(p.Binary))
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s (built with cgo=%v) needs %s, which the node's root filesystem lacks: add the Debian package to NodePackages", p.Binary, p.CGO, strings.Join(missing, ", ")))
		}
	}
	return errors.Join(errs...)
}
