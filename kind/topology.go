package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/ectest/ectest/kind/nodeimage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
)

// Topology says which nodes a cluster the suite makes has.
type Topology string

const (
	// TopologySingle is one node: control plane and workload together.
	TopologySingle Topology = "single"
	// TopologySkew is the version-skew cluster (SKEW-1): a control plane of
	// release N and one worker per kubelet release of versions.yaml's
	// skewKubelets (N down to N-3).
	TopologySkew Topology = "skew"
	// TopologySkewPair is the smallest skew cluster, for CI's time budget:
	// a control plane of N (its kubelet is N's) and one worker of N-1.
	TopologySkewPair Topology = "skew-pair"
)

// Topologies lists the topologies -topology accepts.
var Topologies = []Topology{TopologySingle, TopologySkew, TopologySkewPair}

// ParseTopology validates a -topology value ("" is single).
func ParseTopology(s string) (Topology, error) {
	if s == "" {
		return TopologySingle, nil
	}
	if slices.Contains(Topologies, Topology(s)) {
		return Topology(s), nil
	}
	names := make([]string, len(Topologies))
	for i, t := range Topologies {
		names[i] = string(t)
	}
	return "", fmt.Errorf("topology %q: want one of %s", s, strings.Join(names, ", "))
}

// DefaultName is the cluster name of a topology: each has its own cluster,
// so making one never replaces another.
func (t Topology) DefaultName() string {
	if t == "" || t == TopologySingle {
		return DefaultName
	}
	return DefaultName + "-" + string(t)
}

// LabelKubeletVersion is the node label saying which kubelet release a node
// of a skew cluster runs, so specs can place pods on a chosen kubelet; the
// kubelet's own report (status.nodeInfo.kubeletVersion) must agree with it.
const LabelKubeletVersion = "ectest.io/kubelet-version"

// Workers are the kubelet releases of the topology's workers, for a
// control plane of release cp: none for single; versions.yaml's
// skewKubelets for skew; the one of cp's previous minor for skew-pair.
// Every worker must be within the kubelet's skew policy of cp.
func (t Topology) Workers(cp nodeimage.Version) ([]nodeimage.Version, error) {
	if t == "" || t == TopologySingle {
		return nil, nil
	}
	r, err := nodeimage.KnownReleases()
	if err != nil {
		return nil, err
	}
	var out []nodeimage.Version
	for _, s := range r.SkewKubelets {
		v, err := nodeimage.ParseVersion(s)
		if err != nil {
			return nil, err
		}
		if err := nodeimage.CheckKubeletSkew(cp, v); err != nil {
			return nil, fmt.Errorf("topology %s with the control plane at %s: versions.yaml's skewKubelets: %w", t, cp, err)
		}
		if t == TopologySkewPair && v.Minor != cp.Minor-1 {
			continue
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topology %s with the control plane at %s: versions.yaml's skewKubelets %v have no kubelet of %d.%d", t, cp, r.SkewKubelets, cp.Major, cp.Minor-1)
	}
	return out, nil
}

// nodeSubnet is the pod subnet of the node at index i of a cluster (0 is
// the control plane, whose node image's own CNI configuration has the
// first): consecutive /24s of PodSubnet.
func nodeSubnet(i int) string {
	_, first, _ := net.ParseCIDR(nodeimage.FirstNodeSubnet)
	ip := first.IP.To4()
	return fmt.Sprintf("%d.%d.%d.0/24", ip[0], ip[1], int(ip[2])+i)
}

// routePodSubnets lets pods on different nodes reach each other, as
// kindnetd does in stock kind clusters: every node routes each other
// node's pod subnet (read from that node's CNI configuration) through that
// node's address. Idempotent; run after creating and when reusing (a
// restarted node loses its routes).
func routePodSubnets(all []nodes.Node) error {
	if len(all) < 2 {
		return nil
	}
	type hop struct{ subnet, via, node string }
	var hops []hop
	for _, n := range all {
		var out strings.Builder
		cmd := n.Command("cat", nodeimage.NodeCNIPath)
		cmd.SetStdout(&out)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("node %s: read its CNI configuration: %w", n, err)
		}
		var conf struct {
			Plugins []struct {
				IPAM struct {
					Ranges [][]struct {
						Subnet string `json:"subnet"`
					} `json:"ranges"`
				} `json:"ipam"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(out.String()), &conf); err != nil || len(conf.Plugins) == 0 || len(conf.Plugins[0].IPAM.Ranges) == 0 || len(conf.Plugins[0].IPAM.Ranges[0]) == 0 {
			return fmt.Errorf("node %s: no pod subnet in %s (%v)", n, nodeimage.NodeCNIPath, err)
		}
		ip, _, err := n.IP()
		if err != nil {
			return fmt.Errorf("node %s: address: %w", n, err)
		}
		hops = append(hops, hop{conf.Plugins[0].IPAM.Ranges[0][0].Subnet, ip, n.String()})
	}
	for _, n := range all {
		for _, h := range hops {
			if h.node == n.String() {
				continue
			}
			if err := n.Command("ip", "route", "replace", h.subnet, "via", h.via).Run(); err != nil {
				return fmt.Errorf("node %s: route %s via %s (%s): %w", n, h.subnet, h.via, h.node, err)
			}
		}
	}
	return nil
}

// checkTopology compares a running cluster's nodes with the topology asked
// for: the kubelet release of each node (its label, and the kubelet's own
// report must agree).
func checkTopology(ctx context.Context, kubeconfig string, t Topology, cp nodeimage.Version, workers []nodeimage.Version) error {
	ns, err := listNodes(ctx, kubeconfig)
	if err != nil {
		return err
	}
	var want, got []string
	want = append(want, cp.String())
	for _, w := range workers {
		want = append(want, w.String())
	}
	for _, n := range ns {
		got = append(got, n.Status.NodeInfo.KubeletVersion)
		if l := n.Labels[LabelKubeletVersion]; t != TopologySingle && l != n.Status.NodeInfo.KubeletVersion {
			return fmt.Errorf("node %s is labelled %s=%q but its kubelet reports %s", n.Name, LabelKubeletVersion, l, n.Status.NodeInfo.KubeletVersion)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("its kubelets are %s, the topology %s wants %s", strings.Join(got, ", "), t, strings.Join(want, ", "))
	}
	return nil
}

func listNodes(ctx context.Context, kubeconfig string) ([]corev1.Node, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	l, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return l.Items, nil
}
