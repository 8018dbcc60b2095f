package nodebuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ectest/ectest/kind/nodeimage"
)

// KubeletVersionFile names, inside a skew worker's node image, the version
// of its kubelet (kind/version stays the control plane's: kind reads it to
// choose the kubeadm configuration it hands the node's kubeadm, which is
// the control plane's release).
const KubeletVersionFile = "kind/ectest-kubelet-version"

// workerRecipe changes whenever WorkerImage changes what it adds.
const workerRecipe = "1"

// WorkerImage builds (or finds) the node image of a skew worker whose
// kubelet is of release kubelet, in a cluster whose control plane runs
// release cp: cp's node image (its kubeadm, which kubeadm's skew policy
// lets join kubelets up to three minors older; its kubectl, the kube-proxy,
// CoreDNS and pause images the cluster runs on every node; the node
// runtime) with kubelet's kubelet in place of cp's. So a worker of an older
// release costs one kubelet build, not a Kubernetes build, and its image
// shares every layer but one with cp's. For kubelet == cp it is cp's node
// image.
func (b *Builder) WorkerImage(ctx context.Context, cp, kubelet nodeimage.Version, rt nodeimage.NodeRuntime) (_ string, err error) {
	if err := nodeimage.CheckKubeletSkew(cp, kubelet); err != nil {
		return "", err
	}
	base, err := b.NodeImage(ctx, cp, rt)
	if err != nil || kubelet == cp {
		return base, err
	}
	// The key names the kubelet build by what makes it (release, Go, arch,
	// recipe), not by the cache directory it came from: a full build of the
	// release appearing later (another cell's) serves the same kubelet and
	// must not make a new image.
	built := ComponentsKey(kubelet, b.goVersion(ctx), runtime.GOARCH, []string{"kubelet"})
	key := cacheKey("node", cp.String()+"-"+rt.Name+"-kubelet-"+kubelet.String(), base, built, runtime.GOARCH, workerRecipe)
	ref := nodeimage.NodeImageRepository + ":" + strings.TrimPrefix(key, "node-")
	if exec.CommandContext(ctx, "docker", "image", "inspect", ref).Run() == nil {
		b.logf("skew worker image %s (kubelet %s): cached in docker", ref, kubelet)
		return ref, nil
	}
	step := b.begin("skew worker image "+ref, fmt.Sprintf("kubelet %s on the %s node image %s", kubelet, cp, base))
	defer b.enclose(step)(&err)
	dir, err := b.KubernetesComponents(ctx, kubelet, "kubelet")
	if err != nil {
		return "", err
	}
	if err := deriveImage(ctx, base, ref, map[string]string{"/usr/bin/kubelet": filepath.Join(dir, "kubelet")},
		map[string]string{"/" + KubeletVersionFile: kubelet.String() + "\n"}); err != nil {
		return "", fmt.Errorf("skew worker image %s: %w", ref, err)
	}
	return ref, nil
}

// deriveImage makes image ref from base with files replaced: copies maps
// a path in the image to the host file it takes, writes to its content.
// docker create, cp and commit keep base's configuration (entrypoint,
// environment) and add one layer.
func deriveImage(ctx context.Context, base, ref string, copies, writes map[string]string) error {
	out, err := exec.CommandContext(ctx, "docker", "create", base).Output()
	if err != nil {
		return fmt.Errorf("docker create %s: %w", base, err)
	}
	id := strings.TrimSpace(string(out))
	defer func() { _ = exec.Command("docker", "rm", "-f", id).Run() }()
	tmp, err := os.MkdirTemp("", "ectest-derive-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for dst, content := range writes {
		src := filepath.Join(tmp, filepath.Base(dst))
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			return err
		}
		copies[dst] = src
	}
	for dst, src := range copies {
		if out, err := exec.CommandContext(ctx, "docker", "cp", src, id+":"+dst).CombinedOutput(); err != nil {
			return fmt.Errorf("docker cp %s %s: %v: %s", src, dst, err, out)
		}
	}
	if out, err := exec.CommandContext(ctx, "docker", "commit", id, ref).CombinedOutput(); err != nil {
		return fmt.Errorf("docker commit: %v: %s", err, out)
	}
	return nil
}
