package nodebuild

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs"
	"github.com/ectest/ectest/internal/gobuild"
	"github.com/ectest/ectest/kind/nodeimage"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ImageList is what `kubeadm config images list` prints for a version,
// keyed by component (kube-apiserver, etcd, coredns, pause, ...).
type ImageList map[string]string

// ParseImageList reads kubeadm's image list and checks it is complete.
func ParseImageList(out string) (ImageList, error) {
	l := ImageList{}
	for _, line := range strings.Fields(out) {
		ref, err := name.ParseReference(line)
		if err != nil {
			return nil, fmt.Errorf("kubeadm image %q: %v", line, err)
		}
		l[path.Base(ref.Context().RepositoryStr())] = line
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "etcd", "coredns", "pause"} {
		if l[c] == "" {
			return nil, fmt.Errorf("kubeadm's image list has no %s:\n%s", c, out)
		}
	}
	return l, nil
}

// Tag is the tag of a component's image.
func (l ImageList) Tag(component string) string {
	ref, err := name.NewTag(l[component])
	if err != nil {
		return ""
	}
	return ref.TagStr()
}

// EtcdModuleVersion maps etcd's image tag (3.6.5-0) to its module version.
func EtcdModuleVersion(tag string) string {
	v, _, _ := strings.Cut(tag, "-")
	return "v" + strings.TrimPrefix(v, "v")
}

// KubeadmImages lists the images kubeadm expects for version v, with the
// kubeadm binary built for it.
func (b *Builder) KubeadmImages(ctx context.Context, binDir string, v nodeimage.Version) (ImageList, error) {
	out, err := b.output(ctx, "", filepath.Join(binDir, "kubeadm"), "config", "images", "list", "--kubernetes-version", v.String())
	if err != nil {
		return nil, err
	}
	return ParseImageList(out)
}

// goInstall builds the main package pkg of module mod at version into a
// cached binary: etcd and CoreDNS, from the Go module proxy (internal/gobuild).
func (b *Builder) goInstall(ctx context.Context, mod, pkg, version, binary string) (_ string, err error) {
	root, err := b.cacheRoot()
	if err != nil {
		return "", err
	}
	p := gobuild.Program{Module: mod, Package: pkg, Version: version, Binary: binary, Recipe: recipeVersion}
	if p.Cached(root) {
		b.logf("%s %s: cached in %s", binary, version, p.Path(root))
		return p.Path(root), nil
	}
	done := b.stage(fmt.Sprintf("%s %s (built from the Go module proxy)", binary, version), "1 to 5 min")
	defer func() { err = done(err) }()
	return gobuild.Build(ctx, b.goCmd(), root, p)
}

// BuildImages builds every image kubeadm expects and writes them, tagged
// as kubeadm names them, into one docker-archive tarball for the node to import.
func (b *Builder) BuildImages(ctx context.Context, binDir, rootfsTar string, list ImageList, out string) error {
	arch := runtime.GOARCH
	imgs := map[name.Reference]v1.Image{}
	add := func(component string, img v1.Image) error {
		ref, err := name.ParseReference(list[component])
		if err != nil {
			return err
		}
		imgs[ref] = img
		return nil
	}
	caBundle, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		return fmt.Errorf("CA bundle for the control-plane images: %w", err)
	}
	base := append(images.Passwd(),
		images.Entry{Path: "etc/ssl", Mode: 0o755, Dir: true},
		images.Entry{Path: "etc/ssl/certs", Mode: 0o755, Dir: true},
		images.Entry{Path: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: caBundle},
		images.Entry{Path: "usr", Mode: 0o755, Dir: true},
		images.Entry{Path: "usr/local", Mode: 0o755, Dir: true},
		images.Entry{Path: "usr/local/bin", Mode: 0o755, Dir: true},
		images.Entry{Path: "tmp", Mode: 0o1777, Dir: true},
	)
	binaryImage := func(component, binary string, entrypoint []string) error {
		data, err := os.ReadFile(binary)
		if err != nil {
			return err
		}
		entries := append(append([]images.Entry{}, base...), images.Entry{Path: "usr/local/bin/" + filepath.Base(binary), Mode: 0o755, Data: data})
		img, err := images.Image(arch, entries, entrypoint)
		if err != nil {
			return err
		}
		return add(component, img)
	}
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if err := binaryImage(c, filepath.Join(binDir, c), []string{"/usr/local/bin/" + c}); err != nil {
			return err
		}
	}
	etcd, err := b.goInstall(ctx, "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/server/v3", EtcdModuleVersion(list.Tag("etcd")), "etcd")
	if err != nil {
		return err
	}
	if err := binaryImage("etcd", etcd, []string{"/usr/local/bin/etcd"}); err != nil {
		return err
	}
	coredns, err := b.goInstall(ctx, "github.com/coredns/coredns", "github.com/coredns/coredns", list.Tag("coredns"), "coredns")
	if err != nil {
		return err
	}
	data, err := os.ReadFile(coredns)
	if err != nil {
		return err
	}
	img, err := images.Image(arch, append(append([]images.Entry{}, base...), images.Entry{Path: "coredns", Mode: 0o755, Data: data}), []string{"/coredns"})
	if err != nil {
		return err
	}
	if err := add("coredns", img); err != nil {
		return err
	}
	// The sandbox program is the running ectest binary (fixtures/programs).
	if img, err = images.ProgramImage(programs.Pause); err != nil {
		return err
	}
	if err := add("pause", img); err != nil {
		return err
	}
	// kube-proxy needs iptables, nftables and conntrack: the node's own
	// Debian root filesystem carries them, plus the binary on top.
	rootLayer, err := tarball.LayerFromFile(rootfsTar)
	if err != nil {
		return err
	}
	proxy, err := os.ReadFile(filepath.Join(binDir, "kube-proxy"))
	if err != nil {
		return err
	}
	proxyLayer, err := images.Layer([]images.Entry{{Path: "usr/local/bin/kube-proxy", Mode: 0o755, Data: proxy}})
	if err != nil {
		return err
	}
	base1, err := images.Image(arch, nil, nil)
	if err != nil {
		return err
	}
	if img, err = mutate.AppendLayers(base1, rootLayer, proxyLayer); err != nil {
		return err
	}
	if err := add("kube-proxy", img); err != nil {
		return err
	}
	return tarball.MultiRefWriteToFile(out, imgs)
}
