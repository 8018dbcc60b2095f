package embedded

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/ectest/ectest/runtimes/catalog"
	"github.com/ectest/ectest/runtimes/embedded/crunwrapper"
)

// Options configure the embedded runtime: containerd, or CRI-O when
// Implementation says so.
type Options struct {
	// Implementation is the CRI implementation to start (containerd when
	// empty; catalog.CriO starts BinDir's crio with BinDir's runc, Debian's
	// conmon and the project's pinns).
	Implementation catalog.Implementation
	// Containerd is the containerd binary ("containerd" from PATH if empty).
	Containerd string
	// CNIBinDir holds the CNI plugins (bridge, host-local, loopback).
	CNIBinDir string
	// RegistryAddr is the loopback registry (host:port) containerd may pull
	// from over plain HTTP.
	RegistryAddr string
	// ExtraRegistries are more loopback registries it may pull from the same
	// way: one per suite run when several share the runtime (make test's
	// mutation lanes, each run serving its images at its own address).
	ExtraRegistries []string
	// SandboxImage is the pause image for sandboxes.
	SandboxImage string
	// BaseDir holds one directory per run (default /var/lib/ectest/embedded).
	BaseDir string
	// LogPath receives containerd's log (inside the run directory if empty).
	LogPath string
	// BinDir holds containerd, containerd-shim-runc-v2 and runc of a flavor
	// built by the suite ("" for Debian's, on PATH); Containerd defaults
	// to BinDir's.
	BinDir string
	// ConfigVersion is containerd's configuration format (2 if zero; 3 for
	// containerd 2.x).
	ConfigVersion int
	// RuncBinary, when set, is the program the runc handler runs as its
	// OCI runtime instead of runc (the self-test's fault-injecting wrapper,
	// fixtures/ocifault).
	RuncBinary string
	// Handlers are the OCI handlers containerd is configured with beyond
	// the default, runc (Flavor.Handlers, from runtimes/catalog): gVisor's
	// runsc (BinDir holds runsc and containerd-shim-runsc-v1), Debian's
	// crun (the runc shim runs the wrapper ectest-crun, crunwrapper, a
	// link to the running ectest binary in the run directory; version 3
	// configs only).
	Handlers []catalog.Handler
	// NoNetwork starts the runtime without a CNI network configuration,
	// as Debian's containerd is installed: its Status then says
	// NetworkReady false (a self-test of a runtime that is not ready).
	NoNetwork bool
}

// has says whether o configures the handler named name.
func (o Options) has(name string) bool {
	for _, h := range o.Handlers {
		if h.Name == name {
			return true
		}
	}
	return false
}

// layout is where one run keeps its files; everything is under dir.
type layout struct {
	id, dir string
}

func (l layout) socket() string    { return l.dir + "/containerd.sock" }
func (l layout) root() string      { return l.dir + "/root" }
func (l layout) state() string     { return l.dir + "/state" }
func (l layout) cniConf() string   { return l.dir + "/cni" }
func (l layout) cniData() string   { return l.dir + "/cni-ipam" }
func (l layout) hostsDir() string  { return l.dir + "/certs.d" }
func (l layout) config() string    { return l.dir + "/config.toml" }
func (l layout) ownerFile() string { return l.dir + "/owner.pid" }

// crun's wrapper and the empty file it binds: the wrapper
// finds that file next to its argv[0].
func (l layout) crunWrapper() string { return l.dir + "/" + crunwrapper.Name }
func (l layout) crunEmpty() string   { return l.dir + "/" + crunwrapper.EmptyFile }

// network derives a bridge name and a /24 from the run ID, so concurrent runs
// on one host do not collide. 198.18.0.0/16 is half of the range reserved for
// network testing (RFC 2544, never routed; the other half is for Docker
// networks); pods only talk to themselves and loopback.
func (l layout) network() (bridge, subnet string) {
	n := l.slot()
	return fmt.Sprintf("ectest%d", n), fmt.Sprintf("198.18.%d.0/24", n)
}

// slot is the run's network slot, 0 to 255, from its ID.
func (l layout) slot() uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(l.id))
	return h.Sum32() % 256
}

// bridgeMAC is the address of the run's bridge (makeBridge): locally
// administered, unicast, and as unique on the host as the bridge's name.
func (l layout) bridgeMAC() string {
	return fmt.Sprintf("02:ec:7e:57:00:%02x", l.slot())
}

const namespaceK8s = "k8s.io"

// handlerPaths are where a handler's files are in the run directory.
func handlerPaths(l layout, o Options, h catalog.Handler) catalog.Paths {
	p := catalog.Paths{Binary: handlerBinary(h, o.BinDir), Root: l.dir + "/" + h.StateDir}
	switch h.Name {
	case catalog.Runc.Name:
		if o.RuncBinary != "" {
			p.Binary = o.RuncBinary
		}
	case catalog.Crun.Name:
		// The shim runs crun's wrapper, which hides the hybrid cgroup
		// hierarchy crun refuses.
		p.Binary = l.crunWrapper()
	}
	if h.ShimConfig != nil {
		p.ShimConfig = l.dir + "/" + h.ShimConfig.File
	}
	return p
}

