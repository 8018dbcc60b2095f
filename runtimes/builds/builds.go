// Package builds is the one list of the container-runtime programs ectest
// builds from the Go module proxy (internal/gobuild): containerd 2.x and
// 1.7, their runc shims and ctr, runc, CRI-O's crio, cri-dockerd, and gVisor's runsc
// with its containerd shim, at pinned versions. The embedded runtimes
// (runtimes/embedded) and the offline kind node image (kind/nodeimage) use
// the very same programs, so one build cache serves both and both layers
// run the same binaries.
package builds

import "github.com/ectest/ectest/internal/gobuild"

// Versions of the programs built from the Go module proxy.
const (
	Containerd2Version  = "v2.4.2"
	Containerd17Version = "v1.7.36"
	// GVisorVersion is gVisor's newest pseudo-version on the proxy (it has
	// no tags there).
	GVisorVersion = "v0.0.0-20260905035102-160fafc42237"
	RuncVersion   = "v1.5.2"
	CriOVersion   = "v1.36.3"
	// CriDockerdVersion is the newest cri-dockerd that talks to Debian
	// bookworm's docker.io 20.10: v0.4.0 refuses engines older than API
	// 1.42.
	CriDockerdVersion = "v0.3.17"
	recipe            = "1"
)

// Containerd2 is a command of containerd 2.x (containerd,
// containerd-shim-runc-v2, ctr).
func Containerd2(cmd string) gobuild.Program {
	return gobuild.Program{Module: "github.com/containerd/containerd/v2", Package: "github.com/containerd/containerd/v2/cmd/" + cmd, Version: Containerd2Version, Binary: cmd, Recipe: recipe,
		VersionVar: "github.com/containerd/containerd/v2/version.Version"} // its Makefile's stamp: the CRI Version says v2.4.2
}

// Containerd17 is a command of containerd 1.7 (its go.mod's exclude
// directives are kept by gobuild's throwaway module).
func Containerd17(cmd string) gobuild.Program {
	return gobuild.Program{Module: "github.com/containerd/containerd", Package: "github.com/containerd/containerd/cmd/" + cmd, Version: Containerd17Version, Binary: cmd, Recipe: recipe,
		VersionVar: "github.com/containerd/containerd/version.Version"}
}

// Runc is built with cgo and the seccomp tag: it links libseccomp
// dynamically (Debian's libseccomp-dev to build, libseccomp2 to run).
var Runc = gobuild.Program{Module: "github.com/opencontainers/runc", Package: "github.com/opencontainers/runc", Version: RuncVersion, Binary: "runc",
	Tags: []string{"seccomp"}, CGO: true, Recipe: recipe}

// CriO is CRI-O's daemon, built with cgo (libseccomp) and the tags its
// Makefile picks on a host without btrfs headers and gpgme
// (hack/btrfs_installed_tag.sh, hack/openpgp_tag.sh): btrfs left out,
// signatures checked by the pure-Go OpenPGP, OSTree stubbed.
var CriO = gobuild.Program{Module: "github.com/cri-o/cri-o", Package: "github.com/cri-o/cri-o/cmd/crio", Version: CriOVersion, Binary: "crio",
	Tags: []string{"seccomp", "exclude_graphdriver_btrfs", "containers_image_openpgp", "containers_image_ostree_stub"}, CGO: true, Recipe: recipe}

// CriDockerd is Mirantis' cri-dockerd, the CRI in front of a Docker
// engine, built without cgo; its go.mod's replace directives (the
// Kubernetes libraries it pins) are carried into the throwaway module.
var CriDockerd = gobuild.Program{Module: "github.com/Mirantis/cri-dockerd", Package: "github.com/Mirantis/cri-dockerd", Version: CriDockerdVersion, Binary: "cri-dockerd",
	Replaces: true, Recipe: recipe}

// gVisor's runsc and its containerd shim, built without cgo (with cgo every
// container fails: "fork/exec /proc/self/exe: no such file or directory").
var (
	Runsc     = gobuild.Program{Module: "gvisor.dev/gvisor", Package: "gvisor.dev/gvisor/runsc", Version: GVisorVersion, Binary: "runsc", Recipe: recipe}
	RunscShim = gobuild.Program{Module: "gvisor.dev/gvisor", Package: "gvisor.dev/gvisor/shim", Version: GVisorVersion, Binary: "containerd-shim-runsc-v1", Recipe: recipe, Edits: []gobuild.Edit{ShimOOMEdit}}
	// ShimOOMEdit is the one change made to gVisor's shim (see README).
	ShimOOMEdit = gobuild.Edit{
		File: "pkg/shim/v1/manager.go",
		Old: `	if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil {
		return shim.BootstrapParams{}, fmt.Errorf("failed to set OOM Score on shim: %w", err)
	}`,
		New: `	if err := sys.SetOOMScore(cmd.Process.Pid, oomScoreMax); err != nil && !os.IsPermission(err) {
		return shim.BootstrapParams{}, fmt.Errorf("failed to set OOM Score on shim: %w", err)
	}`,
		Why: "the shim lowers its own oom_score_adj to -999 and fails when it may not; hosts without CAP_SYS_RESOURCE never may, so a permission error is ignored, as containerd's restrict_oom_score_adj does for runc",
	}
)
