package embedded

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/runtimes/catalog"
)

// CRI-O's files in a run directory. Everything CRI-O, its storage, conmon,
// runc and pinns write is under the run directory: nothing of the host's
// /etc/containers, /etc/crio, /var/lib/containers or /var/run/crio is read
// or written (the environment points containers/storage, containers/image
// and containers/common at the run's files, see crioEnv).
func (l layout) crioConfig() string    { return l.dir + "/crio.conf" }
func (l layout) crioConfigDir() string { return l.dir + "/crio.conf.d" }
func (l layout) crioSocket() string    { return l.dir + "/crio.sock" }
func (l layout) crioStorage() string   { return l.dir + "/storage" }
func (l layout) crioRunRoot() string   { return l.dir + "/storage-run" }
func (l layout) crioNS() string        { return l.dir + "/ns" }

// crioCrunClampDir holds the crun handler's oomclamp link (its name is the
// program's, so it needs a directory of its own beside runc's).
func (l layout) crioCrunClampDir() string { return l.dir + "/crun-clamp" }

// AttachBase holds one short directory per CRI-O run for conmon's attach
// sockets: a socket's path is <dir>/<64-hex container ID>/attach, and
// under the run directory it is longer than a Unix socket's path may be
// (108 bytes: CRI-O's attach then fails "dial unixpacket ...: connect:
// invalid argument"). Upstream's default is /var/run/crio. cleanupDir
// removes the run's directory here with the run.
const AttachBase = "/run/ectest-crio"

func (l layout) crioAttach() string { return AttachBase + "/" + l.id }

func (l layout) crioHome() string { return l.dir + "/home" }

// crioRegistries is containers-registries.conf where containers/image
// looks for a user's file ($HOME/.config/containers/registries.conf, which
// wins over /etc/containers'): CRI-O v1.36.3 sets no
// SystemRegistriesConfPath and containers/image v5.38 reads no
// environment variable for it (pkg/sysregistriesv2,
// newConfigWrapperWithHomeDir), so CRI-O runs with HOME in the run
// directory.
// crioPolicy is containers-policy.json where containers/image looks for a
// user's ($HOME/.config/containers/policy.json, signature
// defaultPolicyPathWithHomeDir). crio.conf's signature_policy is left
// unset on purpose, as a stock CRI-O has it: set, CRI-O v1.36.3 verifies
// every CreateContainer's image again and refuses a request without
// image.user_specified_image ("user specified image not specified, cannot
// verify image signature", server/container_create.go
// verifyImageSignature), which kubelets send and plain CRI clients need
// not.
func (l layout) crioPolicy() string {
	return l.crioHome() + "/.config/containers/policy.json"
}

func (l layout) crioRegistries() string {
	return l.crioHome() + "/.config/containers/registries.conf"
}
func (l layout) crioStorageConf() string {
	return l.dir + "/storage.conf"
}
func (l layout) crioContainersConf() string { return l.dir + "/containers.conf" }

// pinns is the link, in the run directory, to the running ectest binary,
// which runs the project's pinns (runtimes/pinns) when started under that
// name (fixtures/programs).
func (l layout) pinns() string { return l.dir + "/pinns" }

// crioRuncRoot is runc's state directory: the one containerd's runc shim
// uses (handler state directory and namespace), so that cleanupDir finds
// and kills a dead run's containers the same way for both.
func (l layout) crioRuncRoot() string {
	return l.dir + "/" + catalog.Runc.StateDir + "/" + namespaceK8s
}

// crioFiles are CRI-O's configuration files for the run, by path: its
// crio.conf, and the containers-* files its libraries read.
func crioFiles(l layout, o Options, runc, crun, conmon string) map[string]string {
	files := map[string]string{
		l.crioConfig():         crioConfig(l, o, runc, crun, conmon),
		l.crioStorageConf():    crioStorageConf(l),
		l.crioPolicy():         crioPolicy(o.registries()...),
		l.crioContainersConf(): "",
		l.crioRegistries():     crioRegistriesConf(o.registries()...),
	}
	return files
}

// crioEnv points CRI-O's libraries at the run's files instead of the
// host's /etc/containers.
func crioEnv(l layout) []string {
	return []string{
		"HOME=" + l.crioHome(),
		"CONTAINERS_STORAGE_CONF=" + l.crioStorageConf(),
		"CONTAINERS_CONF=" + l.crioContainersConf(),
	}
}

// crioArgs are CRI-O's command line: its configuration, an empty drop-in
// directory (never the host's /etc/crio/crio.conf.d).
func crioArgs(l layout) []string {
	return []string{"--config", l.crioConfig(), "--config-dir", l.crioConfigDir()}
}

