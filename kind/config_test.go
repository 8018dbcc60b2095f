package kind

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/kind/nodeimage"
	"sigs.k8s.io/yaml"
)

func mustVersion(t *testing.T, s string) nodeimage.Version {
	t.Helper()
	v, err := nodeimage.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConfigForBuiltNodeImage(t *testing.T) {
	cfg := Config(ConfigOptions{Name: "ectest", NodeImage: "ectest/kind-node:v1.36.3-abc", Kubernetes: mustVersion(t, "v1.36.3"),
		CgroupV1: true, AuditPolicyDir: "/c/policy", AuditLogDir: "/c/audit", OwnCNI: true})
	var parsed map[string]any
	if err := yaml.UnmarshalStrict([]byte(cfg), &parsed); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, cfg)
	}
	for _, want := range []string{
		"apiVersion: kind.x-k8s.io/v1alpha4", "disableDefaultCNI: true", "image: ectest/kind-node:v1.36.3-abc",
		`podSubnet: "198.19.128.0/18"`, "hostPath: /c/audit", "containerPath: /var/log/kubernetes/audit",
		"  - name: audit-policy-file\n      value: \"/etc/kubernetes/audit/policy.yaml\"", // v1beta4: a list
		"failCgroupV1: false",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	// Each kubeadm patch must itself be YAML.
	patches := parsed["kubeadmConfigPatches"].([]any)
	for _, p := range patches {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(p.(string)), &m); err != nil || m["kind"] == nil {
			t.Errorf("patch is not a kubeadm object: %v\n%s", err, p)
		}
	}
}

func TestConfigForStockImageAndOlderVersions(t *testing.T) {
	cfg := Config(ConfigOptions{Name: "x", NodeImage: "kindest/node:v1.33.1", Kubernetes: mustVersion(t, "v1.33.1"),
		CgroupV1: true, AuditPolicyDir: "/p", AuditLogDir: "/l"})
	if strings.Contains(cfg, "disableDefaultCNI") {
		t.Error("a stock kindest/node brings kindnetd: keep kind's CNI")
	}
	if !strings.Contains(cfg, `    audit-policy-file: "/etc/kubernetes/audit/policy.yaml"`) {
		t.Errorf("v1beta3 (kind's choice before 1.36) takes extraArgs as a map:\n%s", cfg)
	}
	if strings.Contains(cfg, "failCgroupV1") {
		t.Error("failCgroupV1 is only for kubelets from 1.35")
	}
	if c2 := Config(ConfigOptions{Name: "x", Kubernetes: mustVersion(t, "v1.36.0"), AuditPolicyDir: "/p", AuditLogDir: "/l"}); strings.Contains(c2, "failCgroupV1") {
		t.Error("failCgroupV1 only on cgroup v1 hosts")
	}
}

func TestAuditPolicyIsValidYAML(t *testing.T) {
	var p map[string]any
	if err := yaml.UnmarshalStrict(auditPolicy, &p); err != nil || p["kind"] != "Policy" {
		t.Fatalf("audit policy: %v", err)
	}
	if !strings.Contains(string(auditPolicy), "pods/ephemeralcontainers") {
		t.Error("the policy must record the subresource")
	}
}

func TestConfigWithCRIProxy(t *testing.T) {
	cfg := Config(ConfigOptions{Name: "m", NodeImage: "ectest/kind-node:x", Kubernetes: mustVersion(t, "v1.36.3"), CgroupV1: true,
		AuditPolicyDir: "/p", AuditLogDir: "/l", OwnCNI: true, CRIProxyDir: "/state/criproxy"})
	var parsed map[string]any
	if err := yaml.UnmarshalStrict([]byte(cfg), &parsed); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, cfg)
	}
	for _, want := range []string{
		"hostPath: /state/criproxy\n    containerPath: /opt/ectest/criproxy\n    readOnly: true",
		"criSocket: unix:///run/ectest-criproxy/criproxy.sock",
		"containerRuntimeEndpoint: unix:///run/ectest-criproxy/criproxy.sock",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	// One KubeletConfiguration patch carries both kubelet settings.
	if strings.Count(cfg, "kind: KubeletConfiguration") != 1 || !strings.Contains(cfg, "failCgroupV1: false") {
		t.Errorf("kubelet patches:\n%s", cfg)
	}
	if plain := Config(ConfigOptions{Name: "m", Kubernetes: mustVersion(t, "v1.36.3"), AuditPolicyDir: "/p", AuditLogDir: "/l"}); strings.Contains(plain, "criproxy") {
		t.Errorf("no proxy without a fault:\n%s", plain)
	}
}

