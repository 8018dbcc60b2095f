package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"k8s.io/client-go/kubernetes"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/oracle"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ObserverFrom says whose view a NodeReport is, for the evidence.
const ObserverFrom = "outside, by an observer in the node's PID namespace (a hostPID pod of the suite's debug image on the pod's node, reading the node's /proc)"

// NodeReport is the cluster layer's oracle: it reads, through an observer
// placed on the pod's node (a privileged hostPID pod of the suite's debug
// image, on the node's default runtime handler, made once per process and
// node, see observers), the node's reference process
// (its kubelet) and every process carrying one of markers. unavailable
// says why there is no report (the debug image is not the suite's, the
// cluster refuses privileged pods, the pod is not scheduled, or the
// observer does not see the kubelet, so it is not in the node's PID
// namespace: a runtime that does not honour hostPID): the spec then judges
// from inside, and says so.
func (f *Framework) NodeReport(ctx context.Context, pod *corev1.Pod, markers ...string) (r oracle.Report, unavailable string) {
	ns, name, unavailable := f.nodeObserver(ctx, pod)
	if unavailable != "" {
		return r, unavailable
	}
	out, stderr, err := f.execIn(ctx, ns, name, "observer", nil, false, append([]string{helper.Path, helper.ModeOracle}, markers...)...)
	if err != nil {
		return r, fmt.Sprintf("the node observer %s did not answer: %v: %s", name, err, stderr)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Sprintf("the node observer's answer %q: %v", out, err)
	}
	if r.Node == nil {
		// Its hostPID was not honoured (the runtime under test placed it
		// elsewhere): what it reads is not the node's, so it decides nothing.
		return r, "the node observer does not see the node's kubelet, so it is not in the node's PID namespace: " + r.NoNode
	}
	return r, ""
}

// nodeObserver is the node observer of the pod's node (started once per
// spec and node), or why there is none.
func (f *Framework) nodeObserver(ctx context.Context, pod *corev1.Pod) (namespace, name, unavailable string) {
	if !f.OwnDebugImage {
		return "", "", fmt.Sprintf("the debug image %s is not the suite's own, so it has no %s to observe the node with", f.Images[images.Debug], helper.Path)
	}
	if pod.Spec.NodeName == "" {
		return "", "", "the pod has no node"
	}
	namespace, name, err := f.observer(ctx, pod.Spec.NodeName)
	if err != nil {
		return "", "", err.Error()
	}
	return namespace, name, ""
}

// NodeCommand runs argv in the node's mount namespace (nsenter into the
// namespaces of the node's PID 1, from the node observer), for a spec that
// must act on the node behind the kubelet's back (remove a container with
// the node's crictl). unavailable says why it cannot run there (as for
// NodeReport, or the node has no such program); err is the command's own
// failure, with its output.
func (f *Framework) NodeCommand(ctx context.Context, pod *corev1.Pod, argv ...string) (stdout string, unavailable string, err error) {
	ns, name, unavailable := f.nodeObserver(ctx, pod)
	if unavailable != "" {
		return "", unavailable, nil
	}
	// command -v in the node's namespaces first: a program it does not
	// find (exit status 1) is the node's shape, not the command failing.
	if _, stderr, err := f.execIn(ctx, ns, name, "observer", nil, false, "nsenter", "-t", "1", "-m", "--", "sh", "-c", "command -v "+argv[0]); err != nil {
		var exit utilexec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Sprintf("node %s has no %s", pod.Spec.NodeName, argv[0]), nil
		}
		return "", fmt.Sprintf("the node observer %s did not answer: %v: %s", name, err, stderr), nil
	}
	out, stderr, err := f.execIn(ctx, ns, name, "observer", nil, false, append([]string{"nsenter", "-t", "1", "-m", "--"}, argv...)...)
	if err != nil {
		return out, "", fmt.Errorf("%s on node %s: %v: %s", strings.Join(argv, " "), pod.Spec.NodeName, err, stderr)
	}
	return out, "", nil
}

// observers are one process's node observers: one privileged hostPID pod
// per node, started when a spec first asks for that node, in a namespace
// of their own at the privileged Pod Security level (whatever level the
// specs' own namespaces have), and removed when the process ends
// (Session.CloseObservers; the run's leak check waits for them like for
// every namespace of the run). One per process instead of one per spec:
// most namespace specs ask for the node, and a pod start each was the
// largest part of their time.
type observers struct {
	mu        sync.Mutex
	namespace string
	pods      map[string]string
	// failed is why the cluster refused an observer: every later ask gets
	// it at once.
	failed error
}

