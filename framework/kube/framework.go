package kube

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/oracle"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/retry"
)

// Labels on everything the suite creates, so a run's leftovers can be found.
const (
	LabelRun  = "ectest.io/run"
	LabelSpec = "ectest.io/spec"
)

// Session is what every spec of a process shares.
type Session struct {
	Config *rest.Config
	Client kubernetes.Interface
	Images images.Set
	// Registry is the suite's own registry (host:port) the nodes pull
	// from, where specs push images they make ("" when there is none).
	Registry string
	RunID    string
	Checker  *capability.Checker
	Timeouts framework.Timeouts
	// RuntimeClass is given to every pod CreatePod makes that names none
	// (-runtime-class; "" for the cluster's default handler).
	RuntimeClass string
	// Node is where CreatePod places pods that do not say where they go
	// ("" leaves it to the scheduler): on a version-skew cluster, the node
	// whose kubelet is the cluster's own release, so the cluster layer's
	// verdicts are never a skewed kubelet's.
	Node string
	// OwnDebugImage says the debug image is the suite's own, which carries
	// ectest-helper: the node observer (NodeReport) runs it.
	OwnDebugImage bool
	// observers are the process's node observers (NodeReport).
	observers observers
	// unreachable is why a node could not reach the suite's registry, once
	// a spec of this process found it (RegistryWatch): every later wait on
	// a pod is that run error at once, not after a wait of its own.
	unreachable atomic.Pointer[error]
	// self is the suite's identity, for adoptNamespace.
	self self
}

// Framework is one spec's view of the cluster: its own namespace, whose pods
// are deleted when the spec ends, whatever its outcome, and the namespace
// itself at the end of the run (which waits for both).
type Framework struct {
	*Session
	// Checker is the session's, bound to the capabilities the spec
	// exercises (see capability.Checker.ForSpec).
	Checker   *capability.Checker
	Token     string
	Namespace string
	// Node is where the spec's pods run (the session's unless the spec
	// places them, see OnNode).
	Node string
}

// New creates the spec's namespace and registers the deletion of its pods
// (emptyNamespace; the namespace goes at the end of the run). labels are
// added to the namespace (Pod Security levels, for example).
func New(ctx context.Context, s *Session, labels map[string]string, exercises ...capability.Name) *Framework {
	ginkgo.GinkgoHelper()
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	f := &Framework{Session: s, Checker: s.Checker.ForSpec(exercises...), Token: hex.EncodeToString(b), Node: s.Node}
	l := map[string]string{LabelRun: s.RunID, LabelSpec: f.Token}
	for k, v := range labels {
		l[k] = v
	}
	ns, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-", Labels: l}}, metav1.CreateOptions{})
	if err != nil {
		f.Checker.Fail("create the spec's namespace: " + err.Error())
	}
	f.Namespace = ns.Name
	if err := s.adoptNamespace(ctx, f.Namespace); err != nil {
		f.Checker.Fail(err.Error())
	}
	ginkgo.DeferCleanup(f.emptyNamespace)
	// Pods are refused until the namespace's default ServiceAccount exists.
	gomega.Eventually(ctx, func() error {
		_, err := s.Client.CoreV1().ServiceAccounts(f.Namespace).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithTimeout(s.Timeouts.ContainerReady).WithPolling(s.Timeouts.Poll).Should(gomega.Succeed(), "the default ServiceAccount of namespace %s", f.Namespace)
	return f
}

// emptyNamespace deletes the pods of the spec's namespace, and leaves the
// namespace to the end of the run (environment.ClusterHandle.DeleteNamespaces
// deletes every namespace of the run by its label once every process is
// done), without waiting for either. The pods hold the node's resources and
// go at once; deleting a namespace is the namespace controller's sweep
// through every namespaced resource type of the API (about 66 requests on
// kind), work that would only compete with the specs still running for the
// machine's CPUs. The run-level leak check (environment.ClusterHandle.Leaks)
// waits for every namespace and pod sandbox of the run to be gone, so a
// namespace or pod that never goes away is still a failure of the run.
func (f *Framework) emptyNamespace() error {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeouts.Cleanup)
	defer cancel()
	// Each pod's own grace period (CreatePod's zero unless the spec set
	// one), as the namespace controller's deletion would.
	err := f.Client.CoreV1().Pods(f.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the pods of namespace %s: %w", f.Namespace, err)
	}
	return nil
}

// DeleteNamespace asks for a namespace to be deleted (grace 0, dependents
// in the background) and does not wait; one already gone is no error.
func DeleteNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	err := client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}

// TargetContainer is a container of the suite's target program.
func (f *Framework) TargetContainer(name string, port int) corev1.Container {
	return corev1.Container{
		Name: name, Image: f.Images[images.Target],
		Args: []string{f.TargetMarker(name), fmt.Sprintf("--listen=:%d", port)},
	}
}

