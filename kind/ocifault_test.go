package kind

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/fixtures/ocifault"
	"sigs.k8s.io/yaml"
)

// The wrapper reads what kind stages: same file names, same configuration.
func TestStageOCIFaultAgreesWithTheWrapper(t *testing.T) {
	if ociFaultProgram != ocifault.Name || ociFaultConfigFile != ocifault.ConfigFile || ociFaultFaultFile != ocifault.FaultFile {
		t.Fatal("kind's names of the wrapper's files differ from fixtures/ocifault's")
	}
	bin := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := stageOCIFault(filepath.Join(t.TempDir(), "ocifault"), OCIFault{Fault: "oci-shm-private", Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ocifault.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var cfg ocifault.Config
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.Runc != "runc" || cfg.StateDir != NodeOCIFaultDir+"/state" {
		t.Errorf("config %s: %+v %v", data, cfg, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "state")); err != nil || !fi.IsDir() {
		t.Error("no state directory")
	}
	if fi, err := os.Lstat(filepath.Join(dir, ocifault.Name)); err != nil || !fi.Mode().IsRegular() {
		t.Error("the program must be a copy (a link to a host path is dangling in the node)")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ocifault.FaultFile)); string(b) != "oci-shm-private\n" {
		t.Errorf("fault file %q", b)
	}
	if _, err := ocifault.Lookup("oci-shm-private"); err != nil {
		t.Error(err)
	}
}

func TestConfigWithOCIFault(t *testing.T) {
	cfg := Config(ConfigOptions{Name: "x", Kubernetes: mustVersion(t, "v1.37.1"), AuditPolicyDir: "/p", AuditLogDir: "/l", CRIProxyDir: "/c", OCIFaultDir: "/o"})
	var parsed struct {
		Nodes []struct {
			ExtraMounts []struct {
				HostPath, ContainerPath string
				ReadOnly                bool
			} `json:"extraMounts"`
		} `json:"nodes"`
		ContainerdConfigPatches []string `json:"containerdConfigPatches"`
	}
	if err := yaml.Unmarshal([]byte(cfg), &parsed); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, cfg)
	}
	found := false
	for _, m := range parsed.Nodes[0].ExtraMounts {
		if m.HostPath == "/o" {
			found = m.ContainerPath == NodeOCIFaultDir && !m.ReadOnly
		}
	}
	if !found {
		t.Errorf("the wrapper's directory is not mounted writable at %s:\n%s", NodeOCIFaultDir, cfg)
	}
	if len(parsed.ContainerdConfigPatches) != 1 || !strings.Contains(parsed.ContainerdConfigPatches[0],
		`[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]`+"\n  BinaryName = \"/opt/ectest/ocifault/ectest-ocifault\"") {
		t.Errorf("containerd patch: %q", parsed.ContainerdConfigPatches)
	}
	if strings.Contains(Config(ConfigOptions{Name: "x", Kubernetes: mustVersion(t, "v1.37.1"), AuditPolicyDir: "/p", AuditLogDir: "/l"}), "containerdConfigPatches") {
		t.Error("a containerd patch without the wrapper")
	}
}
