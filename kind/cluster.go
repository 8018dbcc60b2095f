package kind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ectest/ectest/internal/flock"
	"github.com/ectest/ectest/internal/progress"
	"github.com/ectest/ectest/kind/host"
	"github.com/ectest/ectest/kind/nodeimage"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// DefaultName is the suite's cluster name (kind prefixes node containers with it).
const DefaultName = "ectest"

// Options say which cluster to use or make.
type Options struct {
	// Kubeconfig names an existing cluster: nothing is created or deleted.
	Kubeconfig string
	// Name of the kind cluster (DefaultName if empty).
	Name string
	// NodeImage is used as given (a stock kindest/node, say); empty builds
	// the node image for KubernetesVersion offline.
	NodeImage string
	// KubernetesVersion of the offline-built node image.
	KubernetesVersion string
	// NodeRuntime names the offline-built node image's container runtime
	// (nodeimage.NodeRuntimes; nodeimage.DefaultNodeRuntime if empty).
	NodeRuntime string
	// CRIProxy puts the fault-injecting CRI proxy (a SELF-TEST tool)
	// between the kubelet and containerd of a cluster made here; nil for none.
	CRIProxy *CRIProxy
	// OCIFault makes the node's containerd run the fault-injecting OCI
	// runtime wrapper (a SELF-TEST tool) as its runc, in a cluster made
	// here; nil for none. It needs CRIProxy too (see OCIFault).
	OCIFault *OCIFault
	// Topology says which nodes to make (TopologySingle if empty); the
	// name defaults to the topology's (Topology.DefaultName).
	Topology Topology
	// Keep leaves a created cluster running after Down.
	Keep bool
	// RetainOnFailure keeps the nodes of a creation that failed, to look
	// into (kubelet and container logs); ectest-kind down removes them.
	RetainOnFailure bool
	// Images makes or finds the node images (Built if nil: only images
	// built before; ectest-kind hands the builder).
	Images NodeImages
	// StateDir holds the kubeconfig, audit policy and audit log
	// (<user cache dir>/ectest/clusters/<name> if empty).
	StateDir string
	Log      func(format string, args ...any)
}

// CRIProxy says which fault the node's CRI proxy injects, and which binary
// runs it: one that dispatches fixtures/criproxy's program by argv[0]
// (ectest-kind, ectest-mutation; never a suite binary). It is copied into
// the cluster's state directory and mounted into the node, so one node
// image serves every fault.
type CRIProxy struct {
	Fault  string
	Binary string
}

// Cluster is a cluster the suites can use.
type Cluster struct {
	Name       string
	Kubeconfig string
	// AuditLog is the API server's audit log on this host ("" for clusters
	// given by kubeconfig).
	AuditLog string
	// NodeRuntime is the node runtime of a node image built here ("" for
	// clusters given by kubeconfig or made from a given node image).
	NodeRuntime string
	// CRIProxyFault is the fault of the node's CRI proxy ("" for none).
	CRIProxyFault string
	// OCIFault is the fault of the OCI runtime wrapper the node's
	// containerd runs as its runc ("" for none).
	OCIFault string
	created  bool
	keep     bool
	provider *kindcluster.Provider
	log      func(format string, args ...any)
}

