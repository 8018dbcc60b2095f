package kind

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/ectest/ectest/kind/nodeimage"
)

//go:embed configs/audit-policy.yaml
var auditPolicy []byte

// Paths inside the node.
const (
	nodeAuditDir    = "/etc/kubernetes/audit"
	nodeAuditLogDir = "/var/log/kubernetes/audit"
	// AuditLogFile is the audit log's name in the host's audit directory.
	AuditLogFile = "audit.log"
)

// Networks of the cluster: in 198.19.0.0/16 (reserved for network tests),
// beside Docker's own pools (198.19.0.0/16 split, see kind/host).
const (
	PodSubnet     = "198.19.128.0/18"
	ServiceSubnet = "198.19.192.0/20"
)

// ConfigOptions shape the generated kind configuration.
type ConfigOptions struct {
	Name       string
	NodeImage  string
	Kubernetes nodeimage.Version
	// CgroupV1 says the host runs cgroup v1: kubelets from 1.35 refuse it
	// unless told not to.
	CgroupV1 bool
	// Cgroupfs, when set (on cgroup v1 hosts), makes the kubelets and the
	// node runtimes manage cgroups directly instead of through systemd:
	// runc's systemd driver freezes every new container's cgroup while it
	// applies the unit's device rules (opencontainers/cgroups
	// systemd/v1.go, freezeBeforeSet), and the v1 freezer, which never
	// settles while a process in it is busy forking (the kernel bug cgroup
	// v2 fixed), then fails container starts under load with "unable to
	// freeze". The cgroupfs driver sets device rules without freezing.
	Cgroupfs *CgroupfsConfig
	// AuditPolicyDir and AuditLogDir are host directories mounted into the
	// control-plane node: the policy read by the API server, and its log,
	// readable by the suites from the host.
	AuditPolicyDir, AuditLogDir string
	// OwnCNI replaces kind's default CNI (kindnetd, whose image cannot be
	// pulled offline) with the node image's bridge configuration.
	OwnCNI bool
	// CRIProxyDir, when set, is the host directory holding the CRI proxy's
	// program and fault (a SELF-TEST): it is mounted into the node, whose
	// unit then starts the proxy, and the kubelet (and kubeadm) talk to the
	// proxy's socket instead of containerd's.
	CRIProxyDir string
	// OCIFaultDir, when set, is the host directory holding the OCI runtime
	// wrapper's program, configuration and fault (a SELF-TEST): it is
	// mounted into the node at NodeOCIFaultDir, and the node's containerd
	// runs the wrapper as the runc handler's binary.
	OCIFaultDir string
	// CRISocket, when set, is the nodes' container runtime endpoint
	// instead of containerd's (kind's kubeadm configuration names
	// containerd's): CRI-O's on a cri-o node. kubeadm's criSocket (init and
	// join) and the kubelet's containerRuntimeEndpoint are patched.
	CRISocket string
	// Labels are the control-plane node's labels.
	Labels map[string]string
	// Workers are the worker nodes; none makes a single-node cluster.
	Workers []WorkerConfig
}

// CgroupfsConfig says how the node runtime is told to use the cgroupfs
// driver (ConfigOptions.Cgroupfs): containerd nodes only.
type CgroupfsConfig struct {
	// ContainerdHandlers are containerd's runc handlers whose SystemdCgroup
	// option is patched off.
	ContainerdHandlers []string
}

// WorkerConfig is one worker node.
type WorkerConfig struct {
	Image  string
	Labels map[string]string
	// CNIConfig is a host file mounted over the node image's CNI
	// configuration: each node needs a pod subnet of its own.
	CNIConfig string
}

