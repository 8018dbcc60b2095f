package nodeimage

import (
	"fmt"
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
	p := catalog.Paths{Binary: "/" + NodePath(h.Binary), Root: "/run/containerd/" + h.Name, SystemdCgroup: true}
	if h.HostBinary {
		p.Binary = h.Binary
	}
	if h.ShimConfig != nil {
		p.ShimConfig = "/etc/containerd/" + h.ShimConfig.File
	}
	return p
}

// ShimConfigs are the handlers' own configuration files (gVisor's
// runsc.toml), by path in the node.
func (rt NodeRuntime) ShimConfigs() map[string]string {
	files := map[string]string{}
	for _, h := range rt.Runtime.Handlers {
		if h.ShimConfig != nil {
			p := handlerPaths(h)
			files[p.ShimConfig] = h.ShimConfigTOML(p)
		}
	}
	return files
}

// RootFSPackages is the root filesystem's package list for rt.
func (rt NodeRuntime) RootFSPackages() []string {
	return append(append([]string{}, NodePackages...), rt.Packages...)
}

// Key identifies the runtime's programs (their builds' keys).
func (rt NodeRuntime) Key() string {
	parts := []string{rt.Name}
	for _, p := range rt.Programs {
		parts = append(parts, p.Key())
	}
	if rt.IsCrio() {
		parts = append(parts, "programs-"+CrioProgramsRecipe)
	}
	return strings.Join(parts, ",")
}