// Up returns the cluster to use: the one given by kubeconfig, the kind
// cluster of that name if it already runs, or a new one.
func Up(ctx context.Context, o Options) (_ *Cluster, err error) {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		return &Cluster{Kubeconfig: o.Kubeconfig, log: logf}, nil
	}
	topo, err := ParseTopology(string(o.Topology))
	if err != nil {
		return nil, err
	}
	if o.Name == "" {
		o.Name = topo.DefaultName()
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = nodeimage.DefaultKubernetesVersion
	}
	v, err := nodeimage.ParseVersion(o.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	workers, err := topo.Workers(v)
	if err != nil {
		return nil, err
	}
	if len(workers) > 0 && o.NodeImage != "" {
		return nil, fmt.Errorf("topology %s: its workers' node images are built here (each with its own kubelet); -kind-node-image does not apply", topo)
	}
	rt, err := nodeimage.LookupNodeRuntime(o.NodeRuntime)
	if err != nil {
		return nil, err
	}
	if err := host.Prepare(ctx, host.Options{Log: logf}); err != nil {
		return nil, fmt.Errorf("host preparation: %w", err)
	}
	if o.StateDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, err
		}
		o.StateDir = filepath.Join(cache, "ectest", "clusters", o.Name)
	}
	c := &Cluster{
		Name: o.Name, Kubeconfig: filepath.Join(o.StateDir, "kubeconfig"),
		AuditLog: filepath.Join(o.StateDir, "audit", AuditLogFile),
		keep:     o.Keep, log: logf,
		provider: kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{logf})),
	}
	existing, err := c.provider.List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	for _, n := range existing {
		if n != o.Name {
			continue
		}
		why, err := c.notRunning()
		if err != nil {
			return nil, err
		}
		if why != "" {
			// Left by a run cut short and stopped since (a docker or
			// machine restart): nothing of it can serve, and its name is
			// the suite's own, so it is made anew.
			logf("kind cluster %q cannot be reused: %s; deleting it and making it anew", o.Name, why)
			if err := Delete(o.Name, logf); err != nil {
				return nil, err
			}
			break
		}
		if c.NodeRuntime, err = c.nodeFile(nodeimage.NodeRuntimeFile); err != nil {
			return nil, err
		}
		if o.NodeImage == "" && c.NodeRuntime != "" && c.NodeRuntime != rt.Name {
			return nil, fmt.Errorf("kind cluster %q runs the node runtime %s, not %s: delete it (ectest-kind down -name %s) or give another -name", o.Name, c.NodeRuntime, rt.Name, o.Name)
		}
		if c.CRIProxyFault, err = c.nodeFile(strings.TrimPrefix(nodeimage.CRIProxyDir+"/"+nodeimage.CRIProxyFault, "/")); err != nil {
			return nil, err
		}
		if o.CRIProxy != nil && o.CRIProxy.Fault != c.CRIProxyFault {
			return nil, fmt.Errorf("kind cluster %q runs the CRI proxy fault %q, not %q: delete it (ectest-kind down -name %s) or give another -name", o.Name, c.CRIProxyFault, o.CRIProxy.Fault, o.Name)
		}
		if c.OCIFault, err = c.nodeFile(strings.TrimPrefix(NodeOCIFaultDir+"/"+ociFaultFaultFile, "/")); err != nil {
			return nil, err
		}
		// A self-test (proxy or wrapper asked for) must get the wrapper
		// fault it asked for, none included; a suite run reusing the
		// cluster is told, as for the proxy.
		if want := ociFaultName(o.OCIFault); (o.OCIFault != nil || o.CRIProxy != nil) && want != c.OCIFault {
			return nil, fmt.Errorf("kind cluster %q runs the OCI runtime wrapper's fault %q, not %q: delete it (ectest-kind down -name %s) or give another -name", o.Name, c.OCIFault, want, o.Name)
		}
		if c.OCIFault != "" {
			logf("SELF-TEST: kind cluster %q's containerd runs the fault-injecting OCI runtime wrapper with the fault %q as its runc", o.Name, c.OCIFault)
		}
		if c.CRIProxyFault != "" {
			logf("SELF-TEST: kind cluster %q runs the fault-injecting CRI proxy with the fault %q between its kubelet and containerd; reports made on it say so", o.Name, c.CRIProxyFault)
		}
		logf("reusing kind cluster %q (node runtime %s)", o.Name, orUnknown(c.NodeRuntime))
		// Runs that reuse one cluster at once (the self-test's parallel
		// Ctrl-C cases) export its kubeconfig one at a time: kind's own
		// lock on the file fails at once when another holds it.
		if err := os.MkdirAll(filepath.Dir(c.Kubeconfig), 0o755); err != nil {
			return nil, err
		}
		unlock, err := flock.Lock(c.Kubeconfig + ".ectest-lock")
		if err != nil {
			return nil, err
		}
		err = c.provider.ExportKubeConfig(o.Name, c.Kubeconfig, false)
		unlock()
		if err != nil {
			return nil, err
		}
		if topo != TopologySingle {
			if err := checkTopology(ctx, c.Kubeconfig, topo, v, workers); err != nil {
				return nil, fmt.Errorf("kind cluster %q is not the %s topology asked for: %w; delete it (ectest-kind down -name %s) or give another -name", o.Name, topo, err, o.Name)
			}
			if err := c.routePodSubnets(); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	image := o.NodeImage
	var workerConfigs []WorkerConfig
	if image == "" {
		b := o.Images
		if b == nil {
			b = Built{}
		}
		if image, err = b.NodeImage(ctx, v, rt); err != nil {
			return nil, err
		}
		c.NodeRuntime = rt.Name
		if len(workers) > 0 {
			logf("topology %s: control plane %s, workers with the kubelets %s", topo, v, versionList(workers))
		}
		for i, w := range workers {
			ref, err := b.WorkerImage(ctx, v, w, rt)
			if err != nil {
				return nil, err
			}
			cni := filepath.Join(o.StateDir, "cni", fmt.Sprintf("worker-%d.conflist", i+1))
			if err := os.MkdirAll(filepath.Dir(cni), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(cni, []byte(nodeimage.NodeCNI(nodeSubnet(i+1))), 0o644); err != nil {
				return nil, err
			}
			workerConfigs = append(workerConfigs, WorkerConfig{Image: ref, Labels: map[string]string{LabelKubeletVersion: w.String()}, CNIConfig: cni})
		}
	}
	var cpLabels map[string]string
	if len(workers) > 0 {
		cpLabels = map[string]string{LabelKubeletVersion: v.String()}
	}
	policyDir := filepath.Join(o.StateDir, "audit-policy")
	for _, d := range []string{policyDir, filepath.Dir(c.AuditLog)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(policyDir, "policy.yaml"), auditPolicy, 0o644); err != nil {
		return nil, err
	}
	if rt.IsCrio() && o.NodeImage == "" && (o.CRIProxy != nil || o.OCIFault != nil) {
		// Both self-tests sit in front of containerd (the proxy's backend
		// is its socket, the wrapper is patched into its configuration).
		return nil, fmt.Errorf("the CRI proxy and the OCI runtime wrapper run in front of containerd, not the node runtime %s", rt.Name)
	}
	criSocket := ""
	if o.NodeImage == "" && rt.IsCrio() {
		criSocket = rt.CRISocket()
	}
	proxyDir := ""
	if o.CRIProxy != nil {
		if o.NodeImage != "" {
			return nil, errors.New("the CRI proxy needs a node image built here (its unit is in it), not -kind-node-image")
		}
		if topo != TopologySingle {
			// The kubelet setting that points at the proxy is cluster-wide,
			// and only the control plane mounts the proxy.
			return nil, fmt.Errorf("the CRI proxy runs on single-node clusters only, not -topology %s", topo)
		}
		if proxyDir, err = stageCRIProxy(filepath.Join(o.StateDir, "criproxy"), *o.CRIProxy); err != nil {
			return nil, err
		}
		c.CRIProxyFault = o.CRIProxy.Fault
		logf("SELF-TEST: the fault-injecting CRI proxy with the fault %q goes between the kubelet and containerd of kind cluster %q", o.CRIProxy.Fault, o.Name)
	}
	ociDir := ""
	if o.OCIFault != nil {
		if o.CRIProxy == nil {
			// The proxy's version marker is what makes a report say SELF-TEST.
			return nil, errors.New("the OCI runtime wrapper needs the CRI proxy too (forwarding unchanged), whose runtime version marker makes the reports say SELF-TEST")
		}
		if topo != TopologySingle {
			return nil, fmt.Errorf("the OCI runtime wrapper runs on single-node clusters only, not -topology %s", topo)
		}
		if ociDir, err = stageOCIFault(filepath.Join(o.StateDir, "ocifault"), *o.OCIFault); err != nil {
			return nil, err
		}
		c.OCIFault = o.OCIFault.Fault
		logf("SELF-TEST: the node containerd of kind cluster %q runs the fault-injecting OCI runtime wrapper with the fault %q as its runc", o.Name, o.OCIFault.Fault)
	}
	cgroupfs, err := cgroupfsConfig(o, rt)
	if err != nil {
		return nil, err
	}
	if cgroupfs != nil {
		logf("cgroup v1 host: the nodes' kubelet and %s use the cgroupfs driver (runc's systemd driver freezes each new container's cgroup, which the v1 freezer fails under load: 'unable to freeze')", orUnknown(c.NodeRuntime))
	}
	cfg := Config(ConfigOptions{
		Name: o.Name, NodeImage: image, Kubernetes: v, CgroupV1: hostCgroupV1(), Cgroupfs: cgroupfs,
		AuditPolicyDir: policyDir, AuditLogDir: filepath.Dir(c.AuditLog),
		OwnCNI: o.NodeImage == "", CRISocket: criSocket, CRIProxyDir: proxyDir, OCIFaultDir: ociDir, Labels: cpLabels, Workers: workerConfigs,
	})
	step := progress.StartExpect(logf, fmt.Sprintf("creating kind cluster %q from %s", o.Name, image), "about 1 to 2 min, up to 4 min for each node to be Ready")
	defer step.End(&err)
	err = c.provider.Create(o.Name,
		kindcluster.CreateWithRawConfig([]byte(cfg)),
		kindcluster.CreateWithKubeconfigPath(c.Kubeconfig),
		kindcluster.CreateWithWaitForReady(4*time.Minute),
		kindcluster.CreateWithDisplayUsage(false),
		kindcluster.CreateWithDisplaySalutation(false),
		kindcluster.CreateWithRetain(o.RetainOnFailure),
	)
	if err != nil {
		return nil, fmt.Errorf("create kind cluster %q: %w%s", o.Name, err, commandOutputTail(err, 25))
	}
	c.created = true
	if c.OCIFault != "" {
		if err := c.checkOCIFault(); err != nil {
			return nil, errors.Join(err, Delete(o.Name, logf))
		}
	}
	if o.NodeImage == "" {
		if err := createRuntimeClasses(ctx, c.Kubeconfig, rt); err != nil {
			return nil, errors.Join(err, Delete(o.Name, logf))
		}
	}
	if len(workers) > 0 {
		if err := c.routePodSubnets(); err != nil {
			return nil, errors.Join(err, Delete(o.Name, logf))
		}
		if err := waitNodesReady(ctx, c.Kubeconfig, 1+len(workers), 4*time.Minute); err != nil {
			return nil, errors.Join(fmt.Errorf("kind cluster %q: %w", o.Name, err), Delete(o.Name, logf))
		}
		if err := checkTopology(ctx, c.Kubeconfig, topo, v, workers); err != nil {
			return nil, errors.Join(fmt.Errorf("kind cluster %q: %w", o.Name, err), Delete(o.Name, logf))
		}
	}
	step.Done(nil)
	logf("kind cluster %q ready (node runtime %s); kubeconfig: %s", o.Name, orUnknown(c.NodeRuntime), c.Kubeconfig)
	return c, nil
}

// commandOutputTail is the end of the output of the command inside a node
// that failed (kubeadm init, say), which kind keeps in the error but does
// not print: without it a failed creation says only "exit status 1".
func commandOutputTail(err error, lines int) string {
	re := kindexec.RunErrorForError(err)
	if re == nil || len(re.Output) == 0 {
		return ""
	}
	out := strings.Split(strings.TrimRight(string(re.Output), "\n"), "\n")
	if len(out) > lines {
		out = out[len(out)-lines:]
	}
	return "\n  its last output:\n    " + strings.Join(out, "\n    ")
}

// stageCRIProxy copies the proxy's program and writes its fault into dir,
// which the node mounts at nodeimage.CRIProxyDir.
func stageCRIProxy(dir string, p CRIProxy) (string, error) {
	if p.Fault == "" || p.Binary == "" {
		return "", errors.New("the CRI proxy needs a fault and the binary that runs it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := os.ReadFile(p.Binary)
	if err != nil {
		return "", fmt.Errorf("the CRI proxy's program: %w", err)
	}
	prog := filepath.Join(dir, nodeimage.CRIProxyProgram)
	_ = os.Remove(prog)
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, nodeimage.CRIProxyFault), []byte(p.Fault+"\n"), 0o644)
}

// ociFaultName is the wrapper's fault asked for ("" for none).
func ociFaultName(f *OCIFault) string {
	if f == nil {
		return ""
	}
	return f.Fault
}

func versionList(vs []nodeimage.Version) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// routePodSubnets routes pod subnets between the cluster's nodes.
func (c *Cluster) routePodSubnets() error {
	ns, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return err
	}
	return routePodSubnets(ns)
}

// waitNodesReady waits until want nodes report Ready: kind waits for the
// control plane only.
func waitNodesReady(ctx context.Context, kubeconfig string, want int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		ns, err := listNodes(ctx, kubeconfig)
		ready := 0
		var states []string
		for _, n := range ns {
			ok := false
			for _, cond := range n.Status.Conditions {
				ok = ok || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
			}
			if ok {
				ready++
			}
			states = append(states, fmt.Sprintf("%s (kubelet %s) ready=%v", n.Name, n.Status.NodeInfo.KubeletVersion, ok))
		}
		if err != nil {
			last = err.Error()
		} else {
			last = strings.Join(states, "; ")
		}
		if err == nil && ready == want && len(ns) == want {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not all %d nodes Ready after %s: %s", want, timeout, last)
		case <-time.After(2 * time.Second):
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown: not a node image built here"
	}
	return s
}

// createRuntimeClasses makes the RuntimeClass objects of the node
// runtime's extra handlers (gvisor for runsc).
func createRuntimeClasses(ctx context.Context, kubeconfig string, rt nodeimage.NodeRuntime) error {
	if len(rt.RuntimeClasses) == 0 {
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, name := range rt.RuntimeClassNames() {
		rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"ectest.io/node-runtime": rt.Name}}, Handler: rt.RuntimeClasses[name]}
		if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create RuntimeClass %s (handler %s): %w", name, rc.Handler, err)
		}
	}
	return nil
}