// Config renders a kind v1alpha4 cluster configuration.
func Config(o ConfigOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nname: %s\n", o.Name)
	fmt.Fprintf(&b, "networking:\n  podSubnet: %q\n  serviceSubnet: %q\n", PodSubnet, ServiceSubnet)
	if o.OwnCNI {
		b.WriteString("  disableDefaultCNI: true\n")
	}
	b.WriteString("nodes:\n- role: control-plane\n")
	if o.NodeImage != "" {
		fmt.Fprintf(&b, "  image: %s\n", o.NodeImage)
	}
	writeLabels(&b, o.Labels)
	fmt.Fprintf(&b, "  extraMounts:\n  - hostPath: %s\n    containerPath: %s\n    readOnly: true\n  - hostPath: %s\n    containerPath: %s\n",
		o.AuditPolicyDir, nodeAuditDir, o.AuditLogDir, nodeAuditLogDir)
	if o.CRIProxyDir != "" {
		fmt.Fprintf(&b, "  - hostPath: %s\n    containerPath: %s\n    readOnly: true\n", o.CRIProxyDir, nodeimage.CRIProxyDir)
	}
	if o.OCIFaultDir != "" {
		fmt.Fprintf(&b, "  - hostPath: %s\n    containerPath: %s\n", o.OCIFaultDir, NodeOCIFaultDir)
	}
	for _, w := range o.Workers {
		fmt.Fprintf(&b, "- role: worker\n  image: %s\n", w.Image)
		writeLabels(&b, w.Labels)
		if w.CNIConfig != "" {
			fmt.Fprintf(&b, "  extraMounts:\n  - hostPath: %s\n    containerPath: %s\n    readOnly: true\n", w.CNIConfig, nodeimage.NodeCNIPath)
		}
	}
	var containerdPatches []string
	if o.OCIFaultDir != "" {
		containerdPatches = append(containerdPatches, ociFaultContainerdPatch())
	}
	if o.Cgroupfs != nil {
		for _, h := range o.Cgroupfs.ContainerdHandlers {
			// Format version 2, as the node images' configuration is (see
			// ociFaultContainerdPatch).
			containerdPatches = append(containerdPatches, fmt.Sprintf("[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.%s.options]\n  SystemdCgroup = false\n", h))
		}
	}
	if len(containerdPatches) > 0 {
		b.WriteString("containerdConfigPatches:\n")
		for _, p := range containerdPatches {
			b.WriteString(indent(p, "- |\n", "  "))
		}
	}
	b.WriteString("kubeadmConfigPatches:\n")
	b.WriteString(indent(apiServerPatch(o.Kubernetes), "- |\n", "  "))
	var kubelet strings.Builder
	if o.CgroupV1 && o.Kubernetes.AtLeast(35) {
		kubelet.WriteString("failCgroupV1: false\n")
	}
	if o.Cgroupfs != nil {
		kubelet.WriteString("cgroupDriver: cgroupfs\n")
	}
	socket := o.CRISocket
	if o.CRIProxyDir != "" {
		socket = "unix://" + nodeimage.CRIProxySocket
	}
	if socket != "" {
		fmt.Fprintf(&kubelet, "containerRuntimeEndpoint: %s\n", socket)
		b.WriteString(indent(fmt.Sprintf("kind: InitConfiguration\nnodeRegistration:\n  criSocket: %s\n", socket), "- |\n", "  "))
		if len(o.Workers) > 0 {
			b.WriteString(indent(fmt.Sprintf("kind: JoinConfiguration\nnodeRegistration:\n  criSocket: %s\n", socket), "- |\n", "  "))
		}
	}
	if kubelet.Len() > 0 {
		b.WriteString(indent("kind: KubeletConfiguration\n"+kubelet.String(), "- |\n", "  "))
	}
	return b.String()
}

// apiServerPatch turns auditing on. kind generates kubeadm v1beta4 from
// Kubernetes 1.36 (extraArgs as a list of name/value) and v1beta3 before
// (extraArgs as a map).
func apiServerPatch(v nodeimage.Version) string {
	args := [][2]string{
		{"audit-policy-file", nodeAuditDir + "/policy.yaml"},
		{"audit-log-path", nodeAuditLogDir + "/" + AuditLogFile},
		{"audit-log-maxage", "1"},
	}
	var b strings.Builder
	b.WriteString("kind: ClusterConfiguration\napiServer:\n  extraArgs:\n")
	for _, a := range args {
		if v.AtLeast(36) {
			fmt.Fprintf(&b, "  - name: %s\n    value: %q\n", a[0], a[1])
		} else {
			fmt.Fprintf(&b, "    %s: %q\n", a[0], a[1])
		}
	}
	b.WriteString("  extraVolumes:\n")
	for _, vol := range [][3]string{{"ectest-audit-policy", nodeAuditDir, "true"}, {"ectest-audit-log", nodeAuditLogDir, "false"}} {
		fmt.Fprintf(&b, "  - name: %s\n    hostPath: %s\n    mountPath: %s\n    readOnly: %s\n    pathType: DirectoryOrCreate\n", vol[0], vol[1], vol[1], vol[2])
	}
	return b.String()
}

func writeLabels(b *strings.Builder, labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("  labels:\n")
	for _, k := range keys {
		fmt.Fprintf(b, "    %s: %q\n", k, labels[k])
	}
}

func indent(s, first, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return first + strings.Join(lines, "\n") + "\n"
}
