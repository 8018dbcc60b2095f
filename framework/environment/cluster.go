package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/registry"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/kind"
	"github.com/ectest/ectest/kind/nodeimage"
	"github.com/ectest/ectest/runtimes"
	"github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ClusterEnvironment is what every parallel process of a cluster suite
// needs to know. It is serialized from process 1 to the others.
type ClusterEnvironment struct {
	RunID         string                 `json:"runID"`
	Kubeconfig    string                 `json:"kubeconfig"`
	Images        images.Set             `json:"images"`
	Registry      string                 `json:"registry"`
	AuditLog      string                 `json:"auditLog"`
	ServerVersion string                 `json:"serverVersion"`
	Runtime       capability.RuntimeInfo `json:"runtime"`
	// RuntimeClass is what every pod the specs create runs with ("" for
	// the cluster's default handler).
	RuntimeClass string            `json:"runtimeClass,omitempty"`
	Profile      *runtimes.Profile `json:"profile"`
	ReportDir    string            `json:"reportDir"`
	Managed      bool              `json:"managed"`
	// KindCluster is the kind cluster's name when its nodes can be reached
	// from here (a kind cluster made or reused by the suite; "" for one
	// given by kubeconfig).
	KindCluster string `json:"kindCluster,omitempty"`
	// Node is the name of the cluster's first node (on a kind cluster, its
	// node container's name too).
	Node string `json:"node"`
	// Kubectl is a kubectl within one minor version of the server ("" if none).
	Kubectl string `json:"kubectl"`
	// KubeletNodes are the nodes labelled with their kubelet's release
	// (kind.LabelKubeletVersion), newest first: a version-skew cluster's,
	// where the skew specs place their pods. Empty on other clusters.
	KubeletNodes []KubeletNode `json:"kubeletNodes,omitempty"`
	// DefaultNode is where the specs' pods run unless a spec places them
	// ("" leaves it to the scheduler): on a skew cluster, the node whose
	// kubelet is the API server's release, so the cluster layer judges
	// that kubelet only.
	DefaultNode string `json:"defaultNode,omitempty"`
	// EphemeralAPI is how the server serves pods/ephemeralcontainers, as its
	// discovery says (SKEW-2).
	EphemeralAPI kube.EphemeralAPI `json:"ephemeralAPI"`
}

// KubeletNode is a node of a version-skew cluster.
type KubeletNode struct {
	// Kubelet is the release the node's kubelet reports (and its label says).
	Kubelet      string                 `json:"kubelet"`
	Name         string                 `json:"name"`
	ControlPlane bool                   `json:"controlPlane,omitempty"`
	Runtime      capability.RuntimeInfo `json:"runtime"`
}

// KubeletNode is the node the skew specs use for a kubelet release: a
// worker where there is one, else a control plane (a skew pair's N).
func (e *ClusterEnvironment) KubeletNode(release string) (KubeletNode, bool) {
	var found []KubeletNode
	for _, n := range e.KubeletNodes {
		if n.Kubelet == release {
			found = append(found, n)
		}
	}
	for _, n := range found {
		if !n.ControlPlane {
			return n, true
		}
	}
	if len(found) > 0 {
		return found[0], true
	}
	return KubeletNode{}, false
}

// KubeletLayers are the matrix columns of a skew cluster's kubelets, with
// the runtime each node reports.
func (e *ClusterEnvironment) KubeletLayers() map[capability.Layer]capability.RuntimeInfo {
	if len(e.KubeletNodes) == 0 {
		return nil
	}
	out := map[capability.Layer]capability.RuntimeInfo{}
	for _, n := range e.KubeletNodes {
		if k, ok := e.KubeletNode(n.Kubelet); ok {
			out[capability.KubeletLayer(n.Kubelet)] = k.Runtime
		}
	}
	return out
}

// Marshal carries the environment to the other processes.
func (e *ClusterEnvironment) Marshal() []byte {
	b, _ := json.Marshal(e)
	return b
}

// UnmarshalCluster decodes what Marshal produced.
func UnmarshalCluster(b []byte) (*ClusterEnvironment, error) {
	var e ClusterEnvironment
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("cluster environment from process 1: %w", err)
	}
	return &e, nil
}