// TargetMarker is the argv marker of a target container's process.
func (f *Framework) TargetMarker(name string) string { return oracle.TargetMarker(f.Token, name) }

// DebugMarker is the argv marker of a debug container's main process.
func (f *Framework) DebugMarker(name string) string { return oracle.DebugMarker(f.Token, name) }

// DebugContainer is an ephemeral container of the debug image that sleeps
// with a recognizable argv.
func (f *Framework) DebugContainer(name, target string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: name, Image: f.Images[images.Debug],
			Command: oracle.SleepWith(f.DebugMarker(name)),
		},
		TargetContainerName: target,
	}
}

// CreatePod creates a pod in the spec's namespace.
func (f *Framework) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	pod = pod.DeepCopy()
	pod.Namespace = f.Namespace
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelSpec] = f.Token
	// The run's label reaches the node's pod sandbox (the kubelet passes
	// pod labels to the runtime), where the run-level leak check looks.
	pod.Labels[LabelRun] = f.RunID
	zero := int64(0)
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = &zero
	}
	f.PodDefaults(&pod.Spec)
	return f.Client.CoreV1().Pods(f.Namespace).Create(ctx, pod, metav1.CreateOptions{})
}

// PodDefaults gives a pod spec what CreatePod gives every pod it makes:
// the run's RuntimeClass and the spec's node (unless the pod names its
// own). For pods a spec makes other than through CreatePod (a Deployment's
// template).
func (f *Framework) PodDefaults(spec *corev1.PodSpec) {
	f.UseRuntimeClass(spec)
	f.place(spec)
}

// ControlPlaneRole is the key of the label and the taint kubeadm puts on
// control-plane nodes.
const ControlPlaneRole = "node-role.kubernetes.io/control-plane"

// place pins a pod to the spec's node with a required node affinity on the
// node's name (as a DaemonSet's pods are), tolerating the control-plane
// taint (the node may be a control plane, as in a skew pair), unless the
// pod already says where it goes.
func (f *Framework) place(spec *corev1.PodSpec) {
	if f.Node == "" || spec.NodeName != "" || spec.NodeSelector != nil || spec.Affinity != nil {
		return
	}
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{f.Node}}}}},
	}}}
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: ControlPlaneRole, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
}

// UseRuntimeClass gives a pod spec the run's RuntimeClass (-runtime-class)
// unless it names one: for pods a spec makes other than through CreatePod
// (a Deployment's template, a static pod's manifest).
func (f *Framework) UseRuntimeClass(spec *corev1.PodSpec) {
	if f.RuntimeClass != "" && spec.RuntimeClassName == nil {
		rc := f.RuntimeClass
		spec.RuntimeClassName = &rc
	}
}

// RunPod creates a pod and waits until it runs.
func (f *Framework) RunPod(ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	ginkgo.GinkgoHelper()
	created, err := f.CreatePod(ctx, pod)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("create pod %s: %v", pod.Name, err))
	}
	return f.WaitPod(ctx, created.Name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
}

// WaitPod polls the pod until cond holds and returns it (PollPod); a wait
// that runs out fails the spec with the pod's last status.
func (f *Framework) WaitPod(ctx context.Context, name, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	ginkgo.GinkgoHelper()
	last, err := f.PollPod(ctx, name, what, func(_ context.Context, p *corev1.Pod) bool { return cond(p) })
	if err != nil {
		ginkgo.Fail(fmt.Sprintf("pod %s/%s is not %s (%v); status:\n%s", f.Namespace, name, what, err, statusJSON(last)))
	}
	return last
}

// PollPod polls the pod until done holds (what names it), for at most an
// image pull and a container start, and returns the pod last read and the
// error of a wait that ran out; done may read more than the pod (events)
// with the ctx it is given. While it waits it checks the suite's
// environment now and then (Timeouts.EnvironmentRecheck): a wait that
// cannot end because the node's runtime hangs or went away is a run error
// at once, not a nonconformance once the wait's own timeout runs out; so
// is a container of the pod that keeps waiting because its node cannot
// reach the suite's registry (RegistryUnreachable).
func (f *Framework) PollPod(ctx context.Context, name, what string, done func(context.Context, *corev1.Pod) bool) (*corev1.Pod, error) {
	ginkgo.GinkgoHelper()
	var last *corev1.Pod
	if err := f.RegistryFound(); err != nil {
		f.Checker.FailEnvironment(err, fmt.Sprintf("waiting for pod %s/%s to be %s", f.Namespace, name, what))
	}
	var envErr error
	registry := f.WatchRegistry()
	checked := time.Now()
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll*2, f.Timeouts.ImagePull+f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		if f.Checker.Environment != nil && time.Since(checked) > f.Timeouts.EnvironmentRecheck {
			checked = time.Now()
			if envErr = f.Checker.Environment(); envErr != nil {
				return false, envErr
			}
		}
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		if envErr = registry.Check(p); envErr != nil {
			return false, envErr
		}
		return done(ctx, p), nil
	})
	if envErr != nil {
		f.Checker.FailEnvironment(envErr, fmt.Sprintf("waiting for pod %s/%s to be %s", f.Namespace, name, what))
	}
	return last, err
}

