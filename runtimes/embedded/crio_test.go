package embedded

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// CRI-O's files keep everything under the run directory and name the
// project's pinns, the runc wrapper and runc's state where cleanupDir
// looks for it.
func TestCrioFiles(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	o := Options{RegistryAddr: "127.0.0.1:5000", SandboxImage: "127.0.0.1:5000/ectest/pause:latest", CNIBinDir: "/usr/lib/cni"}
	files := crioFiles(l, o, l.dir+"/ectest-runc-oomclamp", "", "/usr/bin/conmon")
	conf := files[l.crioConfig()]
	for _, want := range []string{
		`root = "/var/lib/ectest/embedded/abc/storage"`,
		`runroot = "/var/lib/ectest/embedded/abc/storage-run"`,
		`listen = "/var/lib/ectest/embedded/abc/crio.sock"`,
		`pinns_path = "/var/lib/ectest/embedded/abc/pinns"`,
		`namespaces_dir = "/var/lib/ectest/embedded/abc/ns"`,
		`runtime_path = "/var/lib/ectest/embedded/abc/ectest-runc-oomclamp"`,
		`runtime_root = "/var/lib/ectest/embedded/abc/` + "runc/k8s.io" + `"`,
		`monitor_path = "/usr/bin/conmon"`,
		`cgroup_manager = "cgroupfs"`,
		`pause_image = "127.0.0.1:5000/ectest/pause:latest"`,
		`network_dir = "/var/lib/ectest/embedded/abc/cni"`,
		`plugin_dirs = ["/usr/lib/cni"]`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("crio.conf lacks %s:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "runtimes.crun]") {
		t.Errorf("crio.conf has a crun table without the crun handler:\n%s", conf)
	}
	// cri-o-crun: crun's table, its runtime the crun chain, its state where
	// cleanupDir looks for the crun handler's.
	withCrun := crioFiles(l, o, l.dir+"/ectest-runc-oomclamp", l.crioCrunClampDir()+"/ectest-runc-oomclamp", "/usr/bin/conmon")[l.crioConfig()]
	for _, want := range []string{
		"[crio.runtime.runtimes.crun]",
		`runtime_path = "/var/lib/ectest/embedded/abc/crun-clamp/ectest-runc-oomclamp"`,
		`runtime_root = "/var/lib/ectest/embedded/abc/crun/k8s.io"`,
	} {
		if !strings.Contains(withCrun, want) {
			t.Errorf("crio.conf with crun lacks %s:\n%s", want, withCrun)
		}
	}
	if strings.Contains(conf, "signature_policy =") {
		t.Errorf("crio.conf sets signature_policy (CRI-O then refuses containers without user_specified_image)")
	}
	if got := files[l.crioRegistries()]; !strings.Contains(got, `location = "127.0.0.1:5000"`) || !strings.Contains(got, "insecure = true") {
		t.Errorf("registries.conf: %s", got)
	}
	if got := files[l.crioPolicy()]; !strings.Contains(got, `"127.0.0.1:5000": [{"type": "insecureAcceptAnything"}]`) || !strings.Contains(got, `"default": [{"type": "reject"}]`) {
		t.Errorf("policy.json: %s", got)
	}
	for path := range files {
		if !strings.HasPrefix(path, l.dir+"/") {
			t.Errorf("%s is outside the run directory", path)
		}
	}
}

// A runtime shared by more loopback registries (Options.ExtraRegistries)
// trusts and reaches each of them over plain HTTP.
func TestExtraRegistries(t *testing.T) {
	o := Options{RegistryAddr: "127.0.0.1:5077", ExtraRegistries: []string{"127.0.0.1:5078"}}
	var policy struct {
		Transports map[string]map[string][]map[string]string `json:"transports"`
	}
	if err := json.Unmarshal([]byte(crioPolicy(o.registries()...)), &policy); err != nil {
		t.Fatalf("policy is not JSON: %v", err)
	}
	conf := crioRegistriesConf(o.registries()...)
	for _, r := range []string{"127.0.0.1:5077", "127.0.0.1:5078"} {
		if policy.Transports["docker"][r] == nil {
			t.Errorf("policy does not accept %s: %+v", r, policy)
		}
		if !strings.Contains(conf, fmt.Sprintf("location = %q\ninsecure = true", r)) {
			t.Errorf("registries.conf does not make %s insecure:\n%s", r, conf)
		}
	}
}
