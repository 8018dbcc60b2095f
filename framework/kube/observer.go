package kube

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework/oracle"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ObserverFrom says whose view a NodeReport is, for the evidence.
const ObserverFrom = "outside, by an observer in the node's PID namespace (a hostPID pod of the suite's debug image on the pod's node, reading the node's /proc)"

// NodeReport is the cluster layer's oracle: it reads, through an observer
// placed on the pod's node (a privileged hostPID pod of the suite's debug
// image, on the node's default runtime handler, made once per spec and
// node, removed with the spec's namespace), the node's reference process
// (its kubelet) and every process carrying one of markers. unavailable
// says why there is no report (the debug image is not the suite's, the
// namespace refuses privileged pods, the pod is not scheduled): the spec
// then judges from inside, and says so. An observer that does not see the
// kubelet is not in the node's PID namespace: its report has no Node, and
// host modes are not judged through it.
func (f *Framework) NodeReport(ctx context.Context, pod *corev1.Pod, markers ...string) (r oracle.Report, unavailable string) {
	if !f.OwnDebugImage {
		return r, fmt.Sprintf("the debug image %s is not the suite's own, so it has no %s to observe the node with", f.Images[images.Debug], helper.Path)
	}
	node := pod.Spec.NodeName
	if node == "" {
		return r, "the pod has no node"
	}
	name, err := f.observer(ctx, node)
	if err != nil {
		return r, err.Error()
	}
	out, stderr, err := f.Exec(ctx, name, "observer", nil, false, append([]string{helper.Path, helper.ModeOracle}, markers...)...)
	if err != nil {
		return r, fmt.Sprintf("the node observer %s did not answer: %v: %s", name, err, stderr)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Sprintf("the node observer's answer %q: %v", out, err)
	}
	return r, ""
}

// observer starts (once per spec and node) the node observer and returns
// its pod's name.
func (f *Framework) observer(ctx context.Context, node string) (string, error) {
	if name, ok := f.observers[node]; ok {
		return name, nil
	}
	privileged := true
	zero := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-observer-", Namespace: f.Namespace, Labels: map[string]string{LabelSpec: f.Token}},
		Spec: corev1.PodSpec{
			// Bound to the node, on its default handler (no RuntimeClass: a
			// sandboxed runtime under test would hide the node from it).
			NodeName: node, HostPID: true, TerminationGracePeriodSeconds: &zero,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "observer", Image: f.Images[images.Debug],
				Command:         []string{"sh", "-c", "sleep 86400 & wait", "ectest-observer-" + f.Token},
				SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
			}},
		},
	}
	created, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("the node observer (a privileged hostPID pod) was refused in namespace %s: %v", f.Namespace, err)
	}
	if _, err := f.waitPodErr(ctx, created.Name, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }); err != nil {
		return "", fmt.Errorf("the node observer did not run on %s: %v", node, err)
	}
	if f.observers == nil {
		f.observers = map[string]string{}
	}
	f.observers[node] = created.Name
	return created.Name, nil
}

// waitPodErr polls the pod until cond holds; the error shows its last status.
func (f *Framework) waitPodErr(ctx context.Context, name string, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll*2, f.Timeouts.ImagePull+f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, name, metav1.GetOptions{})
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