// crioConfig is CRI-O's crio.conf (v1.36's keys, pkg/config/template.go):
// storage, state and sockets under the run directory, runc (runc's root
// where containerd's runc shim keeps it) monitored by conmon, cgroupfs
// (these hosts' cgroup v1), the run's CNI bridge, the suite's pause image
// from the loopback registry, the project's pinns, and no NRI, metrics or
// tracing. pause_command "" runs the pause image's own entrypoint.
func crioConfig(l layout, o Options, runc, crun, conmon string) string {
	tmpl := crioConfTemplate
	if crun != "" {
		tmpl += crioCrunTemplate
	}
	r := strings.NewReplacer(
		"@CRUN@", crun, "@CRUNROOT@", l.dir+"/"+catalog.Crun.StateDir+"/"+namespaceK8s, "@CRUNNAME@", catalog.Crun.Name,
		"@ROOT@", l.crioStorage(), "@RUNROOT@", l.crioRunRoot(), "@DIR@", l.dir,
		"@SOCKET@", l.crioSocket(), "@RUNC@", runc, "@RUNCROOT@", l.crioRuncRoot(),
		"@CONMON@", conmon, "@ATTACH@", l.crioAttach(), "@PINNS@", l.pinns(), "@NS@", l.crioNS(),
		"@PAUSE@", o.SandboxImage,
		"@CNICONF@", l.cniConf(), "@CNIBIN@", o.CNIBinDir, "@DEFAULT@", catalog.Runc.Name,
	)
	return r.Replace(tmpl)
}

// crioCrunTemplate is the crun handler's table (the flavor cri-o-crun):
// crun's state where containerd's runc shim keeps the crun handler's, so
// that cleanupDir kills a dead run's containers the same way.
const crioCrunTemplate = `
[crio.runtime.runtimes.@CRUNNAME@]
runtime_path = "@CRUN@"
runtime_type = "oci"
runtime_root = "@CRUNROOT@"
monitor_path = "@CONMON@"
monitor_cgroup = "pod"
`

const crioConfTemplate = `[crio]
root = "@ROOT@"
runroot = "@RUNROOT@"
storage_driver = "overlay"
log_dir = "@DIR@/pod-logs"
version_file = "@DIR@/crio-version"
version_file_persist = "@DIR@/crio-version-persist"
clean_shutdown_file = "@DIR@/crio-clean.shutdown"
internal_wipe = true

[crio.api]
listen = "@SOCKET@"
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "@DEFAULT@"
cgroup_manager = "cgroupfs"
conmon_cgroup = "pod"
selinux = false
namespaces_dir = "@NS@"
pinns_path = "@PINNS@"
container_exits_dir = "@DIR@/exits"
container_attach_socket_dir = "@ATTACH@"
hooks_dir = []
default_mounts_file = ""
decryption_keys_path = "@DIR@/keys"
log_level = "info"

[crio.runtime.runtimes.@DEFAULT@]
runtime_path = "@RUNC@"
runtime_type = "oci"
runtime_root = "@RUNCROOT@"
monitor_path = "@CONMON@"
monitor_cgroup = "pod"

[crio.image]
pause_image = "@PAUSE@"
pause_command = ""
pinned_images = ["@PAUSE@"]
signature_policy_dir = "@DIR@/policies"
big_files_temporary_dir = "@DIR@/tmp"

[crio.network]
network_dir = "@CNICONF@"
plugin_dirs = ["@CNIBIN@"]

[crio.metrics]
enable_metrics = false

[crio.tracing]
enable_tracing = false

[crio.nri]
enable_nri = false
`

// crioStorageConf is containers-storage.conf: the same root, run root and
// driver as crio.conf (CRI-O's settings win; this keeps the host's file
// out).
func crioStorageConf(l layout) string {
	return fmt.Sprintf("[storage]\ndriver = \"overlay\"\nrunroot = %q\ngraphroot = %q\n", l.crioRunRoot(), l.crioStorage())
}

// crioRegistriesConf is containers-registries.conf (version 2): the
// loopback registry over plain HTTP, no search registries.
func crioRegistriesConf(registryAddrs ...string) string {
	s := "unqualified-search-registries = []\nshort-name-mode = \"disabled\"\n"
	for _, r := range registryAddrs {
		s += fmt.Sprintf("\n[[registry]]\nlocation = %q\ninsecure = true\n", r)
	}
	return s
}

// crioPolicy is containers-policy.json: images of the loopback registry
// are accepted unsigned, everything else is rejected.
func crioPolicy(registryAddrs ...string) string {
	scopes := ""
	for i, r := range registryAddrs {
		if i > 0 {
			scopes += ", "
		}
		scopes += fmt.Sprintf(`%q: [{"type": "insecureAcceptAnything"}]`, r)
	}
	if scopes != "" {
		scopes = `, "transports": {"docker": {` + scopes + `}}`
	}
	return `{"default": [{"type": "reject"}]` + scopes + "}\n"
}