// ClusterHandle owns what UpCluster started.
type ClusterHandle struct {
	Env      *ClusterEnvironment
	cluster  *kind.Cluster
	registry *registry.Registry
	// client is the API client of Env.Kubeconfig, made once (clientset).
	client kubernetes.Interface
}

// UpCluster brings up (or reuses, or is given) the cluster, serves the
// suite's images where its nodes can pull them, and identifies the
// container runtime behind the kubelet.
func UpCluster(ctx context.Context, cfg *framework.Config, runID string, logf func(string, ...any)) (h *ClusterHandle, err error) {
	h = &ClusterHandle{Env: &ClusterEnvironment{RunID: runID, ReportDir: cfg.ReportDir}}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Down(context.Background(), true))
			h = nil
		}
	}()
	in, err := loadInputs(cfg)
	if err != nil {
		return h, err
	}
	if cfg.ClusterSource != "" {
		logf("cluster: %s", cfg.ClusterSource)
	}
	h.cluster, err = kind.Up(ctx, kind.Options{
		Kubeconfig: cfg.Kubeconfig, Name: cfg.ClusterName, NodeImage: cfg.KindNodeImage, KubernetesVersion: cfg.KubernetesVersion,
		NodeRuntime: cfg.NodeRuntime, Topology: kind.Topology(cfg.Topology), Keep: cfg.KeepCluster, Log: logf,
	})
	if err != nil {
		return h, err
	}
	h.Env.Kubeconfig, h.Env.AuditLog, h.Env.Managed = h.cluster.Kubeconfig, h.cluster.AuditLog, h.cluster.Managed()
	if h.Env.Managed {
		h.Env.KindCluster = h.cluster.Name
	}
	// The registry listens where the nodes can reach it: the kind network's
	// gateway, or what -registry-addr says for a cluster given by kubeconfig.
	addr := cfg.RegistryAddr
	if h.Env.Managed {
		gw, err := kind.NetworkGateway(ctx)
		if err != nil {
			return h, err
		}
		addr = net.JoinHostPort(gw, "0")
	}
	if h.registry, err = registry.Start(addr); err != nil {
		return h, err
	}
	h.Env.Registry = h.registry.Addr()
	if h.Env.Images, err = buildImages(ctx, cfg, in.images.For("linux", 0), h.Env.Registry, logf); err != nil {
		return h, err
	}
	if h.Env.Managed {
		if err := h.cluster.ConfigureRegistry(h.Env.Registry); err != nil {
			return h, err
		}
	}
	client, err := h.clientset()
	if err != nil {
		return h, err
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return h, fmt.Errorf("cluster at %s does not answer: %w", h.Env.Kubeconfig, err)
	}
	h.Env.ServerVersion = v.GitVersion
	if h.Env.EphemeralAPI, err = kube.DiscoverEphemeralAPI(client.Discovery()); err != nil {
		return h, fmt.Errorf("cluster at %s: %w", h.Env.Kubeconfig, err)
	}
	if why := h.Env.EphemeralAPI.Unsupported(); why != "" {
		logf("cluster %s: %s", h.Env.ServerVersion, why)
	}
	// The cluster's own nodes: not the Node objects the suite's specs
	// register for themselves (labelled with their run; WIN-4's Windows
	// node), which a run cut short by SIGKILL may have left.
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!" + kube.LabelRun})
	if err != nil || len(nodes.Items) == 0 {
		return h, fmt.Errorf("list nodes: %v (%d nodes)", err, len(nodes.Items))
	}
	node := nodes.Items[0]
	if h.Env.KubeletNodes, err = kubeletNodes(nodes.Items); err != nil {
		return h, err
	}
	if len(h.Env.KubeletNodes) > 0 {
		def := defaultKubeletNode(h.Env.KubeletNodes, v.GitVersion)
		h.Env.DefaultNode = def.Name
		for _, n := range nodes.Items {
			if n.Name == def.Name {
				node = n
			}
		}
		var list []string
		for _, n := range h.Env.KubeletNodes {
			list = append(list, fmt.Sprintf("%s on %s", n.Kubelet, n.Name))
		}
		logf("version-skew cluster: kubelets %s; the cluster layer's pods run on %s (kubelet %s)", strings.Join(list, ", "), def.Name, def.Kubelet)
	}
	h.Env.Runtime = nodeRuntime(node)
	h.Env.Node = node.Name
	// The rest of the stack: the RuntimeClass's handler, and for a node
	// image built here its runtime and the OCI runtime behind the handler,
	// as the binary in the node reports itself.
	handler := ""
	if cfg.RuntimeClass != "" {
		if handler, err = kube.RuntimeClassHandler(ctx, client, cfg.RuntimeClass); err != nil {
			return h, err
		}
		h.Env.RuntimeClass, h.Env.Runtime.RuntimeClass = cfg.RuntimeClass, cfg.RuntimeClass
	}
	h.Env.Runtime.Handler = handler
	if handler == "" {
		h.Env.Runtime.Handler = "default"
	}
	h.Env.Runtime.NodeRuntime = h.cluster.NodeRuntime
	if rt, err := nodeimage.LookupNodeRuntime(h.cluster.NodeRuntime); err == nil && h.cluster.NodeRuntime != "" && rt.Runtime.Node.Note != "" {
		// A cri-o node's pinns is the project's stand-in: every report says so.
		h.Env.Runtime.Note = rt.Runtime.Node.Note
	}
	h.Env.Runtime.OCIRuntime = h.cluster.OCIRuntimeVersion(handler)
	if h.Env.Managed {
		h.Env.Runtime.Cgroups = hostCgroups() // kind nodes share the host's
	}
	logf("cluster %s: %s", h.Env.ServerVersion, h.Env.Runtime.Stack())
	h.Env.Kubectl = findKubectl(ctx, cfg, v.GitVersion)
	if h.Env.Profile, _, err = runtimes.Resolve(cfg.Profile, in.profile, h.Env.Runtime.Name, h.Env.Runtime.OS, 0, handler); err != nil {
		return h, err
	}
	return h, nil
}