// nodeFile reads a file of the cluster's first node ("" if it has none).
func (c *Cluster) nodeFile(path string) (string, error) {
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return "", err
	}
	if len(nodes) == 0 {
		return "", fmt.Errorf("kind cluster %q has no nodes", c.Name)
	}
	var out strings.Builder
	cmd := nodes[0].Command("sh", "-c", "cat /"+path+" 2>/dev/null || true")
	cmd.SetStdout(&out)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("node %s: read /%s: %w", nodes[0], path, err)
	}
	return strings.TrimSpace(out.String()), nil
}

// OCIRuntimeVersion is "runc 1.5.2" for the OCI runtime behind a runtime
// handler ("" for the default) on the cluster's first node, as that binary
// reports itself; "" when this run cannot tell (a cluster given by
// kubeconfig, a stock node image).
func (c *Cluster) OCIRuntimeVersion(handler string) string {
	rt, err := nodeimage.LookupNodeRuntime(c.NodeRuntime)
	if c.provider == nil || c.NodeRuntime == "" || err != nil || rt.OCIRuntimes[handler] == "" {
		return ""
	}
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil || len(nodes) == 0 {
		return ""
	}
	var out strings.Builder
	cmd := nodes[0].Command(rt.OCIRuntimes[handler], "--version")
	cmd.SetStdout(&out)
	if cmd.Run() != nil {
		return ""
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	return strings.TrimSpace(strings.Replace(first, " version ", " ", 1))
}

// NodeSandbox is a pod sandbox on a node of a kind cluster, as the node's
// crictl lists it.
type NodeSandbox struct {
	Node, ID, Namespace, Name string
	// Ready is the sandbox's state: a sandbox of a deleted pod is stopped
	// (not ready) by the kubelet at once and removed by its garbage
	// collection, which runs once a minute.
	Ready bool
	node  nodes.Node // where RemoveStoppedSandbox runs crictl
}

func (s NodeSandbox) String() string {
	state := "ready"
	if !s.Ready {
		state = "stopped"
	}
	return fmt.Sprintf("%s/%.13s %s/%s (%s)", s.Node, s.ID, s.Namespace, s.Name, state)
}

// NodeSandboxes lists, on every node of a kind cluster, the pod sandboxes
// that carry the label key=value (the node's crictl, as kind's own node
// images carry it). ok is false when the nodes cannot be reached from here
// (a cluster given by kubeconfig).
func (c *Cluster) NodeSandboxes(key, value string) (found []NodeSandbox, ok bool, err error) {
	if c.provider == nil {
		return nil, false, nil
	}
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return nil, true, err
	}
	for _, n := range nodes {
		out, err := nodeCommand(n, time.Minute, "crictl", "pods", "--label", key+"="+value, "-o", "json")
		if err != nil {
			return found, true, fmt.Errorf("node %s: crictl pods: %w", n, err)
		}
		var list struct {
			Items []struct {
				ID       string `json:"id"`
				Metadata struct{ Name, Namespace string }
				State    string `json:"state"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return found, true, fmt.Errorf("node %s: crictl pods: %w", n, err)
		}
		for _, p := range list.Items {
			found = append(found, NodeSandbox{Node: n.String(), ID: p.ID, Namespace: p.Metadata.Namespace, Name: p.Metadata.Name, Ready: p.State == "SANDBOX_READY", node: n})
		}
	}
	return found, true, nil
}

// RemoveStoppedSandbox removes a stopped sandbox from its node (crictl rmp),
// as the kubelet's garbage collection would remove the sandbox of a deleted
// pod, but only when every container in it has exited: a sandbox that is
// ready, or holds a container running, created or in a state the runtime
// does not know, is not a leftover for the garbage collector but something
// that may still be alive, and the error says why.
func (c *Cluster) RemoveStoppedSandbox(s NodeSandbox) error {
	if s.Ready {
		return errors.New("it is ready")
	}
	if s.node == nil {
		return errors.New("not listed by NodeSandboxes: its node is not known")
	}
	n := s.node
	out, err := nodeCommand(n, time.Minute, "crictl", "ps", "-a", "--pod", s.ID, "-o", "json")
	if err != nil {
		return fmt.Errorf("node %s: crictl ps: %w", n, err)
	}
	var list struct {
		Containers []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"containers"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return fmt.Errorf("node %s: crictl ps: %w", n, err)
	}
	var busy []string
	for _, c := range list.Containers {
		if c.State != "CONTAINER_EXITED" {
			busy = append(busy, fmt.Sprintf("%.13s (%s)", c.ID, c.State))
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("it is stopped, but its containers %s have not exited", strings.Join(busy, ", "))
	}
	if _, err := nodeCommand(n, time.Minute, "crictl", "rmp", s.ID); err != nil {
		return fmt.Errorf("node %s: crictl rmp %s: %w", n, s.ID, err)
	}
	return nil
}

// nodeCommand runs argv in a kind node within timeout and returns its
// stdout; the error holds its stderr.
func nodeCommand(n nodes.Node, timeout time.Duration, argv ...string) (string, error) {
	var out, errOut strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := n.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SetStdout(&out)
	cmd.SetStderr(&errOut)
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// NodeRuntimesAnswer asks, on every node of the kind cluster name, the
// node's container runtime for its version through its CRI socket (the
// node's crictl, as the kubelet reaches it), within timeout: a runtime
// that hangs answers nothing while systemd still calls it active.
func NodeRuntimesAnswer(name string, timeout time.Duration) error {
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	nodes, err := p.ListNodes(name)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		var b strings.Builder
		// docker exec itself is bounded too: a hung node must not hang the
		// spec that asks.
		ctx, cancel := context.WithTimeout(context.Background(), 2*timeout)
		cmd := n.CommandContext(ctx, "crictl", "--timeout", timeout.String(), "version")
		cmd.SetStdout(&b)
		cmd.SetStderr(&b)
		err := cmd.Run()
		cancel()
		if err != nil {
			return fmt.Errorf("the container runtime of node %s did not answer crictl version within %s: %s", n, timeout, lastLine(b.String()))
		}
	}
	return nil
}

// RuntimeUnit is a node's container runtime service, as systemd in the
// node reports it.
type RuntimeUnit struct {
	Node string
	// Active is the unit's ActiveState (active, activating, failed, ...).
	Active string
	// Started is when its main process last started (ExecMainStartTimestamp,
	// to the second; zero when systemd does not say); PID is that process.
	Started time.Time
	PID     string
}

// NodeRuntimeUnits reads, on every node of the kind cluster name, the
// systemd unit of the node's container runtime (containerd or crio): seen
// from outside the runtime, whether it runs and since when.
func NodeRuntimeUnits(name, unit string, timeout time.Duration) ([]RuntimeUnit, error) {
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker())
	nodes, err := p.ListNodes(name)
	if err != nil {
		return nil, err
	}
	var out []RuntimeUnit
	for _, n := range nodes {
		// Unix timestamps: no time zone of the node's to get wrong.
		show, err := nodeCommand(n, timeout, "systemctl", "show", "--timestamp=unix", "-p", "ActiveState", "-p", "ExecMainStartTimestamp", "-p", "ExecMainPID", unit)
		if err != nil {
			return nil, fmt.Errorf("node %s: systemctl show %s: %w", n, unit, err)
		}
		u := RuntimeUnit{Node: n.String()}
		for _, line := range strings.Split(show, "\n") {
			k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
			switch k {
			case "ActiveState":
				u.Active = v
			case "ExecMainPID":
				u.PID = v
			case "ExecMainStartTimestamp":
				if sec, err := strconv.ParseInt(strings.TrimPrefix(v, "@"), 10, 64); err == nil && sec > 0 {
					u.Started = time.Unix(sec, 0)
				}
			}
		}
		out = append(out, u)
	}
	return out, nil
}

// Down deletes a cluster this run created, unless asked to keep it.
func (c *Cluster) Down() error {
	if c.provider == nil || !c.created || c.keep {
		return nil
	}
	return Delete(c.Name, c.log)
}

// Delete removes the named kind cluster (and its docker network when it is
// the last cluster on it).
func Delete(name string, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	p := kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger{logf}))
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(cache, "ectest", "clusters", name, "kubeconfig")
	var errs []error
	errs = append(errs, p.Delete(name, kubeconfig))
	errs = append(errs, os.RemoveAll(filepath.Dir(kubeconfig)))
	errs = append(errs, removeIdleKindNetwork(logf))
	return errors.Join(errs...)
}

// removeIdleKindNetwork deletes kind's docker network once no container is
// attached to it (kind itself keeps it); kind recreates it when needed.
func removeIdleKindNetwork(logf func(string, ...any)) error {
	out, err := exec.Command("docker", "network", "inspect", "kind", "-f", "{{len .Containers}}").Output()
	if err != nil {
		return nil // no such network
	}
	if strings.TrimSpace(string(out)) != "0" {
		return nil
	}
	if out, err := exec.Command("docker", "network", "rm", "kind").CombinedOutput(); err != nil {
		return fmt.Errorf("docker network rm kind: %v: %s", err, out)
	}
	logf("removed the idle docker network \"kind\"")
	return nil
}

// ExportLogs writes kind's log export into dir.
func (c *Cluster) ExportLogs(dir string) error {
	if c.provider == nil {
		return nil
	}
	return c.provider.CollectLogs(c.Name, dir)
}

// ConfigureRegistry lets every node pull from a plain-HTTP registry at
// hostPort (the suite's registry on the kind network's gateway).
func (c *Cluster) ConfigureRegistry(hostPort string) error {
	if c.provider == nil {
		return errors.New("configure registry: not a kind cluster this run manages")
	}
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return err
	}
	toml := fmt.Sprintf("server = \"http://%s\"\n\n[host.\"http://%s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", hostPort, hostPort)
	for _, n := range nodes {
		dir := "/etc/containerd/certs.d/" + hostPort
		cmd := n.Command("sh", "-c", "mkdir -p "+dir+" && cat > "+dir+"/hosts.toml")
		cmd.SetStdin(strings.NewReader(toml))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("node %s: write registry config: %w", n, err)
		}
		// A CRI-O node (it has the registries drop-in directory) reads a
		// registries.conf drop-in, once CRI-O is told to reload (SIGHUP:
		// CRI-O's ReloadRegistries).
		conf := nodeimage.NodeRegistriesDir + "/ectest-" + strings.NewReplacer(":", "-", "/", "-").Replace(hostPort) + ".conf"
		cmd = n.Command("sh", "-c", "[ -d "+nodeimage.NodeRegistriesDir+" ] || exit 0; cat > "+conf+" && systemctl reload "+nodeimage.CrioUnit)
		cmd.SetStdin(strings.NewReader(nodeimage.NodeRegistryConf(hostPort)))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("node %s: write CRI-O's registry config: %w", n, err)
		}
	}
	return nil
}

// notRunning says why an existing cluster of c's name cannot be reused
// ("" when it can): a node container that has stopped (exited, or never
// started). Not being able to tell is an error, never a reason to delete.
func (c *Cluster) notRunning() (string, error) {
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return "", fmt.Errorf("list the nodes of kind cluster %q: %w", c.Name, err)
	}
	for _, n := range nodes {
		out, err := exec.Command("docker", "inspect", "-f", "{{.State.Status}}", n.String()).Output()
		if err != nil {
			return "", fmt.Errorf("docker inspect %s: %w", n, err)
		}
		switch state := strings.TrimSpace(string(out)); state {
		case "exited", "created", "dead":
			return fmt.Sprintf("its node %s is %s", n, state), nil
		}
	}
	return "", nil
}

// Running says whether a kind cluster of that name runs (all its nodes
// up), for commands that act on a cluster and must not make one.
func Running(name string) (bool, error) {
	c := &Cluster{Name: name, provider: kindcluster.NewProvider(kindcluster.ProviderWithDocker())}
	existing, err := c.provider.List()
	if err != nil {
		return false, fmt.Errorf("list kind clusters: %w", err)
	}
	for _, n := range existing {
		if n == name {
			why, err := c.notRunning()
			return why == "" && err == nil, err
		}
	}
	return false, nil
}

// LoadImageArchive imports an image archive (a tarball of
// go-containerregistry's or docker save's) into every node's containerd, as
// `kind load image-archive` does: for images a pod names that no registry
// serves (the suite's own image and sonobuoy's, made here).
func (c *Cluster) LoadImageArchive(path string) error {
	if c.provider == nil {
		return errors.New("load an image archive: not a kind cluster this run manages")
	}
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("node %s: load %s: %w", n, path, err)
		}
	}
	return nil
}

// cgroupfsConfig is how the cluster's nodes are told to use the cgroupfs
// driver on a cgroup v1 host (ConfigOptions.Cgroupfs), nil elsewhere: the
// runc handlers of a containerd node image.
func cgroupfsConfig(o Options, rt nodeimage.NodeRuntime) (*CgroupfsConfig, error) {
	if !hostCgroupV1() {
		return nil, nil
	}
	// kind's own handlers (its base image's containerd configuration), and
	// the further runc handlers of a node image built here.
	c := &CgroupfsConfig{ContainerdHandlers: []string{"runc", "test-handler"}}
	if o.NodeImage != "" {
		return c, nil
	}
	if rt.IsCrio() {
		// CRI-O keeps systemd: with cgroupfs, runc sets the kubelet's
		// hugetlb limits and fails on these nodes ("cannot set hugetlb
		// limit: container could not join or create cgroup"; containerd
		// tolerates a missing hugetlb controller, CRI-O does not).
		return nil, nil
	}
	for _, h := range rt.Runtime.Handlers {
		for _, opt := range h.Options {
			if opt.Key == "SystemdCgroup" {
				c.ContainerdHandlers = append(c.ContainerdHandlers, h.Name)
			}
		}
	}
	return c, nil
}

func hostCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}

// logger adapts a printf function to kind's logger; kind's verbose
// messages are dropped.
type logger struct{ f func(string, ...any) }

func (l logger) Warn(m string)             { l.f("kind: %s", m) }
func (l logger) Warnf(f string, a ...any)  { l.f("kind: "+f, a...) }
func (l logger) Error(m string)            { l.f("kind: %s", m) }
func (l logger) Errorf(f string, a ...any) { l.f("kind: "+f, a...) }
func (l logger) V(v kindlog.Level) kindlog.InfoLogger {
	if v > 0 {
		return kindlog.NoopInfoLogger{}
	}
	return info(l)
}

type info logger

func (i info) Info(m string)            { i.f("kind: %s", m) }
func (i info) Infof(f string, a ...any) { i.f("kind: "+f, a...) }
func (i info) Enabled() bool            { return true }

// Managed reports whether this run made or reused a kind cluster (rather
// than being given a kubeconfig).
func (c *Cluster) Managed() bool { return c.provider != nil }

// lastLine is the last non-empty line of s (crictl's error, after its log
// lines).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
