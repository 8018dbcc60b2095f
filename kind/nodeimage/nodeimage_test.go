package nodeimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/runtimes/catalog"
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

func TestImageList(t *testing.T) {
	l, err := ParseImageList(`registry.k8s.io/kube-apiserver:v1.36.3
registry.k8s.io/kube-controller-manager:v1.36.3
registry.k8s.io/kube-scheduler:v1.36.3
registry.k8s.io/kube-proxy:v1.36.3
registry.k8s.io/coredns/coredns:v1.13.1
registry.k8s.io/pause:3.10.1
registry.k8s.io/etcd:3.6.6-0
`)
	if err != nil {
		t.Fatal(err)
	}
	if l["coredns"] != "registry.k8s.io/coredns/coredns:v1.13.1" || l.Tag("etcd") != "3.6.6-0" || l.Tag("pause") != "3.10.1" {
		t.Errorf("list: %v", l)
	}
	if got := EtcdModuleVersion(l.Tag("etcd")); got != "v3.6.6" {
		t.Errorf("etcd module version %s", got)
	}
	if _, err := ParseImageList("registry.k8s.io/kube-apiserver:v1.36.3\n"); err == nil || !strings.Contains(err.Error(), "no ") {
		t.Errorf("incomplete list accepted: %v", err)
	}
}

func TestStagingModulesAndGoMod(t *testing.T) {
	mods := StagingModules(`module k8s.io/kubernetes
replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	github.com/x/y => github.com/x/y v1.0.0
)
`)
	if strings.Join(mods, ",") != "k8s.io/api,k8s.io/client-go" {
		t.Errorf("StagingModules = %v", mods)
	}
	gm := throwawayGoMod(Version{1, 36, 3}, mods)
	if !strings.Contains(gm, "require k8s.io/kubernetes v1.36.3") || !strings.Contains(gm, "k8s.io/api => k8s.io/api v0.36.3") {
		t.Errorf("go.mod:\n%s", gm)
	}
	if f := ldflags(Version{1, 36, 3}); !strings.Contains(f, "k8s.io/component-base/version.gitVersion=v1.36.3") || !strings.Contains(f, "k8s.io/client-go/pkg/version.gitMinor=36") {
		t.Errorf("ldflags: %s", f)
	}
}

func TestCacheKeys(t *testing.T) {
	a := BinariesKey(Version{1, 36, 3}, "go1.26.8", "amd64")
	if a != BinariesKey(Version{1, 36, 3}, "go1.26.8", "amd64") {
		t.Error("keys must be stable")
	}
	for _, other := range []string{BinariesKey(Version{1, 36, 2}, "go1.26.8", "amd64"), BinariesKey(Version{1, 36, 3}, "go1.27.0", "amd64"), BinariesKey(Version{1, 36, 3}, "go1.26.8", "arm64")} {
		if other == a {
			t.Error("a changed input must change the key")
		}
	}
	if !strings.HasPrefix(a, "kubernetes-v1.36.3-") {
		t.Errorf("key %s should say what it is", a)
	}
	r1 := RootFSKey("bookworm", "http://mirror/debian", NodePackages)
	if r1 == RootFSKey("bookworm", "http://other/debian", NodePackages) || r1 == RootFSKey("bookworm", "http://mirror/debian", append(NodePackages, "vim")) {
		t.Error("rootfs key must follow mirror and packages")
	}
}

func TestMirrorFromSources(t *testing.T) {
	deb822 := "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\nComponents: main\n"
	if m := MirrorFromSources(deb822, "bookworm"); m != "http://mirror.example/debian" {
		t.Errorf("deb822: %q", m)
	}
	oneLine := "deb [arch=amd64 signed-by=/x.gpg] https://other.example/apt cloud-sdk main\ndeb http://mirror2.example/debian bookworm main contrib\n"
	if m := MirrorFromSources(oneLine, "bookworm"); m != "http://mirror2.example/debian" {
		t.Errorf("one-line: %q", m)
	}
	if m := MirrorFromSources(oneLine, "trixie"); m != "" {
		t.Errorf("no trixie: %q", m)
	}
}