// kubeletNodes lists the nodes labelled with their kubelet release, newest
// kubelet first; a label its kubelet's own report contradicts is an error
// of the environment (the skew specs would judge the wrong kubelet).
func kubeletNodes(ns []corev1.Node) ([]KubeletNode, error) {
	var out []KubeletNode
	for _, n := range ns {
		label, ok := n.Labels[kind.LabelKubeletVersion]
		if !ok {
			continue
		}
		if reported := n.Status.NodeInfo.KubeletVersion; label != reported {
			return nil, fmt.Errorf("node %s is labelled %s=%s but its kubelet reports %s", n.Name, kind.LabelKubeletVersion, label, reported)
		}
		_, cp := n.Labels[kube.ControlPlaneRole]
		out = append(out, KubeletNode{Kubelet: label, Name: n.Name, ControlPlane: cp, Runtime: nodeRuntime(n)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		vi, ei := version.ParseGeneric(out[i].Kubelet)
		vj, ej := version.ParseGeneric(out[j].Kubelet)
		if ei != nil || ej != nil {
			return out[i].Kubelet > out[j].Kubelet
		}
		return vi.GreaterThan(vj)
	})
	return out, nil
}

// defaultKubeletNode is the node of a skew cluster the cluster layer's pods
// run on: one whose kubelet is the API server's release (the newest kubelet
// if none is), a worker rather than a control plane.
func defaultKubeletNode(ns []KubeletNode, serverVersion string) KubeletNode {
	release := strings.SplitN(serverVersion, "+", 2)[0]
	best := -1
	for i, n := range ns {
		if n.Kubelet != release {
			continue
		}
		if best < 0 || (ns[best].ControlPlane && !n.ControlPlane) {
			best = i
		}
	}
	if best < 0 {
		best = 0
		for i, n := range ns {
			if n.Kubelet == ns[0].Kubelet && !n.ControlPlane {
				best = i
				break
			}
		}
	}
	return ns[best]
}

// nodeRuntime reads the runtime from a node's status ("containerd://1.6.20").
func nodeRuntime(n corev1.Node) capability.RuntimeInfo {
	name, version, _ := strings.Cut(n.Status.NodeInfo.ContainerRuntimeVersion, "://")
	os := n.Status.NodeInfo.OperatingSystem
	if os == "" {
		os = runtime.GOOS
	}
	return capability.RuntimeInfo{Name: name, Version: version, APIVersion: "kubelet " + n.Status.NodeInfo.KubeletVersion, Endpoint: "node " + n.Name, OS: os,
		Kernel: n.Status.NodeInfo.KernelVersion}
}

// removeStoppedSandboxes removes, with remove, the stopped sandboxes of
// found, and returns the others (ready, or not removed, with why) as leak
// descriptions, and the ones it removed.
func removeStoppedSandboxes(found []kind.NodeSandbox, remove func(kind.NodeSandbox) error) (left, removed []string) {
	for _, sb := range found {
		if sb.Ready {
			left = append(left, sb.String())
		} else if err := remove(sb); err != nil {
			left = append(left, sb.String()+": "+err.Error())
		} else {
			removed = append(removed, sb.String())
		}
	}
	return left, removed
}

// waitGone polls left until it lists nothing, and returns what it lists
// once nothing of it has gone for drain: the run waits for as long as
// its deletions make progress, however slowly (the namespace controller
// sweeps every namespaced resource type of the API for each namespace, so
// a cluster with many of them takes longer per namespace), and what has
// not gone for drain while nothing else went counts as left behind, as
// does what is still there after limit.
func waitGone(ctx context.Context, drain, limit, poll time.Duration, left func() ([]string, error)) ([]string, error) {
	var last map[string]bool
	start := time.Now()
	progress := start
	for {
		now, err := left()
		if err != nil {
			return nil, err
		}
		if len(now) == 0 {
			return nil, nil
		}
		cur := make(map[string]bool, len(now))
		for _, s := range now {
			cur[s] = true
		}
		for s := range last {
			if !cur[s] {
				progress = time.Now() // something went (or changed phase)
				break
			}
		}
		last = cur
		if time.Since(progress) >= drain || time.Since(start) >= limit {
			return now, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// clientset is the API client of the handle's kubeconfig, made on first use
// and kept: the setup, the run's end (DeleteNamespaces, Leaks) use one.
func (h *ClusterHandle) clientset() (kubernetes.Interface, error) {
	if h.client == nil {
		_, client, err := kube.Connect(h.Env.Kubeconfig, nil)
		if err != nil {
			return nil, err
		}
		h.client = client
	}
	return h.client, nil
}

// DeleteNamespaces asks for every namespace of the run to be deleted, by
// the run's label, once every process is done: the specs' namespaces (a
// spec's cleanup deleted only their pods, kube.Framework), the node
// observers' (their process deleted it already, unless it died), and any a
// process left because it died before its end. It does not wait: Leaks does.
func (h *ClusterHandle) DeleteNamespaces(ctx context.Context) error {
	client, err := h.clientset()
	if err != nil {
		return err
	}
	return deleteRunNamespaces(ctx, client, h.Env.RunID)
}

// deleteRunNamespaces deletes the namespaces labelled with run that are not
// being deleted already.
func deleteRunNamespaces(ctx context.Context, client kubernetes.Interface, run string) error {
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + run})
	if err != nil {
		return fmt.Errorf("list the run's namespaces: %w", err)
	}
	var errs []error
	for _, n := range nss.Items {
		if n.DeletionTimestamp == nil {
			errs = append(errs, kube.DeleteNamespace(ctx, client, n.Name))
		}
	}
	return errors.Join(errs...)
}

// Leaks lists what of this run is still present once its asynchronous
// deletions stopped making progress for framework.Timeouts.Drain:
// namespaces (DeleteNamespaces asks for them to go and does not wait), pod
// sandboxes on the nodes of a kind cluster (the kubelet's teardown of the
// pods in them; pods made through kube.Framework.CreatePod carry the run's
// label, which the runtime keeps on their sandboxes; the copies kubectl
// debug --copy-to makes carry none, and only their namespace's deletion is
// waited for), Node objects (registered by specs) and cluster-scoped RBAC
// objects.
//
// Once the run's namespaces are gone, their pods' sandboxes are stopped at
// once, but the kubelet removes a deleted pod's last sandbox only in its
// garbage collection, once a minute: waiting for that would cost every run
// up to a minute of nothing. So the run removes its stopped sandboxes
// itself (kind.Cluster.RemoveStoppedSandbox), as that collection would, and
// a sandbox still ready, or stopped with a container that has not exited,
// is waited for and then reported. logf names the ones it removed.
func (h *ClusterHandle) Leaks(ctx context.Context, logf func(string, ...any)) ([]string, error) {
	client, err := h.clientset()
	if err != nil {
		return nil, err
	}
	sel := metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + h.Env.RunID}
	var removed []string
	out, err := waitGone(ctx, framework.DefaultTimeouts.Drain, framework.DefaultTimeouts.DrainLimit, framework.DefaultTimeouts.Poll*5, func() ([]string, error) {
		nss, err := client.CoreV1().Namespaces().List(ctx, sel)
		if err != nil {
			return nil, err
		}
		var left []string
		for _, n := range nss.Items {
			left = append(left, fmt.Sprintf("namespace %s (%s)", n.Name, n.Status.Phase))
		}
		if len(left) > 0 || h.cluster == nil {
			return left, nil
		}
		found, _, err := h.cluster.NodeSandboxes(kube.LabelRun, h.Env.RunID)
		if err != nil {
			return nil, err
		}
		var sandboxes, gone []string
		sandboxes, gone = removeStoppedSandboxes(found, h.cluster.RemoveStoppedSandbox)
		removed = append(removed, gone...)
		for _, s := range sandboxes {
			left = append(left, "pod sandbox on node "+s)
		}
		return left, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the run's namespaces and pod sandboxes to be gone: %w", err)
	}
	if len(removed) > 0 {
		logf("removed %d stopped pod sandboxes of this run's deleted pods from the nodes (the kubelet's garbage collection would, within a minute): %s", len(removed), strings.Join(removed, ", "))
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		out = append(out, "node "+n.Name)
	}
	crs, err := client.RbacV1().ClusterRoles().List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, r := range crs.Items {
		out = append(out, "clusterrole "+r.Name)
	}
	crbs, err := client.RbacV1().ClusterRoleBindings().List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for _, r := range crbs.Items {
		out = append(out, "clusterrolebinding "+r.Name)
	}
	return out, nil
}

// Down exports kind's logs when the run failed, deletes a cluster this run
// created (unless kept) and stops the registry.
func (h *ClusterHandle) Down(ctx context.Context, failed bool) error {
	var errs []error
	if h.cluster != nil {
		if failed && h.cluster.Managed() {
			errs = append(errs, h.cluster.ExportLogs(filepath.Join(h.Env.ReportDir, "kind-logs")))
		}
		errs = append(errs, h.cluster.Down())
	}
	if h.registry != nil {
		errs = append(errs, h.registry.Close())
	}
	return errors.Join(errs...)
}

// nodeRuntimeCheck is the environment probe of the nodes' container
// runtime, on a kind cluster whose nodes the suite reaches (none on a
// cluster given by kubeconfig): read from outside the runtime (systemd in
// each node), it must be running and must not have started again since
// the current spec began, and it must answer the node's crictl within
// Timeouts.EnvironmentProbe (a hung runtime is still active to systemd). A runtime that died or was restarted in the
// middle of a spec (R2) is no verdict on what that spec saw: its failure,
// or a nonconformance it recorded, is a run error that says when.
func nodeRuntimeCheck(kindCluster, runtimeName string) func() error {
	if kindCluster == "" {
		return func() error { return nil }
	}
	unit := "containerd"
	if runtimeName == "cri-o" {
		unit = "crio"
	}
	return func() error {
		units, err := kind.NodeRuntimeUnits(kindCluster, unit, 2*framework.DefaultTimeouts.EnvironmentProbe)
		if err != nil {
			return fmt.Errorf("the kind cluster's nodes cannot be read: %w", err)
		}
		if err := runtimeUnitsProblem(units, unit, ginkgo.CurrentSpecReport().StartTime); err != nil {
			return err
		}
		if err := kind.NodeRuntimesAnswer(kindCluster, framework.DefaultTimeouts.EnvironmentProbe); err != nil {
			return fmt.Errorf("the runtime went away: %w", err)
		}
		return nil
	}
}

// runtimeUnitsProblem says why the nodes' runtime units break a spec that
// began at since (nil when they do not).
func runtimeUnitsProblem(units []kind.RuntimeUnit, unit string, since time.Time) error {
	for _, u := range units {
		// reloading: CRI-O reloads its registries when the suite adds its
		// own (kind.ConfigureRegistry) and keeps running.
		if u.Active != "active" && u.Active != "reloading" {
			return fmt.Errorf("the container runtime of node %s went away: %s.service is %s (systemd in the node)", u.Node, unit, u.Active)
		}
		if !since.IsZero() && !u.Started.IsZero() && !u.Started.Before(since.Truncate(time.Second)) {
			return fmt.Errorf("the container runtime of node %s went away during the spec: %s.service started again at %s (pid %s), after the spec began at %s",
				u.Node, unit, u.Started.Format("15:04:05"), u.PID, since.Format("15:04:05.000"))
		}
	}
	return nil
}

// clusterCheck is the environment probe of a cluster session: the API
// server must say it is ready, and the registry must answer.
func clusterCheck(client kubernetes.Interface, registryAddr string) func() error {
	return func() error {
		if err := apiServerReady(client, framework.DefaultTimeouts); err != nil {
			return err
		}
		return registryCheck(registryAddr)()
	}
}

// apiServerReady is nil once the API server answers /readyz, asked again
// for up to Timeouts.EnvironmentSettle: on a loaded machine its etcd check
// fails now and then for a moment ("[-]etcd failed" on a 2-CPU machine
// beside other clusters' runs, five specs of a skew run made run errors
// while their pods were about to run), which is no broken environment.
func apiServerReady(client kubernetes.Interface, t framework.Timeouts) error {
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), t.Poll, t.EnvironmentSettle, true, func(context.Context) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), t.EnvironmentProbe)
		defer cancel()
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			last = fmt.Errorf("the API server is not ready: %v %s", err, strings.TrimSpace(string(body)))
		}
		return err == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (for %s)", last, t.EnvironmentSettle)
	}
	return nil
}