// observer returns the node observer of node, starting it first if needed:
// its namespace and pod name.
func (f *Framework) observer(ctx context.Context, node string) (namespace, name string, err error) {
	o := &f.Session.observers
	o.mu.Lock()
	defer o.mu.Unlock()
	if name, ok := o.pods[node]; ok {
		return o.namespace, name, nil
	}
	if o.failed != nil {
		return "", "", o.failed
	}
	if o.namespace == "" {
		ns, err := f.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-observers-",
			Labels: map[string]string{LabelRun: f.RunID, "pod-security.kubernetes.io/enforce": "privileged"}}}, metav1.CreateOptions{})
		if err != nil {
			return "", "", fmt.Errorf("the node observers' namespace: %v", err)
		}
		o.namespace = ns.Name
		if err := f.Session.adoptNamespace(ctx, ns.Name); err != nil {
			o.failed = fmt.Errorf("the node observers' namespace: %v", err)
			return "", "", o.failed
		}
	}
	privileged := true
	zero := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-observer-", Namespace: o.namespace, Labels: map[string]string{LabelRun: f.RunID}},
		Spec: corev1.PodSpec{
			// Bound to the node, on its default handler (no RuntimeClass: a
			// sandboxed runtime under test would hide the node from it).
			NodeName: node, HostPID: true, TerminationGracePeriodSeconds: &zero,
			// The observer needs no API access.
			AutomountServiceAccountToken: new(bool),
			Tolerations:                  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "observer", Image: f.Images[images.Debug],
				Command:         oracle.SleepWith("ectest-observer-" + f.RunID),
				SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
			}},
		},
	}
	var created *corev1.Pod
	var refused error
	// Until the namespace's default ServiceAccount exists, pods are refused
	// for want of it; any other refusal is final.
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		created, refused = f.Client.CoreV1().Pods(o.namespace).Create(ctx, pod, metav1.CreateOptions{})
		return refused == nil || !strings.Contains(refused.Error(), "serviceaccount"), nil
	})
	if refused != nil {
		// Kept: every later spec is told at once, not after another wait.
		o.failed = fmt.Errorf("the node observer (a privileged hostPID pod) was refused in namespace %s: %v", o.namespace, refused)
		return "", "", o.failed
	}
	if _, err := waitPodIn(ctx, f.Client, f.Timeouts, o.namespace, created.Name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }); err != nil {
		return "", "", fmt.Errorf("the node observer did not run on %s: %v", node, err)
	}
	if o.pods == nil {
		o.pods = map[string]string{}
	}
	o.pods[node] = created.Name
	return o.namespace, created.Name, nil
}

// CloseObservers asks for the process's node observers to be removed (their
// namespace; the run's leak check waits for it to be gone).
func (s *Session) CloseObservers(ctx context.Context) error {
	o := &s.observers
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.namespace == "" {
		return nil
	}
	err := DeleteNamespace(ctx, s.Client, o.namespace)
	o.namespace, o.pods, o.failed = "", nil, nil
	return err
}

// waitPodErr polls the pod until cond holds; the error shows its last status.
func (f *Framework) waitPodErr(ctx context.Context, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	return waitPodIn(ctx, f.Client, f.Timeouts, f.Namespace, name, cond)
}

// waitPodIn is waitPodErr for a pod of any namespace.
func waitPodIn(ctx context.Context, client kubernetes.Interface, t framework.Timeouts, namespace, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, t.Poll*2, t.ImagePull+t.ContainerReady, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		return last, fmt.Errorf("%v; status:\n%s", err, statusJSON(last))
	}
	return last, nil
}

// ExecPlacement is where an exec session through the API server ran,
// against the container's own process, as the node observer reads them.
type ExecPlacement struct {
	// Differences list where the session differs from the container's own
	// process's landing record (oracle.Differences).
	Differences []string
	Evidence    string
}

// ObserveExec starts an exec session in container (whose own process
// carries ownMarker) that stays until the node observer has read it, then
// ends it from the node and compares the two. unavailable says why the
// node could not be asked (see NodeReport): exec is then judged by its
// bytes alone.
func (f *Framework) ObserveExec(ctx context.Context, pod *corev1.Pod, container, ownMarker string) (p ExecPlacement, unavailable string, err error) {
	marker := "ectest-exec-" + f.Token + "-" + container
	execCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := f.Exec(execCtx, pod.Name, container, nil, false, "sh", "-c", "sleep 60; : "+marker)
		done <- err
	}()
	var report oracle.Report
	pollErr := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			return false, fmt.Errorf("the exec session ended before the node observer saw it: %v", err)
		default:
		}
		report, unavailable = f.NodeReport(ctx, pod, ownMarker, marker)
		return unavailable != "" || len(report.Found[marker]) > 0, nil
	})
	if unavailable != "" {
		return p, unavailable, nil
	}
	session, own := report.Found[marker], report.Found[ownMarker]
	// End the session from the node, whatever was seen (its sleep too: it
	// holds the exec's output open), frozen first (oracle's EndTree, as
	// the CRI layer's ObserveExec ends its sessions): seen as soon as it
	// started, its shell may not have forked the sleep yet.
	if len(session) > 0 {
		argv := []string{helper.Path, helper.ModeEndTree, f.Timeouts.ProcessStop.String()}
		for _, s := range session {
			argv = append(argv, strconv.Itoa(s.PID))
		}
		if ns, name, why := f.nodeObserver(ctx, pod); why == "" {
			_, _, _ = f.execIn(ctx, ns, name, "observer", nil, false, argv...)
		}
	}
	switch {
	case pollErr != nil:
		return p, "", fmt.Errorf("the exec session (marker %s) never showed on the node within %s: %v", marker, f.Timeouts.ContainerReady, pollErr)
	case len(own) == 0:
		return p, "the node observer sees no process of the container (a runtime with a kernel of its own hides them)", nil
	}
	ev := []string{"the container's own process: " + own[0].String()}
	for _, s := range session {
		ev = append(ev, "the exec session's process: "+s.String())
		for _, d := range oracle.Differences(own[0], s) {
			p.Differences = append(p.Differences, fmt.Sprintf("PID %d: %s", s.PID, d))
		}
	}
	p.Evidence = "judged " + ObserverFrom + ":\n" + strings.Join(ev, "\n")
	return p, "", nil
}
