package nodebuild

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/ectest/ectest/internal/golden"
	"github.com/ectest/ectest/kind/nodeimage"
)

func pinned(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got, "the node image must stay as it was (or run -update when a change is meant, and bump nodeRecipe if the key does not change with it)")
}

// Every node runtime's containerd config (from kind's own, testdata), its
// gVisor shim config, its packages and its parts of the node image's cache
// key are what they were before the runtimes became data (runtimes/catalog):
// a changed key means minutes of rebuilding, a changed file under an
// unchanged key a stale image.
func TestNodeRuntimesGolden(t *testing.T) {
	kindCfg, err := os.ReadFile("testdata/kind-" + nodeimage.KindVersion + "-config.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range nodeimage.NodeRuntimes {
		t.Run(rt.Name, func(t *testing.T) {
			var b strings.Builder
			rootfs := RootFSKey(nodeimage.DebianSuite, "http://deb.debian.org/debian", rt.RootFSPackages()) + ".tar"
			// NodeImage's key, with the Kubernetes binaries' folder fixed.
			key := cacheKey("node", "v1.35.0-"+rt.Name, "bin-v1.35.0", rootfs, rt.Key(), nodeimage.KindVersion, "amd64", nodeRecipe)
			fmt.Fprintf(&b, "# node runtime %s\n# description: %s\n# node image key: %s\n# runtime key: %s\n# rootfs: %s\n# packages: %s\n",
				rt.Name, rt.Description, key, rt.Key(), rootfs, strings.Join(rt.RootFSPackages(), ","))
			for _, c := range rt.RuntimeClassNames() {
				fmt.Fprintf(&b, "# RuntimeClass %s: handler %s\n", c, rt.Handler(c))
			}
			for _, h := range []string{"", "runsc", "crun"} {
				if oci := rt.OCIRuntimes[h]; oci != "" {
					fmt.Fprintf(&b, "# handler %q: OCI runtime %s\n", h, oci)
				}
			}
			for _, p := range rt.Programs {
				fmt.Fprintf(&b, "# program %s at /%s\n", p.Key(), nodeimage.NodePath(p.Binary))
			}
			files := rt.ShimConfigs()
			if rt.IsCrio() {
				// A CRI-O node's own files (kind's containerd config stays
				// in it, unused: no containerd runs there).
				for p, c := range nodeimage.NodeCrioFiles("registry.k8s.io/pause:3.10.1", []string{"registry.k8s.io/pause:3.10.1", "registry.k8s.io/etcd:3.6.5-0"}) {
					files["/"+p] = c
				}
			} else {
				b.WriteString("# ---- /etc/containerd/config.toml\n" + nodeimage.NodeContainerdConfig(string(kindCfg), "registry.k8s.io/pause:3.10.1", rt))
			}
			var paths []string
			for p := range files {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				b.WriteString("# ---- " + p + "\n" + files[p])
			}
			pinned(t, "node-runtime-"+rt.Name+".golden", b.String())
		})
	}
}