// AddEphemeral appends an ephemeral container through the subresource (GET
// then PUT), retrying on a Conflict as any client must: the kubelet's
// status updates change the pod's resourceVersion under it.
func (f *Framework) AddEphemeral(ctx context.Context, client kubernetes.Interface, podName string, ec corev1.EphemeralContainer) (*corev1.Pod, error) {
	var out *corev1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := client.CoreV1().Pods(f.Namespace).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, ec)
		out, err = client.CoreV1().Pods(f.Namespace).UpdateEphemeralContainers(ctx, podName, pod, metav1.UpdateOptions{})
		return err
	})
	return out, ClassifyEphemeralError(err)
}

// PatchEphemeral adds an ephemeral container with one PATCH of the
// subresource (a strategic merge patch, as kubectl debug sends): unlike
// AddEphemeral it neither reads the pod nor needs the update verb. Both
// return errors through ClassifyEphemeralError.
func (f *Framework) PatchEphemeral(ctx context.Context, client kubernetes.Interface, podName string, ec corev1.EphemeralContainer) (*corev1.Pod, error) {
	body, err := json.Marshal(map[string]any{"spec": map[string]any{"ephemeralContainers": []corev1.EphemeralContainer{ec}}})
	if err != nil {
		return nil, err
	}
	out, err := client.CoreV1().Pods(f.Namespace).Patch(ctx, podName, types.StrategicMergePatchType, body, metav1.PatchOptions{}, "ephemeralcontainers")
	return out, ClassifyEphemeralError(err)
}

// EphemeralStatus returns an ephemeral container's status, if reported.
func EphemeralStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.EphemeralContainerStatuses {
		if p.Status.EphemeralContainerStatuses[i].Name == name {
			return &p.Status.EphemeralContainerStatuses[i]
		}
	}
	return nil
}

// WaitEphemeralRunning waits until the ephemeral container runs.
func (f *Framework) WaitEphemeralRunning(ctx context.Context, pod, name string) *corev1.Pod {
	ginkgo.GinkgoHelper()
	return f.WaitPod(ctx, pod, "running ephemeral container "+name, func(p *corev1.Pod) bool {
		s := EphemeralStatus(p, name)
		return s != nil && s.State.Running != nil
	})
}

// RunEphemeral adds an ephemeral container as the spec's admin and waits
// until it runs; a refusal fails the spec with the server's answer, and a
// server that does not serve the subresource, or serves its pre-1.22 kind,
// skips it (SKEW-2: no verdict on what the server does not offer).
func (f *Framework) RunEphemeral(ctx context.Context, pod string, ec corev1.EphemeralContainer) *corev1.Pod {
	ginkgo.GinkgoHelper()
	if _, err := f.AddEphemeral(ctx, f.Client, pod, ec); err != nil {
		if errors.Is(err, ErrNotServed) || errors.Is(err, ErrLegacyKind) {
			ginkgo.Skip(err.Error())
		}
		f.Checker.Fail(fmt.Sprintf("add ephemeral container %s to pod %s: %s", ec.Name, pod, Rejection(err)))
	}
	p := f.WaitEphemeralRunning(ctx, pod, ec.Name)
	f.requireExec(ctx, pod, ec.Name)
	return p
}

// requireExec checks the channel the cluster layer observes through: a
// spec reads what an ephemeral container sees with exec through the API
// server. Where exec into it does not work, that is exec's nonconformance,
// recorded as such through the judge (Checker.BlockOn), and the
// capabilities the spec exercises are blocked by it, instead of each
// failing on its first exec as if its own capability were broken. The
// suite's own environment broken, or the spec's time up, is a run error.
// A spec exercising exec itself, or no capability, is left to its own
// checks.
func (f *Framework) requireExec(ctx context.Context, pod, container string) {
	ginkgo.GinkgoHelper()
	if len(f.Checker.Exercises) == 0 || slices.Contains(f.Checker.Exercises, capability.Exec) {
		return
	}
	out, stderr, err := f.Exec(ctx, pod, container, nil, false, "true")
	if err == nil {
		return
	}
	if ctx.Err() != nil || f.Checker.Environment != nil && f.Checker.Environment() != nil {
		// The suite's own environment broke (Fail says so), or the spec
		// ran out of time: no verdict.
		f.Checker.Fail(fmt.Sprintf("exec into %s/%s: %v", pod, container, err))
	}
	f.Checker.BlockOn(capability.Observe(capability.Exec).
		Evidence("exec %s/%s -- true: %v\n%s%s", pod, container, err, out, stderr).
		Problem("exec into the ephemeral container did not work: %v", err).
		Done(""))
}

