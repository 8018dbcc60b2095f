package embedded

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ectest/ectest/internal/golden"
)

func pinned(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got, "the generated files must stay as they were (or run -update when a change is meant)")
}

// flavorOptions are the options a run of f starts containerd with, as
// framework/environment gives them.
func flavorOptions(f Flavor) Options {
	return Options{ConfigVersion: f.ConfigVersion, BinDir: "/cache/runtimes/" + f.Name,
		Handlers:     f.Handlers(),
		SandboxImage: "127.0.0.1:5000/ectest/pause@sha256:00", CNIBinDir: "/usr/lib/cni", RegistryAddr: "127.0.0.1:5000"}
}

// Every flavor's generated files (containerd's config, gVisor's shim's) and
// its build cache key are what they were before the runtimes became data
// (runtimes/catalog): a refactoring must not change what runs.
func TestFlavorsGolden(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	for _, f := range Flavors {
		t.Run(f.Name, func(t *testing.T) {
			o := flavorOptions(f)
			if f.Programs == nil {
				o.BinDir = ""
			}
			var b strings.Builder
			fmt.Fprintf(&b, "# flavor %s\n# description: %s\n# config version: %d\n# handler: %q\n# key: %s\n# OCI runtime: %s\n",
				f.Name, f.Description, f.ConfigVersion, f.Handler, f.key(), f.OCIRuntime(o.BinDir))
			for _, p := range f.Programs {
				fmt.Fprintf(&b, "# program: %s\n", p.Key())
			}
			fmt.Fprintf(&b, "# build needs: %v\n# host needs: %v\n", f.BuildNeeds, f.HostNeeds)
			b.WriteString("# ---- config.toml\n" + containerdConfig(l, o))
			files := shimConfigs(l, o)
			var paths []string
			for p := range files {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				b.WriteString("# ---- " + filepath.Base(p) + "\n" + files[p])
			}
			pinned(t, "flavor-"+f.Name+".golden", b.String())
		})
	}
	// The self-test's fault-injecting wrapper as runc's binary.
	f, _ := LookupFlavor("containerd-2")
	o := flavorOptions(f)
	o.RuncBinary = "/tmp/ocifault"
	pinned(t, "flavor-containerd-2-ocifault.golden", containerdConfig(l, o))
	o = flavorOptions(Flavor{ConfigVersion: 2})
	o.RuncBinary = "/tmp/ocifault"
	pinned(t, "flavor-v2-ocifault.golden", containerdConfig(l, o))
}
