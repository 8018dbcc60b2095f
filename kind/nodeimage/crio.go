package nodeimage

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ectest/ectest/runtimes/catalog"
)

// A CRI-O node (node runtime cri-o) runs CRI-O instead of containerd: the
// kubelet talks to CRISocket, CRI-O runs runc (through the project's
// oom_score_adj wrapper, these hosts lacking CAP_SYS_RESOURCE) under
// Debian's conmon, and pins namespaces with the project's pinns. Both
// wrappers are links to NodeProgramsPath, a copy of the ectest binary that
// built the image (it dispatches its programs by name, fixtures/programs).
const (
	// CrioSocket is CRI-O's default socket (pkg/config: CrioSocketPath).
	CrioSocket = "/var/run/crio/crio.sock"
	// ContainerdSocket is containerd's, which kind's kubeadm config names.
	ContainerdSocket = "/run/containerd/containerd.sock"
	// NodeProgramsPath is the ectest binary in a CRI-O node.
	NodeProgramsPath = "/usr/local/bin/ectest-programs"
	// NodePinnsPath is crio.conf's pinns_path: a link to NodeProgramsPath.
	NodePinnsPath = "/usr/local/bin/pinns"
	// NodeOOMClampPath is the runc handler's runtime_path: a link to
	// NodeProgramsPath named as runtimes/embedded/oomclamp's program, with
	// the real runc named in the file NodeOOMClampPath+".real".
	NodeOOMClampPath = "/usr/local/bin/ectest-runc-oomclamp"
	// NodeConmonPath is Debian's conmon.
	NodeConmonPath = "/usr/bin/conmon"
	// CrioUnit is CRI-O's systemd unit in the node.
	CrioUnit = "crio.service"
	// NodeRegistriesDir is containers-registries.conf's drop-in directory,
	// where a cluster's registry is made insecure (plain HTTP).
	NodeRegistriesDir = "/etc/containers/registries.conf.d"
)

// CrioProgramsRecipe is part of a CRI-O node image's key: the ectest
// binary in it (pinns, the runc wrapper) is not, so a change of what those
// programs do must change this. 2: the wrapper drops capabilities the
// bounding set lacks (kube-proxy, privileged, never started on 1).
const CrioProgramsRecipe = "2"

// IsCrio says whether rt is CRI-O rather than containerd.
func (rt NodeRuntime) IsCrio() bool { return rt.Runtime.Implementation == catalog.CriO }

// CRISocket is the kubelet's container runtime endpoint on a node of rt.
func (rt NodeRuntime) CRISocket() string {
	if rt.IsCrio() {
		return "unix://" + CrioSocket
	}
	return "unix://" + ContainerdSocket
}

// NodeCrioConfig is a CRI-O node's /etc/crio/crio.conf (v1.36's keys,
// pkg/config/template.go): systemd cgroups (kind's kubelets use the systemd
// driver), runc as the default runtime behind the oom_score_adj wrapper and
// conmon, the project's pinns, the locally built pause image (pinned so the
// kubelet's image GC keeps it), storage overlay in /var/lib/containers (the
// node's /var is a volume on the host's file system, where overlay mounts
// work), the node's bridge CNI, and no NRI, metrics or tracing.
func NodeCrioConfig(pauseImage string) string {
	r := strings.NewReplacer("@PAUSE@", pauseImage, "@RUNC@", NodeOOMClampPath, "@CONMON@", NodeConmonPath,
		"@PINNS@", NodePinnsPath, "@DEFAULT@", catalog.Runc.Name, "@SOCKET@", CrioSocket)
	return r.Replace(nodeCrioTemplate)
}

