package nodebuild

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/kind/nodeimage"
	"github.com/ectest/ectest/runtimes/catalog"
)

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
	gm := throwawayGoMod(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}, mods)
	if !strings.Contains(gm, "require k8s.io/kubernetes v1.36.3") || !strings.Contains(gm, "k8s.io/api => k8s.io/api v0.36.3") {
		t.Errorf("go.mod:\n%s", gm)
	}
	if f := ldflags(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}); !strings.Contains(f, "k8s.io/component-base/version.gitVersion=v1.36.3") || !strings.Contains(f, "k8s.io/client-go/pkg/version.gitMinor=36") {
		t.Errorf("ldflags: %s", f)
	}
}

func TestCacheKeys(t *testing.T) {
	a := BinariesKey(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}, "go1.26.8", "amd64")
	if a != BinariesKey(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}, "go1.26.8", "amd64") {
		t.Error("keys must be stable")
	}
	for _, other := range []string{BinariesKey(nodeimage.Version{Major: 1, Minor: 36, Patch: 2}, "go1.26.8", "amd64"), BinariesKey(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}, "go1.27.0", "amd64"), BinariesKey(nodeimage.Version{Major: 1, Minor: 36, Patch: 3}, "go1.26.8", "arm64")} {
		if other == a {
			t.Error("a changed input must change the key")
		}
	}
	if !strings.HasPrefix(a, "kubernetes-v1.36.3-") {
		t.Errorf("key %s should say what it is", a)
	}
	r1 := RootFSKey("bookworm", "http://mirror/debian", nodeimage.NodePackages)
	if r1 == RootFSKey("bookworm", "http://other/debian", nodeimage.NodePackages) || r1 == RootFSKey("bookworm", "http://mirror/debian", append(nodeimage.NodePackages, "vim")) {
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
	c := nodeimage.NodeContainerdConfig(kindCfg, "registry.k8s.io/pause:3.10.1", nodeimage.NodeRuntimes[0])
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
	gv, err := nodeimage.LookupNodeRuntime("containerd-2-gvisor")
	if err != nil {
		t.Fatal(err)
	}
	c = nodeimage.NodeContainerdConfig(kindCfg, "registry.k8s.io/pause:3.10.1", gv)
	if !strings.Contains(c, `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]`) || !strings.Contains(c, `runtime_type = "io.containerd.runsc.v1"`) {
		t.Errorf("gVisor's handler runsc is missing:\n%s", c)
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

func TestKubeletSkewAndComponentKeys(t *testing.T) {
	cp := nodeimage.Version{Major: 1, Minor: 37, Patch: 1}
	for _, ok := range []nodeimage.Version{{Major: 1, Minor: 37, Patch: 1}, {Major: 1, Minor: 36, Patch: 4}, {Major: 1, Minor: 34, Patch: 10}, {Major: 1, Minor: 37, Patch: 0}} {
		if err := nodeimage.CheckKubeletSkew(cp, ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []nodeimage.Version{{Major: 1, Minor: 33, Patch: 13}, {Major: 1, Minor: 38, Patch: 0}, {Major: 1, Minor: 37, Patch: 2}} {
		if err := nodeimage.CheckKubeletSkew(cp, bad); err == nil {
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
	if nodeimage.NodeCNI(nodeimage.FirstNodeSubnet) != nodeCNI || !strings.Contains(nodeimage.NodeCNI("198.19.130.0/24"), `"subnet": "198.19.130.0/24"`) {
		t.Error("NodeCNI")
	}
}

// A handler new to the catalog that the runc shim runs needs no code in
// the node image: its table follows from the catalog.
func TestNodeNewRuncLikeHandler(t *testing.T) {
	youki := catalog.Runc
	youki.Name, youki.Binary, youki.StateDir = "youki", "youki", "youki"
	rt := nodeimage.NodeRuntime{Name: "x", Runtime: catalog.Runtime{Default: catalog.Runc, Handlers: []catalog.Handler{youki}}}
	c := nodeimage.NodeContainerdConfig("version = 2\n", "p", rt)
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
	if len(rt.ShimConfigs()) != 0 {
		t.Error("no shim config for a runc-like handler")
	}
}

// A build's stages are children of it, and every one ends with "done in"
// or "failed after", the build too.
func TestStagesEndInsideTheBuild(t *testing.T) {
	var lines []string
	b := &Builder{Log: func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }}
	err := func() (err error) {
		defer b.enclose(b.begin("node image x", "stages"))(&err)
		if b.stage("Kubernetes binaries", "about 8 min")(nil) != nil {
			t.Fatal("done changed a nil error")
		}
		return b.stage("debootstrap", "about 3 min")(errors.New("exit status 1\nmore"))
	}()
	if err == nil || b.step != nil {
		t.Fatalf("err %v, step left %v", err, b.step)
	}
	want := []string{"node image x: started (stages)", "Kubernetes binaries: started (about 8 min cold)", "Kubernetes binaries: done in 0s",
		"debootstrap: started (about 3 min cold)", "debootstrap: failed after 0s: exit status 1 ...", "node image x: failed after 0s: exit status 1 ..."}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("logged:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