// catalogHandlers are the handlers of the catalog's runtimes that the runc
// shim runs (runc's command line: list, kill, delete with --root), once each.
func catalogHandlers() []catalog.Handler {
	var out []catalog.Handler
	seen := map[string]bool{}
	for _, r := range catalog.Runtimes {
		for _, h := range append([]catalog.Handler{r.Default}, r.Handlers...) {
			if h.RuntimeType == catalog.Runc.RuntimeType && !seen[h.StateDir] {
				seen[h.StateDir] = true
				out = append(out, h)
			}
		}
	}
	return out
}

// containerdConfig is containerd's configuration for the run: the default
// handler runc and o.Handlers, their tables from runtimes/catalog.
func containerdConfig(l layout, o Options) string {
	version := o.ConfigVersion
	if version != 3 {
		version = 2
	}
	r := strings.NewReplacer(
		"@ROOT@", l.root(), "@STATE@", l.state(), "@SOCKET@", l.socket(),
		"@SANDBOX@", o.SandboxImage, "@CNIBIN@", o.CNIBinDir, "@CNICONF@", l.cniConf(),
		"@HOSTS@", l.hostsDir(), "@DEFAULT@", catalog.Runc.Name,
		"@DEFAULTHANDLER@", catalog.Runc.ContainerdTOML(version, handlerPaths(l, o, catalog.Runc), "    "),
	)
	config := configV2
	if version == 3 {
		config = configV3
	}
	config = r.Replace(config)
	for _, h := range o.Handlers {
		config += "\n" + h.ContainerdTOML(version, handlerPaths(l, o, h), "")
	}
	return config
}

// configV2 is containerd 1.x's format. restrict_oom_score_adj: these hosts
// lack CAP_SYS_RESOURCE, so a sandbox cannot lower its oom_score_adj;
// without it every sandbox fails to start.
const configV2 = `version = 2
root = "@ROOT@"
state = "@STATE@"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "@SOCKET@"

[ttrpc]
  address = "@SOCKET@.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "@SANDBOX@"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "@DEFAULT@"
@DEFAULTHANDLER@  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "@CNIBIN@"
    conf_dir = "@CNICONF@"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "@HOSTS@"
`

// configV3 is containerd 2.x's format: the CRI plugin split into runtime
// and images plugins. The same settings as version 2, for these hosts, and
// NRI's socket in the runtime's own state directory: containerd 2 serves NRI
// by default at /var/run/nri/nri.sock, and of two embedded runtimes started
// at once (make test's contract stage starts two) one failed to bind it
// ("failed to start NRI interface ... address already in use") and exited.
const configV3 = `version = 3
root = "@ROOT@"
state = "@STATE@"

[grpc]
  address = "@SOCKET@"

[ttrpc]
  address = "@SOCKET@.ttrpc"

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  enable_selinux = false
  tolerate_missing_hugetlb_controller = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "@DEFAULT@"
@DEFAULTHANDLER@  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["@CNIBIN@"]
    conf_dir = "@CNICONF@"
    max_conf_num = 1

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "@SANDBOX@"
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "@HOSTS@"

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins.'io.containerd.nri.v1.nri']
  socket_path = "@STATE@/nri.sock"
`

// shimConfigs are the handlers' own configuration files (gVisor's
// runsc.toml), by path.
func shimConfigs(l layout, o Options) map[string]string {
	files := map[string]string{}
	for _, h := range o.Handlers {
		if h.ShimConfig != nil {
			p := handlerPaths(l, o, h)
			files[p.ShimConfig] = h.ShimConfigTOML(p)
		}
	}
	return files
}

func cniConfig(l layout) string { return cniConfigNamed(l, "ectest") }

// cniConfigNamed is the run's bridge network under a network name.
func cniConfigNamed(l layout, name string) string {
	bridge, subnet := l.network()
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": %q,
  "plugins": [
    {
      "type": "bridge",
      "bridge": %q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "dataDir": %q}
    }
  ]
}
`, name, bridge, subnet, l.cniData())
}

// registries is every loopback registry the runtime may pull from.
func (o Options) registries() []string {
	var l []string
	if o.RegistryAddr != "" {
		l = append(l, o.RegistryAddr)
	}
	return append(l, o.ExtraRegistries...)
}

// hostsTOML lets containerd pull from the loopback registry over plain HTTP.
func hostsTOML(registryAddr string) string {
	return fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n  skip_verify = true\n", registryAddr, registryAddr)
}
