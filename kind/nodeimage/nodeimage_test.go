package nodeimage

import (
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	v, err := ParseVersion("v1.36.3")
	if err != nil || v.String() != "v1.36.3" || v.StagingVersion() != "v0.36.3" || !v.AtLeast(35) || v.AtLeast(37) {
		t.Errorf("ParseVersion = %+v, %v", v, err)
	}
	if v, err := ParseVersion("1.29.0"); err != nil || v.Minor != 29 {
		t.Errorf("without v: %+v, %v", v, err)
	}
	for _, bad := range []string{"v1.28.9", "v1.36", "latest", "v2.0.0", "v1.36.3-rc.1"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
	if _, err := ParseVersion(DefaultKubernetesVersion); err != nil {
		t.Errorf("the default version must parse: %v", err)
	}
}

func TestKnownReleases(t *testing.T) {
	r, err := KnownReleases()
	if err != nil {
		t.Fatal(err)
	}
	n, _ := ParseVersion(r.Newest)
	if len(r.SkewKubelets) != 4 || r.SkewKubelets[0] != r.Newest {
		t.Errorf("skew kubelets %v: want N..N-3 starting at %s", r.SkewKubelets, r.Newest)
	}
	for i, s := range r.SkewKubelets {
		if v, _ := ParseVersion(s); v.Minor != n.Minor-i {
			t.Errorf("skew kubelet %d is %s, want minor %d", i, s, n.Minor-i)
		}
	}
	if len(r.APIServers) < 4 || r.APIServers[len(r.APIServers)-1] != r.Newest {
		t.Errorf("API servers %v: want at least four, up to %s", r.APIServers, r.Newest)
	}
}

func TestNodeRuntimes(t *testing.T) {
	def, err := LookupNodeRuntime("")
	if err != nil || def.Name != DefaultNodeRuntime || DefaultNodeRuntime != "containerd-2" {
		t.Fatalf("default node runtime: %+v, %v", def, err)
	}
	if _, err := LookupNodeRuntime("containerd-9"); err == nil || !strings.Contains(err.Error(), "containerd-1.6") {
		t.Errorf("an unknown node runtime must be refused, naming the known ones: %v", err)
	}
	keys, tags := map[string]bool{}, map[string]bool{}
	for _, rt := range NodeRuntimes {
		keys[strings.Join(rt.RootFSPackages(), ",")+"|"+rt.Key()] = true
		tags[rt.Key()] = true
		if rt.OCIRuntimes[""] != "runc" {
			t.Errorf("%s: the default handler is runc", rt.Name)
		}
		for class, h := range rt.RuntimeClasses {
			if rt.OCIRuntimes[h] == "" || rt.Handler(class) != h {
				t.Errorf("%s: RuntimeClass %s's handler %s has no OCI runtime", rt.Name, class, h)
			}
		}
		debian := strings.Contains(strings.Join(rt.RootFSPackages(), ","), "containerd")
		if debian == (len(rt.Programs) > 0) {
			t.Errorf("%s: either Debian's containerd or built programs, not both or neither", rt.Name)
		}
	}
	if len(tags) != len(NodeRuntimes) {
		t.Error("each node runtime must have its own key")
	}
	gv, _ := LookupNodeRuntime("containerd-2-gvisor")
	if gv.Handler(GVisorRuntimeClass) != "runsc" || strings.Join(gv.RuntimeClassNames(), ",") != "gvisor" {
		t.Errorf("gvisor: %+v", gv.RuntimeClasses)
	}
	if NodePath("runc") != "usr/local/sbin/runc" || NodePath("containerd") != "usr/local/bin/containerd" {
		t.Error("kind's places: runc in /usr/local/sbin, the rest in /usr/local/bin")
	}
}

// A CRI-O node's files: crio.conf points at the node's programs (the runc
// wrapper, conmon, pinns) and the local pause image, systemd cgroups as
// kind's kubelet has them; the import unit copies every image with skopeo
// before CRI-O starts.
func TestCrioNode(t *testing.T) {
	rt, err := LookupNodeRuntime("cri-o")
	if err != nil || !rt.IsCrio() || rt.OCIRuntimes[""] != "runc" {
		t.Fatalf("cri-o: %+v, %v", rt, err)
	}
	if strings.Join(rt.Packages, ",") != "conmon,skopeo" {
		t.Errorf("packages: %v", rt.Packages)
	}
	files := NodeCrioFiles("registry.k8s.io/pause:3.10.1", []string{"registry.k8s.io/pause:3.10.1", "registry.k8s.io/etcd:3.6.5-0"})
	conf := files["etc/crio/crio.conf"]
	for _, want := range []string{
		`cgroup_manager = "systemd"`, `runtime_path = "/usr/local/bin/ectest-runc-oomclamp"`, `monitor_path = "/usr/bin/conmon"`,
		`pinns_path = "/usr/local/bin/pinns"`, `pause_image = "registry.k8s.io/pause:3.10.1"`, `listen = "/var/run/crio/crio.sock"`,
		`storage_driver = "overlay"`, `default_runtime = "runc"`, "[crio.runtime.runtimes.runc]",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("crio.conf lacks %s:\n%s", want, conf)
		}
	}
	if files["usr/local/bin/ectest-runc-oomclamp.real"] != "/usr/local/sbin/runc\n" {
		t.Errorf("the wrapper's real runc: %q", files["usr/local/bin/ectest-runc-oomclamp.real"])
	}
	imp := files["etc/systemd/system/ectest-import-images.service"]
	if !strings.Contains(imp, "Before=crio.service") || strings.Count(imp, "skopeo copy") != 2 ||
		!strings.Contains(imp, "docker-archive:/kind/images/images.tar:registry.k8s.io/etcd:3.6.5-0 containers-storage:registry.k8s.io/etcd:3.6.5-0") {
		t.Errorf("import unit:\n%s", imp)
	}
	if got := NodeRegistryConf("198.18.0.1:5055"); got != "[[registry]]\nlocation = \"198.18.0.1:5055\"\ninsecure = true\n" {
		t.Errorf("registry drop-in: %q", got)
	}
}