const nodeCrioTemplate = `# ectest's CRI-O node (node runtime cri-o): CRI-O v1.36's keys.
[crio]
root = "/var/lib/containers/storage"
runroot = "/run/containers/storage"
storage_driver = "overlay"
log_dir = "/var/log/crio/pods"

[crio.api]
listen = "@SOCKET@"

[crio.runtime]
default_runtime = "@DEFAULT@"
cgroup_manager = "systemd"
conmon_cgroup = "pod"
selinux = false
pinns_path = "@PINNS@"
hooks_dir = []
log_level = "info"

[crio.runtime.runtimes.@DEFAULT@]
runtime_path = "@RUNC@"
runtime_type = "oci"
runtime_root = "/run/runc"
monitor_path = "@CONMON@"
monitor_cgroup = "pod"

[crio.image]
pause_image = "@PAUSE@"
pause_command = ""
pinned_images = ["@PAUSE@"]

[crio.network]
network_dir = "/etc/cni/net.d"
plugin_dirs = ["/opt/cni/bin"]

[crio.metrics]
enable_metrics = false

[crio.tracing]
enable_tracing = false

[crio.nri]
enable_nri = false
`

// NodeCrioFiles are the files of a CRI-O node, by path in the node (no
// leading slash): crio.conf, the containers-* files CRI-O's libraries and
// skopeo (which imports the images at boot) read, CRI-O's unit, the
// import unit, and the oom_score_adj wrapper's file naming the real runc.
// images are the references in the node's image archive.
func NodeCrioFiles(pauseImage string, images []string) map[string]string {
	return map[string]string{
		"etc/crio/crio.conf":                                NodeCrioConfig(pauseImage),
		"etc/crio/crio.conf.d/.keep":                        "",
		"etc/containers/storage.conf":                       "[storage]\ndriver = \"overlay\"\nrunroot = \"/run/containers/storage\"\ngraphroot = \"/var/lib/containers/storage\"\n",
		"etc/containers/registries.conf":                    "unqualified-search-registries = []\nshort-name-mode = \"disabled\"\n",
		"etc/containers/policy.json":                        `{"default": [{"type": "insecureAcceptAnything"}]}` + "\n",
		"etc/containers/registries.conf.d/.keep":            "",
		"etc/crictl.yaml":                                   "runtime-endpoint: unix://" + CrioSocket + "\n",
		"etc/systemd/system/" + CrioUnit:                    crioUnit,
		"etc/systemd/system/ectest-import-images.service":   CrioImportUnit(images),
		strings.TrimPrefix(NodeOOMClampPath, "/") + ".real": "/" + NodePath(catalog.Runc.Binary) + "\n",
	}
}

const crioUnit = `[Unit]
Description=CRI-O container runtime (ectest's node runtime cri-o)
After=network.target local-fs.target ectest-import-images.service ectest-cgroup-fix.service

[Service]
Type=notify
ExecStart=/usr/local/bin/crio
ExecReload=/bin/kill -s HUP $MAINPID
Restart=always
RestartSec=1
LimitNOFILE=1048576
LimitNPROC=infinity
LimitCORE=infinity
TasksMax=infinity
Delegate=yes
KillMode=process
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
`

// CrioImportUnit copies the images kubeadm needs from the node's image
// archive into containers/storage with Debian's skopeo, before CRI-O
// starts: a node cannot pull them, and CRI-O, unlike containerd, has no
// import of its own.
func CrioImportUnit(images []string) string {
	refs := append([]string{}, images...)
	sort.Strings(refs)
	var copies []string
	for _, r := range refs {
		copies = append(copies, fmt.Sprintf("skopeo copy --quiet docker-archive:/kind/images/images.tar:%s containers-storage:%s", r, r))
	}
	return `[Unit]
Description=Import the images kubeadm needs into CRI-O's storage (this node cannot pull them)
After=local-fs.target
Before=crio.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -euc '` + strings.Join(copies, "; ") + `'

[Install]
WantedBy=multi-user.target
`
}

// NodeRegistryConf is a registries.conf drop-in letting a node's CRI-O pull
// from a plain-HTTP registry at hostPort (the suite's registry).
func NodeRegistryConf(hostPort string) string {
	return fmt.Sprintf("[[registry]]\nlocation = %q\ninsecure = true\n", hostPort)
}
