package catalog

import (
	"github.com/ectest/ectest/internal/gobuild"
	"os/exec"
	"strings"
	"testing"
)

// Every entry is whole: a known implementation, a profile, its handlers
// unique, the embedded handler and the RuntimeClasses' handlers among
// them, and every OCI runtime it does not take from the host among its
// builds (or its Debian packages).
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Runtimes {
		if seen[r.Name] {
			t.Errorf("%s: twice in the catalog", r.Name)
		}
		seen[r.Name] = true
		switch r.Implementation {
		case Containerd:
		case CriO:
			// runtimes/embedded renders an embedded CRI-O's crio.conf,
			// kind/nodeimage a node's; every report of it names its pinns.
			if r.Node != nil && (!strings.Contains(r.Node.Description, PinnsNote) || r.Node.Note != PinnsNote) {
				t.Errorf("%s: the node runtime's description must say pinns is the project's stand-in (PinnsNote)", r.Name)
			}
			if r.Embedded != nil && (!strings.Contains(r.Embedded.Description, PinnsNote) || r.Embedded.Note != PinnsNote) {
				t.Errorf("%s: the description and the reports' note must say pinns is the project's stand-in (PinnsNote)", r.Name)
			}
		case CriDockerd:
			// runtimes/embedded renders the Docker engine's daemon.json and
			// cri-dockerd's command line; the engine runs the host's runc.
			if r.Node != nil {
				t.Errorf("%s: cri-dockerd in a kind node image has no configuration renderer yet", r.Name)
			}
			if !r.Default.HostBinary || len(r.Handlers) > 0 {
				t.Errorf("%s: the Docker engine runs the host's runc and no other handler", r.Name)
			}
		default:
			t.Errorf("%s: implementation %q has no configuration renderer yet", r.Name, r.Implementation)
		}
		if r.Profile == "" || r.Version == "" || r.Default.Name == "" {
			t.Errorf("%s: needs a profile, a version and a default handler", r.Name)
		}
		if r.Embedded == nil && r.Node == nil {
			t.Errorf("%s: neither embedded nor a node runtime", r.Name)
		}
		names := map[string]bool{}
		for _, n := range r.HandlerNames() {
			if names[n] {
				t.Errorf("%s: handler %s twice", r.Name, n)
			}
			names[n] = true
		}
		if e := r.Embedded; e != nil {
			if _, ok := r.Handler(e.Handler); !ok {
				t.Errorf("%s: the embedded handler %q is not one of %v", r.Name, e.Handler, r.HandlerNames())
			}
			if r.Implementation == Containerd && e.ConfigVersion != 2 && e.ConfigVersion != 3 {
				t.Errorf("%s: containerd config version %d", r.Name, e.ConfigVersion)
			}
			checkBinaries(t, r, "embedded", e.Programs, nil)
		}
		if n := r.Node; n != nil {
			for class, h := range n.RuntimeClasses {
				if _, ok := r.Handler(h); !ok || h == "" {
					t.Errorf("%s: RuntimeClass %s's handler %q is not one of %v", r.Name, class, h, r.HandlerNames())
				}
			}
			checkBinaries(t, r, "node", n.Programs, n.Packages)
		}
	}
	if _, err := Lookup("containerd-0.1"); err == nil || !strings.Contains(err.Error(), "containerd-2") {
		t.Errorf("an unknown runtime: %v", err)
	}
}

func checkBinaries(t *testing.T, r Runtime, where string, programs []gobuild.Program, packages []string) {
	t.Helper()
	if len(programs) == 0 {
		return // the host's or Debian's packages, on PATH
	}
	built := map[string]bool{}
	for _, p := range programs {
		built[p.Binary] = true
	}
	for _, h := range append([]Handler{r.Default}, r.Handlers...) {
		if !h.HostBinary && !built[h.Binary] {
			t.Errorf("%s (%s): handler %s's %s is neither built nor the host's", r.Name, where, h.Name, h.Binary)
		}
	}
}

// The handlers' tables, as containerd reads them, in both formats.
func TestContainerdTOML(t *testing.T) {
	p := Paths{Binary: "/b/runsc", Root: "/r", ShimConfig: "/etc/containerd/runsc.toml"}
	want2 := `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
  runtime_type = "io.containerd.runsc.v1"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc.options]
    TypeUrl = "io.containerd.runsc.v1.options"
    ConfigPath = "/etc/containerd/runsc.toml"
`
	if got := Runsc.ContainerdTOML(2, p, ""); got != want2 {
		t.Errorf("runsc, version 2:\n%s\nwant\n%s", got, want2)
	}
	if got := Runsc.ShimConfigTOML(p); got != "binary_name = \"/b/runsc\"\nroot = \"/r\"\n" {
		t.Errorf("runsc.toml:\n%s", got)
	}
	want3 := `  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.crun]
    runtime_type = "io.containerd.runc.v2"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.crun.options]
      BinaryName = "/w/ectest-crun"
      SystemdCgroup = true
`
	// No Root: the option is left out, the OCI runtime's default applies.
	if got := Crun.ContainerdTOML(3, Paths{Binary: "/w/ectest-crun", SystemdCgroup: true}, "  "); got != want3 {
		t.Errorf("crun, version 3:\n%s\nwant\n%s", got, want3)
	}
	if Runc.ShimConfigTOML(p) != "" {
		t.Error("runc has no shim configuration")
	}
}

// The catalog is a leaf: data any layer may read, importing no framework
// or kind package.
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skip("go list:", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/ectest/ectest/framework") || strings.HasPrefix(dep, "github.com/ectest/ectest/kind") {
			t.Errorf("runtimes/catalog depends on %s", dep)
		}
	}
}