func TestNodeContainerdConfig(t *testing.T) {
	kindCfg := "version = 2\n\n[proxy_plugins]\n# fuse\n[proxy_plugins.\"fuse-overlayfs\"]\n  type = \"snapshot\"\n  address = \"/run/containerd-fuse-overlayfs.sock\"\n\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n  base_runtime_spec = \"/etc/containerd/cri-base.json\"\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = \"registry.k8s.io/pause:3.10\"\n  restrict_oom_score_adj = false\n"
	c := NodeContainerdConfig(kindCfg, "registry.k8s.io/pause:3.10.1", NodeRuntimes[0])
	for _, bad := range []string{"fuse-overlayfs", "base_runtime_spec", "restrict_oom_score_adj = false", "pause:3.10\""} {
		if strings.Contains(c, bad) {
			t.Errorf("config still has %q:\n%s", bad, c)
		}
	}
	for _, want := range []string{`sandbox_image = "registry.k8s.io/pause:3.10.1"`, "restrict_oom_score_adj = true", `config_path = "/etc/containerd/certs.d"`} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, "runsc") {
		t.Errorf("containerd-2 has no gVisor handler:\n%s", c)
	}
	gv, err := LookupNodeRuntime("containerd-2-gvisor")
	if err != nil {
		t.Fatal(err)
	}
	c = NodeContainerdConfig(kindCfg, "registry.k8s.io/pause:3.10.1", gv)
	if !strings.Contains(c, `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]`) || !strings.Contains(c, `runtime_type = "io.containerd.runsc.v1"`) {
		t.Errorf("gVisor's handler runsc is missing:\n%s", c)
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
		keys[RootFSKey("bookworm", "http://m", rt.packages())+rt.key()] = true
		tags[rt.key()] = true
		if rt.OCIRuntimes[""] != "runc" {
			t.Errorf("%s: the default handler is runc", rt.Name)
		}
		for class, h := range rt.RuntimeClasses {
			if rt.OCIRuntimes[h] == "" || rt.Handler(class) != h {
				t.Errorf("%s: RuntimeClass %s's handler %s has no OCI runtime", rt.Name, class, h)
			}
		}
		debian := strings.Contains(strings.Join(rt.packages(), ","), "containerd")
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
	if nodePath("runc") != "usr/local/sbin/runc" || nodePath("containerd") != "usr/local/bin/containerd" {
		t.Error("kind's places: runc in /usr/local/sbin, the rest in /usr/local/bin")
	}
}

func TestMissingLibraries(t *testing.T) {
	// This test binary links nothing dynamically when built without cgo;
	// a dynamically linked system binary needs its libraries in the root.
	bin := ""
	for _, b := range []string{"/bin/ls", "/usr/bin/ls"} {
		if _, err := os.Stat(b); err == nil {
			bin = b
			break
		}
	}
	if bin == "" {
		t.Skip("no /bin/ls to check")
	}
	if missing, err := missingLibraries("/", strings.TrimPrefix(bin, "/")); err != nil || len(missing) != 0 {
		t.Errorf("the host's own root has what its ls needs: %v %v", missing, err)
	}
	root := t.TempDir()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ls"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	missing, err := missingLibraries(root, "ls")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(missing, " "), "libc.so") {
		t.Errorf("an empty root lacks libc: %v", missing)
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

func TestKubeletSkewAndComponentKeys(t *testing.T) {
	cp := Version{1, 37, 1}
	for _, ok := range []Version{{1, 37, 1}, {1, 36, 4}, {1, 34, 10}, {1, 37, 0}} {
		if err := CheckKubeletSkew(cp, ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []Version{{1, 33, 13}, {1, 38, 0}, {1, 37, 2}} {
		if err := CheckKubeletSkew(cp, bad); err == nil {
			t.Errorf("kubelet %s with server %s accepted", bad, cp)
		}
	}
	full := ComponentsKey(cp, "go1.26.8", "amd64", Components)
	if full != BinariesKey(cp, "go1.26.8", "amd64") {
		t.Error("the full set keeps the key of existing caches")
	}
	kubelet := ComponentsKey(cp, "go1.26.8", "amd64", []string{"kubelet"})
	if kubelet == full || !strings.HasPrefix(kubelet, "kubernetes-v1.37.1-kubelet-") {
		t.Errorf("kubelet-only key %s (full %s)", kubelet, full)
	}
	if NodeCNI(FirstNodeSubnet) != nodeCNI || !strings.Contains(NodeCNI("198.19.130.0/24"), `"subnet": "198.19.130.0/24"`) {
		t.Error("NodeCNI")
	}
}

// A handler new to the catalog that the runc shim runs needs no code in
// the node image: its table follows from the catalog.
func TestNodeNewRuncLikeHandler(t *testing.T) {
	youki := catalog.Runc
	youki.Name, youki.Binary, youki.StateDir = "youki", "youki", "youki"
	rt := NodeRuntime{Name: "x", Runtime: catalog.Runtime{Default: catalog.Runc, Handlers: []catalog.Handler{youki}}}
	c := NodeContainerdConfig("version = 2\n", "p", rt)
	want := `
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.youki]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.youki.options]
    BinaryName = "/usr/local/bin/youki"
    Root = "/run/containerd/youki"
    SystemdCgroup = true
`
	if !strings.HasSuffix(c, want) {
		t.Errorf("node config:\n%s\nwant it to end with\n%s", c, want)
	}
	if len(rt.shimConfigs()) != 0 {
		t.Error("no shim config for a runc-like handler")
	}
}
