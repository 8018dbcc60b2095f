package embedded

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// cri-dockerd's Docker engine keeps everything under the run directory,
// uses the run's containerd (never the system's), touches no iptables, no
// bridge and no forwarding, and runs the wrapper as its default runtime.
func TestDockerDaemonJSON(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	o := Options{RegistryAddr: "127.0.0.1:5000", SandboxImage: "127.0.0.1:5000/ectest/pause:latest", CNIBinDir: "/usr/lib/cni"}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(dockerDaemonJSON(l, o)), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"data-root":            l.dir + "/docker",
		"exec-root":            l.dir + "/exec",
		"pidfile":              l.dir + "/dockerd.pid",
		"containerd":           l.dir + "/containerd.sock",
		"containerd-namespace": "moby",
		"bridge":               "none",
		"iptables":             false,
		"ip6tables":            false,
		"ip-forward":           false,
		"ip-masq":              false,
		"userland-proxy":       false,
		"live-restore":         false,
		"default-runtime":      "ectest-runc",
	}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("daemon.json %s = %v, want %v", k, cfg[k], v)
		}
	}
	if h, _ := cfg["hosts"].([]any); len(h) != 1 || h[0] != "unix://"+l.dir+"/docker.sock" {
		t.Errorf("hosts = %v", cfg["hosts"])
	}
	if r, _ := cfg["insecure-registries"].([]any); len(r) != 1 || r[0] != "127.0.0.1:5000" {
		t.Errorf("insecure-registries = %v", cfg["insecure-registries"])
	}
	rt, _ := cfg["runtimes"].(map[string]any)
	if w, _ := rt["ectest-runc"].(map[string]any); w["path"] != l.dir+"/ectest-runc" {
		t.Errorf("runtimes = %v", cfg["runtimes"])
	}
	var none map[string]any
	if err := json.Unmarshal([]byte(dockerDaemonJSON(l, Options{})), &none); err != nil || none["insecure-registries"] != nil {
		t.Errorf("no registry: %v %v", none["insecure-registries"], err)
	}
}

func TestDockerContainerdTOML(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	conf := dockerContainerdTOML(l)
	for _, want := range []string{
		`root = "/var/lib/ectest/embedded/abc/root"`,
		`state = "/var/lib/ectest/embedded/abc/state"`,
		`address = "/var/lib/ectest/embedded/abc/containerd.sock"`,
		`"io.containerd.grpc.v1.cri"`,
		`oom_score = 0`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("containerd config lacks %s:\n%s", want, conf)
		}
	}
}

func TestCriDockerdArgs(t *testing.T) {
	l := layout{id: "abc", dir: "/var/lib/ectest/embedded/abc"}
	o := Options{RegistryAddr: "127.0.0.1:5000", SandboxImage: "127.0.0.1:5000/ectest/pause:latest", CNIBinDir: "/usr/lib/cni"}
	args := strings.Join(criDockerdArgs(l, o), " ")
	for _, want := range []string{
		"--container-runtime-endpoint unix:///var/lib/ectest/embedded/abc/cri-dockerd.sock",
		"--docker-endpoint unix:///var/lib/ectest/embedded/abc/docker.sock",
		"--cri-dockerd-root-directory /var/lib/ectest/embedded/abc/cri-dockerd",
		"--network-plugin cni",
		"--cni-conf-dir /var/lib/ectest/embedded/abc/cni",
		"--cni-bin-dir /usr/lib/cni",
		"--cni-cache-dir /var/lib/ectest/embedded/abc/cni-cache",
		"--pod-infra-container-image 127.0.0.1:5000/ectest/pause:latest",
		"--streaming-bind-addr 127.0.0.1:0",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("cri-dockerd's command line lacks %s: %s", want, args)
		}
	}
}

// A dead run's containers are found in whatever runtime-* state
// directory the engine made (runtime-runc for the wrapper, with Docker
// 20.10).
func TestDockerRuncRoots(t *testing.T) {
	l := layout{id: "abc", dir: t.TempDir()}
	for _, d := range []string{"/exec/runtime-runc/moby", "/exec/runtime-ectest-runc/moby", "/exec/containerd"} {
		if err := os.MkdirAll(l.dir+d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(l.dockerRuncRoots(), ",")
	if got != l.dir+"/exec/runtime-ectest-runc/moby,"+l.dir+"/exec/runtime-runc/moby" {
		t.Errorf("dockerRuncRoots = %s", got)
	}
}
