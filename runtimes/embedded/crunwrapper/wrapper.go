// Package crunwrapper is ectest-crun, the OCI runtime binary the embedded
// runtime containerd-2-crun gives its runtime handler crun: Debian's crun
// 1.8 refuses hybrid cgroup hosts (cgroup v1 with a cgroup2 hierarchy at
// /sys/fs/cgroup/unified whose cgroup.controllers lists a controller, here
// hugetlb: "cgroups in hybrid mode not supported, drop all controllers from
// cgroupv2"), and --cgroup-manager=disabled does not help. Run in a mount
// namespace of its own, with an empty file bound over that one
// cgroup.controllers, it takes the host for cgroup v1 and works, limits
// enforced; the host's view is unchanged.
//
// crun before 1.14.2 also refuses every bundle whose ociVersion does not
// contain "1.0" ("unknown version specified"; containers/crun commits
// 4532a388 and 0860c0ff dropped that check, "there is no advantage in
// doing it"), and containerd 2.x writes "1.3.0" (runtime-spec v1.3.0):
// for create and run the wrapper sets the bundle's ociVersion to
// AcceptedVersion, and changes nothing else in it.
//
// It is one of the programs every ectest binary carries
// (fixtures/programs): the embedded runtime links Name, in its run
// directory, to the running suite binary, and the runc shim runs it as
// crun, with crun's arguments.
package crunwrapper

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ectest/ectest/kind/host"
)

// Name is the program's name (argv[0]'s base name).
const Name = "ectest-crun"

// EnvCrun names the real crun (default: crun on PATH).
const EnvCrun = "ECTEST_CRUN"

// EmptyFile is the empty file, next to the wrapper (argv[0]'s directory),
// bound over the hybrid hierarchy's cgroup.controllers.
const EmptyFile = "ectest-crun.empty"

// Controllers is the file crun reads to refuse hybrid hosts.
const Controllers = "/sys/fs/cgroup/unified/cgroup.controllers"

// AcceptedVersion is the ociVersion the wrapper gives bundles crun 1.8
// would refuse.
const AcceptedVersion = "1.0.2"

// UnlimitedPids rewrites the bundle configuration at path when it asks
// for a negative pids limit, the runtime-spec's "unlimited" (CRI-O v1.36.3
// sends its default pids_limit, -1: server/container_create.go
// SetLinuxResourcesPidsLimit): crun 1.8 writes the number itself to
// pids.max, which the kernel refuses ("writing file `pids.max`: Invalid
// argument"), where runc writes "max". Without a pids block crun leaves
// pids.max as it is, unlimited. Nothing else in the file changes.
func UnlimitedPids(path string) error {
	return host.EditJSON(path, func(doc map[string]any) bool {
		linux, _ := doc["linux"].(map[string]any)
		resources, _ := linux["resources"].(map[string]any)
		pids, _ := resources["pids"].(map[string]any)
		if limit, ok := pids["limit"].(float64); !ok || limit >= 0 {
			return false
		}
		delete(resources, "pids")
		return true
	})
}

// AcceptableVersion rewrites the bundle configuration at path when its
// ociVersion lacks "1.0", the substring crun before 1.14.2 insists on
// (1.0.x and, by accident of the substring test, 1.1.0 pass; containerd
// 2.x's 1.3.0 does not). Nothing else in the file changes but the order of
// its top-level keys.
func AcceptableVersion(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var version string
	if raw, ok := doc["ociVersion"]; ok {
		if err := json.Unmarshal(raw, &version); err != nil {
			return fmt.Errorf("%s: ociVersion: %w", path, err)
		}
	}
	if version == "" || strings.Contains(version, "1.0") {
		return nil
	}
	doc["ociVersion"], _ = json.Marshal(AcceptedVersion)
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}