// Session connects one parallel process to the cluster.
func (e *ClusterEnvironment) Session() (*kube.Session, error) {
	c, client, err := kube.Connect(e.Kubeconfig, func(c *rest.Config) { c.QPS, c.Burst = 50, 100 })
	if err != nil {
		return nil, err
	}
	return &kube.Session{
		Config: c, Client: client, Images: e.Images, Registry: e.Registry, RunID: e.RunID, Timeouts: framework.DefaultTimeouts, RuntimeClass: e.RuntimeClass, Node: e.DefaultNode,
		OwnDebugImage: images.Built(e.Images[images.Debug], images.Debug, e.Registry),
		Checker: &capability.Checker{Declared: e.Profile.Capabilities, Layer: capability.LayerCluster,
			Environment: allChecks(clusterCheck(client, e.Registry), nodeRuntimeCheck(e.KindCluster, e.Runtime.Name))},
	}, nil
}

// findKubectl picks a kubectl within one minor version of the server: the
// one built for the cluster's version (cached by the node-image builder),
// else one on PATH.
func findKubectl(ctx context.Context, cfg *framework.Config, serverVersion string) string {
	var candidates []string
	if v, err := nodeimage.ParseVersion(strings.TrimPrefix(strings.SplitN(serverVersion, "+", 2)[0], "v")); err == nil {
		// The builder's cache (<user cache dir>/ectest/bin/kubernetes-<v>-<key>),
		// looked up without the builder: any build of v serves.
		if cache, err := os.UserCacheDir(); err == nil {
			found, _ := filepath.Glob(filepath.Join(cache, "ectest", "bin", "kubernetes-"+v.String()+"-*", "kubectl"))
			candidates = append(candidates, found...)
		}
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		candidates = append(candidates, p)
	}
	server, err := version.ParseGeneric(serverVersion)
	if err != nil {
		return ""
	}
	for _, c := range candidates {
		out, err := exec.CommandContext(ctx, c, "version", "--client", "-o", "json").Output()
		if err != nil {
			continue
		}
		var cv struct {
			ClientVersion struct{ GitVersion string } `json:"clientVersion"`
		}
		if json.Unmarshal(out, &cv) != nil {
			continue
		}
		client, err := version.ParseGeneric(cv.ClientVersion.GitVersion)
		if err == nil && client.Major() == server.Major() && absDiff(client.Minor(), server.Minor()) <= 1 {
			return c
		}
	}
	return ""
}

func absDiff(a, b uint) uint {
	if a > b {
		return a - b
	}
	return b - a
}
