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
