package kind

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"

	"github.com/ectest/ectest/kind/nodeimage"
)

// NodeImages makes or finds the node images a cluster is created from: the
// control plane's (NodeImage) and each skew worker's (WorkerImage).
// Commands hand Up the builder (nodebuild.Builder); the suites hand it
// Built, so that a suite binary does not link the node-image builder.
type NodeImages interface {
	NodeImage(ctx context.Context, v nodeimage.Version, rt nodeimage.NodeRuntime) (string, error)
	WorkerImage(ctx context.Context, cp, kubelet nodeimage.Version, rt nodeimage.NodeRuntime) (string, error)
}

// Built finds node images built before (by ectest-kind node-image or
// suite-images): the newest image of nodeimage.NodeImageRepository whose tag
// is the one the builder gives that version and runtime, whatever its
// content hash. It builds nothing.
type Built struct{}

// NodeImage is the newest node image built for v with rt.
func (Built) NodeImage(ctx context.Context, v nodeimage.Version, rt nodeimage.NodeRuntime) (string, error) {
	return newestBuilt(ctx, v.String()+"-"+rt.Name+"-", fmt.Sprintf("Kubernetes %s with the node runtime %s", v, rt.Name), v, rt, "")
}

// WorkerImage is the newest skew worker image built for a kubelet of
// release kubelet under a control plane of release cp.
func (b Built) WorkerImage(ctx context.Context, cp, kubelet nodeimage.Version, rt nodeimage.NodeRuntime) (string, error) {
	if err := nodeimage.CheckKubeletSkew(cp, kubelet); err != nil {
		return "", err
	}
	if kubelet == cp {
		return b.NodeImage(ctx, cp, rt)
	}
	return newestBuilt(ctx, cp.String()+"-"+rt.Name+"-kubelet-"+kubelet.String()+"-",
		fmt.Sprintf("a skew worker (kubelet %s) of Kubernetes %s with the node runtime %s", kubelet, cp, rt.Name), cp, rt, " -topology=<the run's>")
}

// newestBuilt picks, among the repository's tags prefix+<hash>, the one
// created last.
func newestBuilt(ctx context.Context, prefix, what string, v nodeimage.Version, rt nodeimage.NodeRuntime, topology string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "image", "ls", "--format", "{{.CreatedAt}}\t{{.Tag}}", nodeimage.NodeImageRepository).Output()
	if err != nil {
		return "", fmt.Errorf("list the node images built here (docker image ls %s): %w", nodeimage.NodeImageRepository, err)
	}
	tag := newestTag(string(out), prefix)
	if tag == "" {
		return "", fmt.Errorf("no node image for %s is built here: build it first with `ectest-kind node-image -kubernetes-version=%s -node-runtime=%s%s` (make node-image; the make targets that run the cluster suite do it), or give -kind-node-image or -kubeconfig", what, v, rt.Name, topology)
	}
	return nodeimage.NodeImageRepository + ":" + tag, nil
}

// newestTag picks from docker's "created<TAB>tag" lines the tag created last
// among prefix+<hash> ("" if none): v1.37.1-containerd-2- must not match
// v1.37.1-containerd-2-gvisor-<hash>.
func newestTag(list, prefix string) string {
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		created, tag, ok := strings.Cut(line, "\t")
		if rest, match := strings.CutPrefix(tag, prefix); ok && match && rest != "" && !strings.Contains(rest, "-") {
			found = append(found, created+"\t"+tag)
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	_, tag, _ := strings.Cut(found[len(found)-1], "\t")
	return tag
}
