package nodebuild

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ectest/ectest/fixtures/programs"
	"github.com/ectest/ectest/internal/gobuild"
	"github.com/ectest/ectest/internal/hostdeps"
	"github.com/ectest/ectest/internal/progress"
	"github.com/ectest/ectest/kind/nodeimage"
)

// NodeImage builds (or finds) the node image for Kubernetes version v with
// the node runtime rt, and returns its Docker reference (its tag names both).
// It first works out which stages its cache already holds, and checks what
// the others need (the Go toolchain, debootstrap and the cgo build tools,
// installed when missing) before starting any of them, so a long build
// never ends on a missing tool. Each stage says when it starts and ends,
// how long it took, and whether the cache served it; the build as a whole
// too, and it says it still runs every progress.Interval between stages.
func (b *Builder) NodeImage(ctx context.Context, v nodeimage.Version, rt nodeimage.NodeRuntime) (_ string, err error) {
	binDir, err := b.binariesDir(ctx, v)
	if err != nil {
		return "", err
	}
	rootfs, err := b.rootFSPath(rt)
	if err != nil {
		return "", err
	}
	key := cacheKey("node", v.String()+"-"+rt.Name, filepath.Base(binDir), filepath.Base(rootfs), rt.Key(), nodeimage.KindVersion, nodeimage.CrictlVersion, runtime.GOARCH, nodeRecipe)
	ref := nodeimage.NodeImageRepository + ":" + strings.TrimPrefix(key, "node-")
	if exec.CommandContext(ctx, "docker", "image", "inspect", ref).Run() == nil {
		b.logf("node image %s: cached in docker", ref)
		return ref, nil
	}
	if err := b.preflight(ctx, rootfs, rt); err != nil {
		return "", fmt.Errorf("node image %s for Kubernetes %s is not built yet, and building it %w", ref, v, err)
	}
	step := b.begin("node image "+ref, fmt.Sprintf("stages: Kubernetes binaries, Debian root filesystem, node runtime %s, crictl, etcd and CoreDNS, images and assembly", rt.Name))
	defer b.enclose(step)(&err)
	if binDir, err = b.KubernetesBinaries(ctx, v); err != nil {
		return "", err
	}
	if rootfs, err = b.RootFS(ctx, rt); err != nil {
		return "", err
	}
	built, err := b.RuntimePrograms(ctx, rt)
	if err != nil {
		return "", err
	}
	crictl, err := b.goInstall(ctx, "sigs.k8s.io/cri-tools", "sigs.k8s.io/cri-tools/cmd/crictl", nodeimage.CrictlVersion, "crictl")
	if err != nil {
		return "", err
	}
	kindDir, err := b.moduleDir(ctx, "sigs.k8s.io/kind@"+nodeimage.KindVersion)
	if err != nil {
		return "", err
	}
	list, err := b.KubeadmImages(ctx, binDir, v)
	if err != nil {
		return "", err
	}
	work, err := os.MkdirTemp("", "ectest-node-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	root := filepath.Join(work, "rootfs")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	if out, err := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-C", root, "-xpf", rootfs).CombinedOutput(); err != nil {
		return "", fmt.Errorf("unpack rootfs: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, "kind/images"), 0o755); err != nil {
		return "", err
	}
	if err := b.BuildImages(ctx, binDir, rootfs, list, filepath.Join(root, "kind/images/images.tar")); err != nil {
		return "", err
	}
	done := b.stage("node assembly and docker import", "about 1 min")
	if err := assemble(root, filepath.Join(kindDir, "images/base/files"), binDir, crictl, v, list, rt, built); err != nil {
		return "", done(err)
	}
	imp := exec.CommandContext(ctx, "sh", "-c", `tar --numeric-owner --xattrs -C "$1" -c . | docker import \
		--change 'ENV container=docker' \
		--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/usr/local/bin/ectest-init"]' - "$2"`, "import", root, ref)
	if out, err := imp.CombinedOutput(); err != nil {
		return "", done(fmt.Errorf("docker import: %v: %s", err, out))
	}
	_ = done(nil)
	return ref, nil
}

// RuntimePrograms builds (or finds cached) the node runtime's programs from
// the Go module proxy, the same builds the embedded runtimes use, and
// returns their paths by binary name.
func (b *Builder) RuntimePrograms(ctx context.Context, rt nodeimage.NodeRuntime) (_ map[string]string, err error) {
	root, err := b.cacheRoot()
	if err != nil {
		return nil, err
	}
	built := map[string]string{}
	var todo []gobuild.Program
	for _, p := range rt.Programs {
		if p.Cached(root) {
			built[p.Binary] = p.Path(root)
		} else {
			todo = append(todo, p)
		}
	}
	if len(todo) == 0 {
		if len(rt.Programs) > 0 {
			b.logf("node runtime %s: cached in %s/bin", rt.Name, root)
		}
		return built, nil
	}
	var names []string
	for _, p := range todo {
		names = append(names, p.Binary+" "+p.Version)
	}
	step := b.begin(fmt.Sprintf("node runtime %s (%s, built from the Go module proxy)", rt.Name, strings.Join(names, ", ")), "about 1 to 2 min each cold")
	defer b.enclose(step)(&err)
	for _, p := range todo {
		done := b.stage(fmt.Sprintf("node runtime %s: building %s %s", rt.Name, p.Binary, p.Version), "about 1 to 2 min")
		path, err := gobuild.Build(ctx, b.goCmd(), root, p)
		if err = done(err); err != nil {
			return nil, fmt.Errorf("node runtime %s: %w", rt.Name, err)
		}
		built[p.Binary] = path
	}
	return built, nil
}

// preflight checks, before any stage starts, that every stage the cache
// cannot serve can run here: the Go toolchain builds Kubernetes, etcd,
// CoreDNS and the node runtime and fetches kind's base files; the cgo
// build tools and libseccomp-dev (installed when missing) build runc;
// debootstrap (installed when missing) makes the root filesystem.
func (b *Builder) preflight(ctx context.Context, rootfs string, rt nodeimage.NodeRuntime) error {
	if _, err := exec.LookPath(b.goCmd()); err != nil {
		return fmt.Errorf("needs the Go toolchain (%s is not on PATH): build it once where Go is (make node-image), or give a node image (-kind-node-image)", b.goCmd())
	}
	if root, err := b.cacheRoot(); err == nil {
		for _, p := range rt.Programs {
			if p.CGO && !p.Cached(root) {
				// runc links libseccomp through cgo.
				if err := hostdeps.Ensure(ctx, b.Log, hostdeps.CgoSeccomp); err != nil {
					return err
				}
				break
			}
		}
	}
	if _, err := os.Stat(rootfs); err != nil {
		if err := hostdeps.Ensure(ctx, b.Log, hostdeps.NodeImage); err != nil {
			return err
		}
		if _, err := exec.LookPath("debootstrap"); err != nil {
			return fmt.Errorf("needs debootstrap for its root filesystem: %w", err)
		}
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("needs docker to import it: %w", err)
	}
	return nil
}

// stage starts a long step (internal/progress: it says it still runs every
// progress.Interval) and returns the function that ends it, logging "done
// in" or "failed after", and passes its error through.
func (b *Builder) stage(what, cold string) func(error) error {
	return b.begin(what, cold+" cold").Done
}

// begin starts a step: a child of the build under way (b.step), which
// then keeps quiet while the child ticks, or a step of its own.
func (b *Builder) begin(what, expect string) *progress.Step {
	if b.step != nil {
		return b.step.StartExpect(what, expect)
	}
	return progress.StartExpect(b.logf, what, expect)
}

// enclose makes s the parent of the steps begun until the function it
// returns runs, which ends s with the error errp points to:
// defer b.enclose(s)(&err).
func (b *Builder) enclose(s *progress.Step) func(errp *error) {
	prev := b.step
	b.step = s
	return func(errp *error) {
		b.step = prev
		s.End(errp)
	}
}

// nodeRecipe changes whenever assemble changes. 6: images built by
// ectest-mutation before it dispatched the suite's programs carried a pause
// that ran ectest-mutation's main (exit 2 at once): never reuse them.
// (CRI-O nodes left it at 6: containerd nodes are assembled as before, and
// a cri-o node's key differs by its runtime.)
// 7: every node carries crictl (nodeimage.CrictlVersion).
const nodeRecipe = "7"

func (b *Builder) moduleDir(ctx context.Context, modVersion string) (string, error) {
	out, err := b.output(ctx, "", b.goCmd(), "mod", "download", "-json", modVersion)
	if err != nil {
		return "", err
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return "", err
	}
	if info.Error != "" {
		return "", fmt.Errorf("%s: %s", modVersion, info.Error)
	}
	return info.Dir, nil
}

// assemble turns a Debian root filesystem into a kind node: kind's base
// image files, the node runtime, Kubernetes binaries, images, and the fixes
// these hosts need.
func assemble(root, kindFiles, binDir, crictl string, v nodeimage.Version, list ImageList, rt nodeimage.NodeRuntime, built map[string]string) error {
	write := func(p string, mode os.FileMode, content string) error {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		_ = os.Remove(full)
		return os.WriteFile(full, []byte(content), mode)
	}
	link := func(target, p string) error {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		_ = os.Remove(full)
		return os.Symlink(target, full)
	}
	// kind's base image files, as its Dockerfile copies them (fuse-overlayfs
	// is for rootless hosts and Debian has no containerd plugin for it).
	err := filepath.WalkDir(kindFiles, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(kindFiles, p)
		if strings.Contains(rel, "fuse-overlayfs") || strings.HasPrefix(rel, "LICENSES") || strings.HasSuffix(rel, ".go") || strings.HasPrefix(rel, "kind/README") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		if rel == "etc/containerd/config.toml" {
			data = []byte(nodeimage.NodeContainerdConfig(string(data), list["pause"], rt))
		}
		return write(rel, mode, string(data))
	})
	if err != nil {
		return fmt.Errorf("kind base files: %w", err)
	}
	if rt.IsCrio() {
		if err := installCrio(root, list, write, link); err != nil {
			return fmt.Errorf("node runtime %s: %w", rt.Name, err)
		}
	}
	if len(rt.Programs) == 0 {
		// Debian's containerd lives in /usr/bin; kind's unit runs /usr/local/bin.
		for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "ctr"} {
			if err := link("/usr/bin/"+bin, "usr/local/bin/"+bin); err != nil {
				return err
			}
		}
	} else if err := installPrograms(root, rt, built); err != nil {
		return fmt.Errorf("node runtime %s: %w", rt.Name, err)
	}
	for path, content := range rt.ShimConfigs() {
		if err := write(strings.TrimPrefix(path, "/"), 0o644, content); err != nil {
			return err
		}
	}
	if err := link("/usr/lib/cni", "opt/cni/bin"); err != nil {
		return err
	}
	for _, c := range []string{"kubeadm", "kubelet", "kubectl"} {
		data, err := os.ReadFile(filepath.Join(binDir, c))
		if err != nil {
			return err
		}
		if err := write("usr/bin/"+c, 0o755, string(data)); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(crictl)
	if err != nil {
		return err
	}
	if err := write("usr/local/bin/crictl", 0o755, string(data)); err != nil {
		return err
	}
	files := map[string]string{
		"kind/version":            v.String() + "\n",
		nodeimage.NodeRuntimeFile: rt.Name + "\n",
		// A harmless stand-in for kind's storage provisioner manifest: its
		// image cannot be pulled here and the suites need no volumes.
		"kind/manifests/default-storage.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ectest-no-default-storage\n  namespace: kube-system\n",
		"etc/systemd/system/ectest-cgroup-fix.service": cgroupFixUnit,
		"etc/systemd/system/" + nodeimage.CRIProxyUnit: criProxyUnit,
		"usr/local/bin/ectest-init":                    ectestInit,
		"usr/local/bin/ectest-cgroup-fix":              cgroupFix,
		"etc/containerd/certs.d/.keep":                 "",
		"etc/kubernetes/manifests/.keep":               "",
		strings.TrimPrefix(nodeimage.NodeCNIPath, "/"): nodeCNI,
	}
	if !rt.IsCrio() {
		files["etc/systemd/system/ectest-import-images.service"] = importUnit
	}
	for p, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "usr/local/bin/") {
			mode = 0o755
		}
		if err := write(p, mode, content); err != nil {
			return err
		}
	}
	// systemd as kind's Dockerfile sets it up: no default wants, our units on.
	for _, g := range []string{"lib/systemd/system/multi-user.target.wants/*", "etc/systemd/system/*.wants/*", "lib/systemd/system/local-fs.target.wants/*",
		"lib/systemd/system/sockets.target.wants/*udev*", "lib/systemd/system/sockets.target.wants/*initctl*", "lib/systemd/system/basic.target.wants/*",
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service"} {
		matches, _ := filepath.Glob(filepath.Join(root, g))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
	units := []string{"kubelet.service", "containerd.service", "undo-mount-hacks.service", "ectest-import-images.service", "ectest-cgroup-fix.service", nodeimage.CRIProxyUnit}
	if rt.IsCrio() {
		// No containerd in a CRI-O node, and the CRI proxy's backend is
		// containerd's socket.
		units = []string{"kubelet.service", nodeimage.CrioUnit, "undo-mount-hacks.service", "ectest-import-images.service", "ectest-cgroup-fix.service"}
	}
	for _, u := range units {
		if err := link("/etc/systemd/system/"+u, "etc/systemd/system/multi-user.target.wants/"+u); err != nil {
			return err
		}
	}
	masked := []string{"etc/systemd/system/systemd-binfmt.service"}
	// A privileged node's systemd would apply non-namespaced sysctls
	// (fs.protected_*, kernel.*) to the host: mask the files that set them.
	for _, f := range []string{"50-default.conf", "50-pid-max.conf", "protect-links.conf"} {
		masked = append(masked, "etc/sysctl.d/"+f)
	}
	for _, m := range masked {
		if err := link("/dev/null", m); err != nil {
			return err
		}
	}
	if err := link("/usr/lib/systemd/systemd", "sbin/init"); err != nil {
		return err
	}
	journald := filepath.Join(root, "etc/systemd/journald.conf")
	if data, err := os.ReadFile(journald); err == nil && !strings.Contains(string(data), "ReadKMsg=no") {
		if err := os.WriteFile(journald, append(data, []byte("\nReadKMsg=no\n")...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// installCrio puts a CRI-O node's own files in place (kind/nodeimage,
// crio.go): crio.conf and the containers-* files, CRI-O's unit, the unit
// that copies kubeadm's images into CRI-O's storage with skopeo, and the
// running ectest binary as the node's pinns and runc wrapper (it must
// dispatch them by name, fixtures/programs, and find its libraries in the
// root filesystem). The binary is not part of the image's cache key, as the
// pause image it also carries is not.
func installCrio(root string, list ImageList, write func(string, os.FileMode, string) error, link func(string, string) error) error {
	if !programs.Dispatches() {
		return errors.New("the running binary does not dispatch the suite's programs (fixtures/programs), so it cannot be the node's pinns and runc wrapper")
	}
	var refs []string
	for _, r := range list {
		refs = append(refs, r)
	}
	for p, content := range nodeimage.NodeCrioFiles(list["pause"], refs) {
		if err := write(p, 0o644, content); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	data, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	rel := strings.TrimPrefix(nodeimage.NodeProgramsPath, "/")
	if err := write(rel, 0o755, string(data)); err != nil {
		return err
	}
	if missing, err := missingLibraries(root, rel); err != nil {
		return err
	} else if len(missing) > 0 {
		return fmt.Errorf("%s (the running ectest binary) needs %s, which the node's root filesystem lacks: build it with CGO_ENABLED=0", self, strings.Join(missing, ", "))
	}
	for _, l := range []string{nodeimage.NodePinnsPath, nodeimage.NodeOOMClampPath} {
		if err := link(filepath.Base(nodeimage.NodeProgramsPath), strings.TrimPrefix(l, "/")); err != nil {
			return err
		}
	}
	return nil
}
