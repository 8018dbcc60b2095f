// Package catalog is the one list of the container runtimes ectest runs:
// each entry is a CRI implementation (containerd today), where its
// programs come from (Go builds from the module proxy, runtimes/builds, or
// host packages), the OCI runtime handlers it is configured with (their
// containerd configuration is rendered here, once, for configuration
// versions 2 and 3), the host packages it runs with, and the profile
// (runtimes/profiles) it is judged by.
//
// The embedded runtimes (runtimes/embedded.Flavors) and the offline kind
// node image's runtimes (kind/nodeimage.NodeRuntimes) are views of it:
// adding a runtime that reuses a handler is one entry here (plus its
// expected verdicts, runtimes/expected/<name>.yaml).
//
// The package is data and small helpers: it imports nothing of the
// framework or of kind.
package catalog

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/internal/gobuild"
	"github.com/ectest/ectest/internal/hostdeps"
	"github.com/ectest/ectest/runtimes/builds"
)

// Implementation is a CRI implementation, named as its CRI Version answer
// names itself (VersionResponse.RuntimeName), which is also what a
// profile's match.runtimeName compares. containerd, CRI-O ("cri-o") and
// cri-dockerd ("docker") are in the catalog: containerd and CRI-O as
// embedded runtimes and kind node runtimes (CRI-O with its own
// configuration in runtimes/embedded and kind/nodeimage), cri-dockerd as an
// embedded runtime only.
type Implementation string

// The implementations.
const (
	// Containerd is containerd's CRI plugin.
	Containerd Implementation = "containerd"
	// CriO is CRI-O, which runs its OCI runtime through conmon and pins a
	// pod's namespaces with pinns.
	CriO Implementation = "cri-o"
	// CriDockerd is Mirantis' cri-dockerd in front of a Docker engine; its
	// Version answer names the runtime "docker" and gives the engine's
	// version.
	CriDockerd Implementation = "docker"
)

// PinnsNote is what every report of a CRI-O run says about its pinns: the
// project's Go stand-in (runtimes/pinns), not upstream's C program.
const PinnsNote = "pinns is ectest-pinns, the project's Go stand-in for CRI-O's C pinns (runtimes/pinns), not upstream's"

// CriDockerdNote names the CRI implementation of a cri-dockerd run, which
// its Version answer does not: it says "docker" and the engine's version.
const CriDockerdNote = "the CRI implementation is cri-dockerd " + builds.CriDockerdVersion + " (its Version answers with the Docker engine's name and version)"

// Runtime is one runtime of the catalog.
type Runtime struct {
	// Name is what -runtime (embedded) and -node-runtime (kind) name.
	Name           string
	Implementation Implementation
	// Version is the implementation's version, for the reports and docs
	// (a build's module version, or the Debian release's).
	Version string
	// Default is the default handler (containerd's default_runtime_name),
	// what sandboxes without a runtime handler run with.
	Default Handler
	// Handlers are the further OCI handlers the runtime is configured with.
	Handlers []Handler
	// Profile is the builtin profile (runtimes/profiles) -profile=auto picks
	// for the runtime's sandboxes (a unit test of runtimes checks it).
	Profile string
	// Embedded, when set, makes the runtime an embedded one (-runtime).
	Embedded *Embedded
	// Node, when set, makes it a kind node image's runtime (-node-runtime).
	Node *Node
}

// Embedded is how the suite runs the runtime as its private, embedded one.
type Embedded struct {
	Description string
	// ConfigVersion is containerd's configuration format: 2 for
	// containerd 1.x, 3 for 2.x (0 for CRI-O, whose crio.conf has none).
	ConfigVersion int
	// Programs are built from the Go module proxy (internal/gobuild); none
	// means Debian's packages (hostdeps.DebianContainerd), from PATH.
	Programs []gobuild.Program
	// BuildNeeds are host packages the builds need (cgo with libseccomp).
	BuildNeeds []hostdeps.Purpose
	// HostNeeds are host packages the runtime runs with, beyond every
	// embedded runtime's (hostdeps.EmbeddedNetwork): Debian's crun.
	HostNeeds []hostdeps.Purpose
	// Handler is the runtime handler the CRI suite's sandboxes run with
	// ("" for the default); it must be Default's or one of Handlers.
	Handler string
	// Note is what every report of a run of it must say (the runtime
	// information's Note, ending the stack every report shows).
	Note string
}