// Logs returns a container's log through the API server.
func (f *Framework) Logs(ctx context.Context, pod, container string) (string, error) {
	b, err := f.Client.CoreV1().Pods(f.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(ctx)
	return string(b), err
}

// Exec runs a command in a container through the API server (SPDY).
func (f *Framework) Exec(ctx context.Context, pod, container string, stdin io.Reader, tty bool, cmd ...string) (string, string, error) {
	return f.execIn(ctx, f.Namespace, pod, container, stdin, tty, cmd...)
}

// execIn is Exec into a pod of any namespace (the node observers').
func (f *Framework) execIn(ctx context.Context, namespace, pod, container string, stdin io.Reader, tty bool, cmd ...string) (string, string, error) {
	req := f.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
	return f.stream(ctx, req.URL(), stdin, tty)
}

// Attach attaches to a container's main process through the API server.
func (f *Framework) Attach(ctx context.Context, pod, container string, stdin io.Reader, tty bool) (string, string, error) {
	req := f.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(f.Namespace).Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: stdin != nil, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
	return f.stream(ctx, req.URL(), stdin, tty)
}

func (f *Framework) stream(ctx context.Context, u *url.URL, stdin io.Reader, tty bool) (string, string, error) {
	var stdout, stderr bytes.Buffer
	err := f.streamTo(ctx, u, stdin, tty, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func (f *Framework) streamTo(ctx context.Context, u *url.URL, stdin io.Reader, tty bool, stdout, stderr io.Writer) error {
	exec, err := remotecommand.NewSPDYExecutor(f.Config, "POST", u)
	if err != nil {
		return err
	}
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Tty: tty}
	if !tty {
		opts.Stderr = stderr
	}
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec)
	defer cancel()
	return exec.StreamWithContext(cctx, opts)
}

// AttachTo is Attach writing the container's output to stdout as it comes
// (with a TTY, stderr is part of it), for a spec that answers what it sees.
func (f *Framework) AttachTo(ctx context.Context, pod, container string, stdin io.Reader, tty bool, stdout, stderr io.Writer) error {
	req := f.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(f.Namespace).Name(pod).SubResource("attach").
		VersionedParams(&corev1.PodAttachOptions{Container: container, Stdin: stdin != nil, Stdout: true, Stderr: !tty, TTY: tty}, scheme.ParameterCodec)
	return f.streamTo(ctx, req.URL(), stdin, tty, stdout, stderr)
}

// Impersonate returns a client acting as user with groups and
// system:authenticated (RBAC specs); groups the server gives the user
// itself are not sent (impersonatedGroups).
func (f *Framework) Impersonate(user string, groups ...string) kubernetes.Interface {
	ginkgo.GinkgoHelper()
	cfg := rest.CopyConfig(f.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: impersonatedGroups(user, groups)}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	return c
}

func statusJSON(p *corev1.Pod) string {
	if p == nil {
		return "(never read)"
	}
	b, _ := json.MarshalIndent(p.Status, "", "  ")
	return string(b)
}

// Processes runs ps in a container (through the API server) and parses it.
func (f *Framework) Processes(ctx context.Context, pod, container string) ([]cri.Process, string, error) {
	out, stderr, err := f.Exec(ctx, pod, container, nil, false, "ps", "-o", "pid,user,args")
	if err != nil {
		return nil, out + stderr, fmt.Errorf("ps in %s/%s: %v: %s", pod, container, err, stderr)
	}
	procs, err := cri.ParsePS(out)
	return procs, out, err
}

// PIDOf finds, in a process list, the PID of the process whose argv
// contains marker (0 if none).
func PIDOf(procs []cri.Process, marker string) int {
	for _, p := range procs {
		if strings.Contains(p.Args, marker) {
			return p.PID
		}
	}
	return 0
}

// RequireKubelet skips, as not applicable with the release, when the
// spec's node runs a kubelet older than minimum (what: the feature).
func (f *Framework) RequireKubelet(ctx context.Context, minimum, what string) {
	ginkgo.GinkgoHelper()
	if f.Node == "" {
		return
	}
	n, err := f.Client.CoreV1().Nodes().Get(ctx, f.Node, metav1.GetOptions{})
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("read node %s: %v", f.Node, err))
	}
	got, err := version.ParseGeneric(n.Status.NodeInfo.KubeletVersion)
	if err != nil {
		return
	}
	if !got.AtLeast(version.MustParseGeneric(minimum)) {
		ginkgo.Skip(fmt.Sprintf("not applicable: node %s runs kubelet %s, and %s from %s on", f.Node, n.Status.NodeInfo.KubeletVersion, what, minimum))
	}
}
