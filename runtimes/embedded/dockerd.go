package embedded

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/kind/host"
)

// cri-dockerd's files in a run directory. It runs three programs, all
// private to the run: a containerd (Debian's, its own configuration,
// socket, root and state), a Docker engine (Debian's dockerd, its own
// daemon.json, data root, exec root, pid file and socket, using that
// containerd) and cri-dockerd (the flavor's build, its own root directory,
// socket and CNI directories). Nothing of the host's /etc/docker,
// /var/lib/docker, /var/run/docker*, /run/containerd or /var/lib/cri-dockerd
// is read or written, and the system's docker and containerd services are
// never started.
//
// The engine is given a containerd rather than left to start its own:
// dockerd 20.10 starts one only when /run/containerd/containerd.sock does
// not exist, and uses the system's when it does (cmd/dockerd
// initContainerD), which would put the run's containers beside whatever
// else that containerd runs.
func (l layout) dockerConfig() string     { return l.dir + "/daemon.json" }
func (l layout) dockerRoot() string       { return l.dir + "/docker" }
func (l layout) dockerExecRoot() string   { return l.dir + "/exec" }
func (l layout) dockerSocket() string     { return l.dir + "/docker.sock" }
func (l layout) dockerPidfile() string    { return l.dir + "/dockerd.pid" }
func (l layout) criDockerdSocket() string { return l.dir + "/cri-dockerd.sock" }
func (l layout) criDockerdRoot() string   { return l.dir + "/cri-dockerd" }
func (l layout) cniCache() string         { return l.dir + "/cni-cache" }

// dockerContainerdConfig is the engine's containerd's configuration
// (l.config(), its socket l.socket(), root and state as an embedded
// containerd's).
func (l layout) dockerContainerdConfig() string { return l.config() }

// The engine's default OCI runtime is the kind hosts' capability wrapper
// (kind/host.RuncWrapperMain: Docker 20.10 asks for every capability the
// kernel knows for a privileged container, and runc fails where the
// bounding set lacks one, CAP_SYS_RESOURCE here), which execs the oom
// clamp (oomclamp: cri-dockerd asks for oom_score_adj -998 for every
// sandbox, runtimes/embedded/oomclamp), which execs the host's runc. Both
// are links, in the run directory, to the running ectest binary.
func (l layout) dockerCapWrapper() string { return l.dir + "/" + host.WrapperRuntime }

// dockerRuntimeName is the name daemon.json gives the wrapper.
const dockerRuntimeName = host.WrapperRuntime

// dockerContainerdNamespace is the containerd namespace of the engine.
const dockerContainerdNamespace = "moby"

// dockerRuncRoots are where the engine has runc keep its containers'
// state, runtime-<something>/<namespace> in its exec root (Docker 20.10
// names it runtime-runc for the wrapper too, seen here), where cleanupDir
// looks for the containers of a dead run.
func (l layout) dockerRuncRoots() []string {
	roots, _ := filepath.Glob(l.dockerExecRoot() + "/runtime-*/" + dockerContainerdNamespace)
	return roots
}

// dockerDaemonJSON is the engine's configuration (--config-file; the
// host's /etc/docker/daemon.json is never read): everything under the run
// directory, the run's containerd, no bridge, no iptables rules, no IP
// forwarding or masquerading, no userland proxy (cri-dockerd connects the
// sandboxes to the run's CNI bridge itself), json-file logs (cri-dockerd
// reads them), cgroupfs (these hosts' cgroup v1), the loopback registry
// over plain HTTP, and the wrapper as the default OCI runtime. The
// engine's own oom_score_adj is left as it is: lowering it needs
// CAP_SYS_RESOURCE.
func dockerDaemonJSON(l layout, o Options) string {
	cfg := map[string]any{
		"data-root":            l.dockerRoot(),
		"exec-root":            l.dockerExecRoot(),
		"pidfile":              l.dockerPidfile(),
		"hosts":                []string{"unix://" + l.dockerSocket()},
		"containerd":           l.socket(),
		"containerd-namespace": dockerContainerdNamespace,
		"bridge":               "none",
		"iptables":             false,
		"ip6tables":            false,
		"ip-forward":           false,
		"ip-masq":              false,
		"userland-proxy":       false,
		"storage-driver":       "overlay2",
		"log-driver":           "json-file",
		"exec-opts":            []string{"native.cgroupdriver=cgroupfs"},
		"live-restore":         false,
		"oom-score-adjust":     0,
		"runtimes":             map[string]any{dockerRuntimeName: map[string]any{"path": l.dockerCapWrapper()}},
		"default-runtime":      dockerRuntimeName,
	}
	if r := o.registries(); len(r) > 0 {
		cfg["insecure-registries"] = r
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	return string(b) + "\n"
}

// dockerContainerdTOML is the engine's containerd: Debian's 1.6, version 2
// format, everything under the run directory, without its CRI plugin (the
// engine uses containerd's own API) and with no oom_score_adj of its own
// (lowering it needs CAP_SYS_RESOURCE).
func dockerContainerdTOML(l layout) string {
	r := strings.NewReplacer("@ROOT@", l.root(), "@STATE@", l.state(), "@SOCKET@", l.socket())
	return r.Replace(`version = 2
root = "@ROOT@"
state = "@STATE@"
oom_score = 0
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "@SOCKET@"

[ttrpc]
  address = "@SOCKET@.ttrpc"
`)
}

// criDockerdArgs are cri-dockerd's command line: its socket, the engine's,
// its root directory, the run's CNI bridge (configuration, plugins, and a
// CNI cache of the run's instead of the host's /var/lib/cni/cache), the
// suite's pause image, and a streaming server on loopback at a free port.
func criDockerdArgs(l layout, o Options) []string {
	return []string{
		"--container-runtime-endpoint", "unix://" + l.criDockerdSocket(),
		"--docker-endpoint", "unix://" + l.dockerSocket(),
		"--cri-dockerd-root-directory", l.criDockerdRoot(),
		"--network-plugin", "cni",
		"--cni-conf-dir", l.cniConf(),
		"--cni-bin-dir", o.CNIBinDir,
		"--cni-cache-dir", l.cniCache(),
		"--pod-infra-container-image", o.SandboxImage,
		"--streaming-bind-addr", "127.0.0.1:0",
	}
}