// Node is how a kind node image carries the runtime.
type Node struct {
	Description string
	// Programs are built from the Go module proxy and copied into the node
	// (kind's places: runc in /usr/local/sbin, the rest in /usr/local/bin);
	// their order is part of the node image's cache key.
	Programs []gobuild.Program
	// Packages are the Debian packages the node's root filesystem adds
	// (none when the programs are built).
	Packages []string
	// RuntimeClasses are made when a cluster of this node runtime is
	// created: RuntimeClass name to runtime handler (one of Handlers).
	RuntimeClasses map[string]string
	// Note is what every report of a cluster of it must say (as
	// Embedded.Note).
	Note string
}

// HandlerNames lists the runtime's handlers, the default's first.
func (r Runtime) HandlerNames() []string {
	names := []string{r.Default.Name}
	for _, h := range r.Handlers {
		names = append(names, h.Name)
	}
	return names
}

// Handler finds a handler of the runtime by name ("" and "default" are the
// default handler).
func (r Runtime) Handler(name string) (Handler, bool) {
	if name == "" || name == "default" || name == r.Default.Name {
		return r.Default, true
	}
	for _, h := range r.Handlers {
		if h.Name == name {
			return h, true
		}
	}
	return Handler{}, false
}

// The containerd programs, shared by the entries below.
func containerd2(extra ...gobuild.Program) []gobuild.Program {
	return append([]gobuild.Program{builds.Containerd2("containerd"), builds.Containerd2("containerd-shim-runc-v2"), builds.Runc}, extra...)
}

func nodeContainerd2(extra ...gobuild.Program) []gobuild.Program {
	return append([]gobuild.Program{builds.Containerd2("containerd"), builds.Containerd2("containerd-shim-runc-v2"), builds.Containerd2("ctr"), builds.Runc}, extra...)
}

// GVisorRuntimeClass is the RuntimeClass of gVisor's handler runsc.
const GVisorRuntimeClass = "gvisor"

