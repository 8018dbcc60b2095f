package embedded

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/runtimes/catalog"
)

func TestConfigs(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	cfg := containerdConfig(l, Options{SandboxImage: "127.0.0.1:5000/ectest/pause@sha256:00", CNIBinDir: "/usr/lib/cni"})
	for _, want := range []string{
		`root = "/var/lib/ectest/embedded/abc/root"`,
		`address = "/var/lib/ectest/embedded/abc/containerd.sock"`,
		`sandbox_image = "127.0.0.1:5000/ectest/pause@sha256:00"`,
		"restrict_oom_score_adj = true",
		`Root = "/var/lib/ectest/embedded/abc/runc"`,
		`config_path = "/var/lib/ectest/embedded/abc/certs.d"`,
		`bin_dir = "/usr/lib/cni"`,
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("containerd config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "@") && strings.Count(cfg, "@ROOT@")+strings.Count(cfg, "@STATE@") > 0 {
		t.Errorf("unreplaced placeholders:\n%s", cfg)
	}
	bridge, subnet := l.network()
	if len(bridge) > 15 || !strings.HasPrefix(subnet, "198.18.") {
		t.Errorf("bridge %q (max 15 chars), subnet %q (must be in 198.18.0.0/16)", bridge, subnet)
	}
	cni := cniConfig(l)
	if !strings.Contains(cni, subnet) || !strings.Contains(cni, `"ipMasq": false`) || !strings.Contains(cni, l.cniData()) {
		t.Errorf("CNI config:\n%s", cni)
	}
	if h := hostsTOML("127.0.0.1:5000"); !strings.Contains(h, `server = "http://127.0.0.1:5000"`) {
		t.Errorf("hosts.toml:\n%s", h)
	}
}

func TestDefaultRuntimeIsAFlavor(t *testing.T) {
	if _, err := LookupFlavor(framework.DefaultRuntime); err != nil {
		t.Fatal(err)
	}
	if _, err := LookupFlavor("containerd-0.1"); err == nil {
		t.Error("an unknown flavor was found")
	}
}

func TestConfigV3ForContainerd2(t *testing.T) {
	l := layout{id: "x", dir: "/var/lib/ectest/embedded/x"}
	got := containerdConfig(l, Options{ConfigVersion: 3, BinDir: "/cache/bin", SandboxImage: "127.0.0.1:5000/ectest/pause@sha256:1", CNIBinDir: "/usr/lib/cni"})
	for _, want := range []string{"version = 3", `BinaryName = "/cache/bin/runc"`, `sandbox = "127.0.0.1:5000/ectest/pause@sha256:1"`, "restrict_oom_score_adj = true", `bin_dirs = ["/usr/lib/cni"]`, `socket_path = "/var/lib/ectest/embedded/x/state/nri.sock"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func TestCrunHandler(t *testing.T) {
	l := layout{id: "x", dir: "/var/lib/ectest/embedded/x"}
	got := containerdConfig(l, Options{ConfigVersion: 3, BinDir: "/cache/bin", Handlers: []catalog.Handler{catalog.Crun}, SandboxImage: "p", CNIBinDir: "/usr/lib/cni"})
	for _, want := range []string{
		"[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.crun]",
		`BinaryName = "/var/lib/ectest/embedded/x/ectest-crun"`,
		`Root = "/var/lib/ectest/embedded/x/crun"`,
		`BinaryName = "/cache/bin/runc"`, // the default handler stays runc
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q:\n%s", want, got)
		}
	}
	f, err := LookupFlavor("containerd-2-crun")
	if err != nil || f.Handler != "crun" || f.OCIRuntime("/cache/bin") != "crun" || len(f.HostNeeds) == 0 {
		t.Errorf("flavor containerd-2-crun: %+v, %v", f, err)
	}
	if g, _ := LookupFlavor("containerd-2-gvisor"); g.OCIRuntime("/b") != "/b/runsc" {
		t.Errorf("gVisor's OCI runtime: %s", g.OCIRuntime("/b"))
	}
}

// A handler new to the catalog that the runc shim runs (youki, say) needs
// no code here: its table, binary and state directory follow from it.
func TestNewRuncLikeHandler(t *testing.T) {
	youki := catalog.Runc
	youki.Name, youki.Binary, youki.StateDir = "youki", "youki", "youki"
	l := layout{id: "x", dir: "/var/lib/ectest/embedded/x"}
	for _, v := range []int{2, 3} {
		got := containerdConfig(l, Options{ConfigVersion: v, BinDir: "/cache/bin", Handlers: []catalog.Handler{youki}, SandboxImage: "p", CNIBinDir: "/usr/lib/cni"})
		for _, want := range []string{
			catalog.ContainerdRuntimesTable(v) + ".youki]",
			`BinaryName = "/cache/bin/youki"`,
			`Root = "/var/lib/ectest/embedded/x/youki"`,
			`BinaryName = "/cache/bin/runc"`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("version %d: missing %q:\n%s", v, want, got)
			}
		}
	}
	f := Flavor{Handler: "youki", Runtime: catalog.Runtime{Default: catalog.Runc, Handlers: []catalog.Handler{youki}}}
	if got := f.OCIRuntime("/cache/bin"); got != "/cache/bin/youki" {
		t.Errorf("OCI runtime: %s", got)
	}
	var dirs []string
	for _, h := range catalogHandlers() {
		dirs = append(dirs, h.StateDir)
	}
	if strings.Join(dirs, ",") != "runc,crun" {
		t.Errorf("the state directories swept for leftover containers: %v", dirs)
	}
}

// The embedded configuration's default handler is runc (RuncBinary
// replaces its binary for the self-test's fault injector): a catalog entry
// with another default needs containerdConfig to take it from Options.
func TestFlavorsDefaultToRunc(t *testing.T) {
	for _, f := range Flavors {
		if f.Runtime.Default.Name != catalog.Runc.Name {
			t.Errorf("%s: default handler %s; the embedded containerd's is runc", f.Name, f.Runtime.Default.Name)
		}
	}
}

// Each network slot's bridge has an address of its own: locally
// administered, unicast.
func TestBridgeMAC(t *testing.T) {
	seen := map[string]string{}
	for i := 0; i < 2000; i++ {
		l := layout{id: fmt.Sprintf("run-%d", i)}
		mac := l.bridgeMAC()
		bridge, _ := l.network()
		if !strings.HasPrefix(mac, "02:") || len(mac) != 17 {
			t.Fatalf("%s: address %s is not a locally administered unicast one", l.id, mac)
		}
		if other, ok := seen[mac]; ok && other != bridge {
			t.Fatalf("bridges %s and %s share address %s", other, bridge, mac)
		}
		seen[mac] = bridge
	}
	if len(seen) != 256 {
		t.Errorf("%d addresses for 2000 runs, want one per slot (256)", len(seen))
	}
}
