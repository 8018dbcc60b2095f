package nodeimage

import (
	"regexp"
)

// KindVersion is the kind module whose node-image files (images/base/files)
// and library this project uses; it must match go.mod.
const KindVersion = "v0.33.0"

// CrictlVersion is the crictl (sigs.k8s.io/cri-tools, built from the Go
// module proxy) every node image carries in /usr/local/bin, as kind's own
// node images do: an operator's tool, and the one the cluster suite uses to
// remove a container behind the kubelet's back (LIFE-2, removed-stays-gone).
const CrictlVersion = "v1.37.0"

// NodeImageRepository is where built node images are tagged in Docker.
const NodeImageRepository = "ectest/kind-node"

var (
	fuseRE    = regexp.MustCompile(`(?s)\[proxy_plugins\].*?address = "[^"]*"\n`)
	baseSpec  = regexp.MustCompile(`(?m)^\s*base_runtime_spec = .*\n`)
	sandboxRE = regexp.MustCompile(`(?m)^(\s*)sandbox_image = .*$`)
	oomRE     = regexp.MustCompile(`(?m)^(\s*)restrict_oom_score_adj = .*$`)
)

// NodeContainerdConfig adapts kind's containerd config (format version 2,
// which containerd 1.6 and 1.7 read and containerd 2.x migrates when it
// loads it, as in kind's own node images) to these hosts: no
// fuse-overlayfs proxy plugin, no base runtime spec (kind generates it at
// image build), the locally built pause image, restrict_oom_score_adj (no
// CAP_SYS_RESOURCE here), a registry hosts directory (for the suite's
// registry), and the node runtime's further handlers (gVisor's runsc), their
// tables from runtimes/catalog.
func NodeContainerdConfig(kindConfig, pauseImage string, rt NodeRuntime) string {
	c := fuseRE.ReplaceAllString(kindConfig, "")
	c = baseSpec.ReplaceAllString(c, "")
	c = sandboxRE.ReplaceAllString(c, `${1}sandbox_image = "`+pauseImage+`"`)
	c = oomRE.ReplaceAllString(c, "${1}restrict_oom_score_adj = true")
	c += "\n[plugins.\"io.containerd.grpc.v1.cri\".registry]\n  config_path = \"/etc/containerd/certs.d\"\n"
	for _, h := range rt.Runtime.Handlers {
		c += "\n" + h.ContainerdTOML(2, handlerPaths(h), "")
	}
	return c
}

// NodeRuntimeFile names the node runtime inside a node built here, so a
// reused cluster can be checked against the runtime asked for.
const NodeRuntimeFile = "kind/ectest-node-runtime"

// FirstNodeSubnet is the pod subnet of a node image's own CNI
// configuration: the first /24 of kind.PodSubnet.
const FirstNodeSubnet = "198.19.128.0/24"

// NodeCNIPath is where a node image keeps its CNI configuration; the
// workers of a multi-node cluster get theirs mounted over it, each with its
// own subnet.
const NodeCNIPath = "/etc/cni/net.d/10-ectest-bridge.conflist"

// NodeCNI is a node's bridge network with pods in subnet.
func NodeCNI(subnet string) string {
	return `{
  "cniVersion": "0.4.0",
  "name": "ectest",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "` + subnet + `"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`
}

// The fault-injecting CRI proxy (fixtures/criproxy, a SELF-TEST tool) can
// sit between the kubelet and containerd: a cluster made with a fault
// mounts CRIProxyDir (the proxy program, a copy of the binary that made the
// cluster, and the fault's name) and points the kubelet at CRIProxySocket.
// Without that mount the unit does not start, and the kubelet talks to
// containerd: one node image serves every fault and none.
const (
	CRIProxyUnit   = "ectest-criproxy.service"
	CRIProxyDir    = "/opt/ectest/criproxy"
	CRIProxySocket = "/run/ectest-criproxy/criproxy.sock"
	// CRIProxyProgram and CRIProxyFault are the files in CRIProxyDir (the
	// program must have this name: the binary runs the proxy under it).
	CRIProxyProgram = "ectest-criproxy"
	CRIProxyFault   = "fault"
)