// Runtimes is the catalog, in the order make runtimes runs the embedded
// ones.
var Runtimes = []Runtime{
	{Name: "containerd-1.6", Implementation: Containerd, Version: "1.6 (Debian bookworm)", Default: Runc, Profile: "containerd-runc",
		Embedded: &Embedded{ConfigVersion: 2,
			Description: "Debian bookworm's containerd 1.6 with its runc 1.1 (end of life upstream)"},
		Node: &Node{Packages: []string{"containerd", "runc"},
			Description: "Debian bookworm's containerd 1.6 and runc 1.1 (end of life upstream)"}},
	{Name: "containerd-1.7", Implementation: Containerd, Version: builds.Containerd17Version, Default: Runc, Profile: "containerd-runc",
		Embedded: &Embedded{ConfigVersion: 2,
			Description: "containerd " + builds.Containerd17Version + " with runc " + builds.RuncVersion + ", both built from the Go module proxy (1.7 is supported upstream until September 2026)",
			Programs:    []gobuild.Program{builds.Containerd17("containerd"), builds.Containerd17("containerd-shim-runc-v2"), builds.Runc},
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
		Node: &Node{
			Programs:    []gobuild.Program{builds.Containerd17("containerd"), builds.Containerd17("containerd-shim-runc-v2"), builds.Containerd17("ctr"), builds.Runc},
			Description: "containerd " + builds.Containerd17Version + " with runc " + builds.RuncVersion + ", built from the Go module proxy (the embedded containerd-1.7's builds)"}},
	{Name: "containerd-2", Implementation: Containerd, Version: builds.Containerd2Version, Default: Runc, Profile: "containerd-runc",
		Embedded: &Embedded{ConfigVersion: 3,
			Description: "containerd " + builds.Containerd2Version + " with runc " + builds.RuncVersion + ", both built from the Go module proxy",
			Programs:    containerd2(),
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
		Node: &Node{Programs: nodeContainerd2(),
			Description: "containerd " + builds.Containerd2Version + " with runc " + builds.RuncVersion + ", built from the Go module proxy (the embedded containerd-2's builds)"}},
	{Name: "containerd-2-crun", Implementation: Containerd, Version: builds.Containerd2Version, Default: Runc, Handlers: []Handler{Crun}, Profile: "containerd-runc",
		Embedded: &Embedded{ConfigVersion: 3, Handler: Crun.Name,
			Description: "containerd " + builds.Containerd2Version + " (built from the Go module proxy) running sandboxes with Debian's crun through the runtime handler crun: the runc shim runs ectest-crun, which hides the hybrid cgroup hierarchy crun refuses (see README)",
			Programs:    containerd2(),
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp},
			HostNeeds:   []hostdeps.Purpose{hostdeps.Crun}}},
	{Name: "containerd-2-gvisor", Implementation: Containerd, Version: builds.Containerd2Version, Default: Runc, Handlers: []Handler{Runsc}, Profile: "containerd-gvisor",
		Embedded: &Embedded{ConfigVersion: 3, Handler: Runsc.Name,
			Description: "containerd " + builds.Containerd2Version + " running sandboxes with gVisor (runsc and its shim " + builds.GVisorVersion + ", built from the Go module proxy, the shim with one edit: see README) through the runtime handler runsc",
			Programs:    containerd2(builds.Runsc, builds.RunscShim),
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp}},
		Node: &Node{Programs: nodeContainerd2(builds.Runsc, builds.RunscShim),
			Description:    "containerd-2 plus gVisor (runsc and its shim " + builds.GVisorVersion + ") as the runtime handler runsc, offered as the RuntimeClass " + GVisorRuntimeClass,
			RuntimeClasses: map[string]string{GVisorRuntimeClass: Runsc.Name}}},
	{Name: "cri-o", Implementation: CriO, Version: builds.CriOVersion, Default: Runc, Profile: "cri-o",
		Embedded: &Embedded{
			Description: "CRI-O " + builds.CriOVersion + " with runc " + builds.RuncVersion + ", both built from the Go module proxy, Debian's conmon; " + PinnsNote,
			Programs:    []gobuild.Program{builds.CriO, builds.Runc},
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp},
			HostNeeds:   []hostdeps.Purpose{hostdeps.Conmon},
			Note:        PinnsNote},
		// conmon and skopeo (which copies kubeadm's images into CRI-O's
		// storage at boot) are Debian's; pinns and the oom_score_adj
		// wrapper of runc are the ectest binary that built the node image
		// (kind/nodeimage, crio.go).
		Node: &Node{Programs: []gobuild.Program{builds.CriO, builds.Runc}, Packages: []string{"conmon", "skopeo"},
			Description: "CRI-O " + builds.CriOVersion + " with runc " + builds.RuncVersion + " (the embedded cri-o's builds), Debian's conmon; " + PinnsNote,
			Note:        PinnsNote}},
	{Name: "cri-o-crun", Implementation: CriO, Version: builds.CriOVersion, Default: Runc, Handlers: []Handler{Crun}, Profile: "cri-o",
		Embedded: &Embedded{Handler: Crun.Name,
			Description: "CRI-O " + builds.CriOVersion + " (built from the Go module proxy) running sandboxes with Debian's crun through the runtime handler crun (conmon runs ectest-crun, which hides the hybrid cgroup hierarchy crun refuses), Debian's conmon; " + PinnsNote,
			Programs:    []gobuild.Program{builds.CriO, builds.Runc},
			BuildNeeds:  []hostdeps.Purpose{hostdeps.CgoSeccomp},
			HostNeeds:   []hostdeps.Purpose{hostdeps.Conmon, hostdeps.Crun},
			Note:        PinnsNote}},
	{Name: "cri-dockerd", Implementation: CriDockerd, Version: builds.CriDockerdVersion, Default: HostRunc, Profile: "cri-dockerd",
		Embedded: &Embedded{
			Description: "cri-dockerd " + builds.CriDockerdVersion + " (built from the Go module proxy) in front of a private Docker engine: Debian bookworm's docker.io 20.10 with its containerd 1.6 and runc 1.1",
			Programs:    []gobuild.Program{builds.CriDockerd},
			HostNeeds:   []hostdeps.Purpose{hostdeps.DockerEngine},
			Note:        CriDockerdNote}},
}

// Lookup finds a runtime of the catalog by name.
func Lookup(name string) (Runtime, error) {
	for _, r := range Runtimes {
		if r.Name == name {
			return r, nil
		}
	}
	return Runtime{}, fmt.Errorf("unknown runtime %q (the catalog's: %s)", name, strings.Join(Names(func(Runtime) bool { return true }), ", "))
}

// Names lists the names of the runtimes keep selects, in catalog order.
func Names(keep func(Runtime) bool) []string {
	var out []string
	for _, r := range Runtimes {
		if keep(r) {
			out = append(out, r.Name)
		}
	}
	return out
}

// IsEmbedded and IsNode select the embedded and the node image runtimes.
func IsEmbedded(r Runtime) bool { return r.Embedded != nil }

// IsNode selects the runtimes a kind node image can carry.
func IsNode(r Runtime) bool { return r.Node != nil }
