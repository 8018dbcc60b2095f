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
