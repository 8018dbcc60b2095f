package cluster_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/kind"
	"github.com/ectest/ectest/kind/nodeimage"
	. "github.com/onsi/ginkgo/v2"
)

// placement says where a spec's pods run and in which matrix column its
// observations are judged: the cluster layer (onCluster: the environment's
// default node), or the kubelet of one release in a version-skew cluster
// (onKubelet; SKEW-1). The specs that judge a kubelet take a placement, so
// the skew specs run the very same bodies on every kubelet release.
type placement struct{ kubelet string }

// onCluster is the cluster layer's placement.
var onCluster placement

// onKubelet places the spec's pods on the node whose kubelet is release.
func onKubelet(release string) placement { return placement{kubelet: release} }

// framework is newFramework for the placement.
func (p placement) framework(ctx context.Context, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	return p.frameworkWithLabels(ctx, nil, exercises...)
}

// privilegedFramework is newPrivilegedFramework for the placement.
func (p placement) privilegedFramework(ctx context.Context, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	return p.frameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, exercises...)
}

// frameworkWithLabels makes the spec's framework. On a kubelet, it skips
// (with the reason) when no node of the cluster runs that release; its
// pods go to that node, and its observations to that kubelet's column,
// verifying SKEW-1 besides their own requirements.
func (p placement) frameworkWithLabels(ctx context.Context, labels map[string]string, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	if p.kubelet == "" {
		return newFrameworkWithLabels(ctx, labels, exercises...)
	}
	node, ok := env.KubeletNode(p.kubelet)
	if !ok {
		Skip(fmt.Sprintf("no node of this cluster runs kubelet %s (nodes labelled %s: %s); -topology=skew makes a cluster with every kubelet of versions.yaml's skewKubelets",
			p.kubelet, kind.LabelKubeletVersion, kubeletList()))
	}
	f := newFrameworkWithLabels(ctx, labels, exercises...)
	f.Node = node.Name
	f.Checker.Layer = capability.KubeletLayer(p.kubelet)
	f.Checker.ExtraRequirements = []string{"SKEW-1"}
	AddReportEntry("kubelet", fmt.Sprintf("%s on node %s (%s), API server %s", node.Kubelet, node.Name, node.Runtime.Name+" "+node.Runtime.Version, env.ServerVersion), ReportEntryVisibilityAlways)
	return f
}

func kubeletList() string {
	if len(env.KubeletNodes) == 0 {
		return "none"
	}
	var out []string
	for _, n := range env.KubeletNodes {
		out = append(out, n.Kubelet+" on "+n.Name)
	}
	return strings.Join(out, ", ")
}

// skewKubelets are versions.yaml's skew kubelets, N down to N-3: one table
// entry each.
func skewKubelets() []string {
	r, err := nodeimage.KnownReleases()
	if err != nil {
		panic(err) // the embedded file is checked by kind/nodeimage's tests
	}
	return r.SkewKubelets
}

// onEveryKubelet registers a table whose body runs on each skew kubelet,
// one entry per release.
func onEveryKubelet(text string, body func(ctx SpecContext, p placement), args ...any) bool {
	entries := []any{func(ctx SpecContext, release string) { body(ctx, onKubelet(release)) }}
	for _, k := range skewKubelets() {
		entries = append(entries, Entry("kubelet "+k, k, SpecTimeout(framework.DefaultTimeouts.Spec)))
	}
	return DescribeTable(text, append(args, entries...)...)
}