func TestConfigWithWorkers(t *testing.T) {
	cfg := Config(ConfigOptions{Name: "ectest-skew", NodeImage: "ectest/kind-node:cp", Kubernetes: mustVersion(t, "v1.37.1"),
		CgroupV1: true, AuditPolicyDir: "/p", AuditLogDir: "/l", OwnCNI: true,
		Labels: map[string]string{LabelKubeletVersion: "v1.37.1"},
		Workers: []WorkerConfig{
			{Image: "ectest/kind-node:w1", Labels: map[string]string{LabelKubeletVersion: "v1.36.4"}, CNIConfig: "/s/cni/worker-1.conflist"},
			{Image: "ectest/kind-node:w2", Labels: map[string]string{LabelKubeletVersion: "v1.34.10"}, CNIConfig: "/s/cni/worker-2.conflist"},
		}})
	var parsed struct {
		Nodes []struct {
			Role        string            `json:"role"`
			Image       string            `json:"image"`
			Labels      map[string]string `json:"labels"`
			ExtraMounts []struct {
				HostPath      string `json:"hostPath"`
				ContainerPath string `json:"containerPath"`
				ReadOnly      bool   `json:"readOnly"`
			} `json:"extraMounts"`
		} `json:"nodes"`
	}
	if err := yaml.Unmarshal([]byte(cfg), &parsed); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, cfg)
	}
	if len(parsed.Nodes) != 3 || parsed.Nodes[0].Role != "control-plane" || parsed.Nodes[0].Labels[LabelKubeletVersion] != "v1.37.1" {
		t.Fatalf("nodes: %+v\n%s", parsed.Nodes, cfg)
	}
	w := parsed.Nodes[2]
	if w.Role != "worker" || w.Image != "ectest/kind-node:w2" || w.Labels[LabelKubeletVersion] != "v1.34.10" ||
		len(w.ExtraMounts) != 1 || w.ExtraMounts[0].HostPath != "/s/cni/worker-2.conflist" || w.ExtraMounts[0].ContainerPath != nodeimage.NodeCNIPath || !w.ExtraMounts[0].ReadOnly {
		t.Errorf("second worker: %+v\n%s", w, cfg)
	}
	if strings.Count(cfg, "kubeadmConfigPatches:") != 1 {
		t.Errorf("patches are cluster-wide, given once:\n%s", cfg)
	}
}

func TestTopologies(t *testing.T) {
	cp := mustVersion(t, nodeimage.DefaultKubernetesVersion)
	r, err := nodeimage.KnownReleases()
	if err != nil {
		t.Fatal(err)
	}
	if w, err := TopologySingle.Workers(cp); err != nil || len(w) != 0 {
		t.Errorf("single: %v, %v", w, err)
	}
	w, err := TopologySkew.Workers(cp)
	if err != nil || len(w) != len(r.SkewKubelets) {
		t.Fatalf("skew: %v, %v (versions.yaml: %v)", w, err, r.SkewKubelets)
	}
	pair, err := TopologySkewPair.Workers(cp)
	if err != nil || len(pair) != 1 || pair[0].Minor != cp.Minor-1 {
		t.Errorf("skew-pair is one worker of N-1: %v, %v", pair, err)
	}
	// A control plane older than a skew kubelet breaks the skew policy.
	if _, err := TopologySkew.Workers(mustVersion(t, "v1.34.10")); err == nil || !strings.Contains(err.Error(), "skew policy") {
		t.Errorf("kubelets newer than the control plane accepted: %v", err)
	}
	for _, s := range []string{"", "single", "skew", "skew-pair"} {
		if _, err := ParseTopology(s); err != nil {
			t.Errorf("ParseTopology(%q): %v", s, err)
		}
	}
	if _, err := ParseTopology("skewed"); err == nil {
		t.Error("unknown topology accepted")
	}
	if TopologySingle.DefaultName() != DefaultName || TopologySkew.DefaultName() == TopologySkewPair.DefaultName() || TopologySkew.DefaultName() == DefaultName {
		t.Error("each topology needs its own cluster name")
	}
	if nodeSubnet(0) != nodeimage.FirstNodeSubnet || nodeSubnet(4) != "198.19.132.0/24" {
		t.Errorf("subnets %s %s", nodeSubnet(0), nodeSubnet(4))
	}
}

// A CRI-O node's kubelet and kubeadm (init and, with workers, join) talk
// to CRI-O's socket, not containerd's, which kind's own config names.
func TestConfigWithCRISocket(t *testing.T) {
	rt, err := nodeimage.LookupNodeRuntime("cri-o")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config(ConfigOptions{Name: "c", NodeImage: "ectest/kind-node:x", Kubernetes: mustVersion(t, "v1.37.1"), CgroupV1: true,
		AuditPolicyDir: "/p", AuditLogDir: "/l", OwnCNI: true, CRISocket: rt.CRISocket(),
		Workers: []WorkerConfig{{Image: "ectest/kind-node:w"}}})
	var parsed map[string]any
	if err := yaml.UnmarshalStrict([]byte(cfg), &parsed); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, cfg)
	}
	for _, want := range []string{
		"kind: InitConfiguration\n  nodeRegistration:\n    criSocket: unix:///var/run/crio/crio.sock",
		"kind: JoinConfiguration\n  nodeRegistration:\n    criSocket: unix:///var/run/crio/crio.sock",
		"containerRuntimeEndpoint: unix:///var/run/crio/crio.sock",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Count(cfg, "kind: KubeletConfiguration") != 1 || !strings.Contains(cfg, "failCgroupV1: false") {
		t.Errorf("kubelet patches:\n%s", cfg)
	}
	cd, _ := nodeimage.LookupNodeRuntime("")
	if cd.CRISocket() != "unix:///run/containerd/containerd.sock" {
		t.Errorf("containerd's socket: %s", cd.CRISocket())
	}
}
