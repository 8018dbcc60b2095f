package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// The HostProcess rules of WIN-4 are the API server's: kube-apiserver
// v1.36.3, pkg/apis/core/validation/validation.go, validateWindowsHostProcessPod
// (called from ValidatePodSpec, which both pod create and the
// pods/ephemeralcontainers update run: ValidatePodEphemeralContainersUpdate
// validates the whole new spec through validatePodMetadataAndSpec). It
// visits init, regular and ephemeral containers alike
// (pods.VisitContainersWithPath); a container whose hostProcess is unset
// inherits the pod's securityContext.windowsOptions.hostProcess; and
//   - a container's hostProcess differing from the pod's, both set:
//     Invalid on the container's windowsOptions.hostProcess, "pod hostProcess
//     value must be identical if both are specified, was <pod's>";
//   - some but not all containers HostProcess: Invalid on spec (value ""),
//     "If pod contains any hostProcess containers then all containers must be
//     HostProcess containers";
//   - any HostProcess container without hostNetwork: Invalid on
//     spec.hostNetwork (false), "hostNetwork must be true if pod contains any
//     hostProcess containers";
//   - any HostProcess container while the server runs without
//     --allow-privileged: Forbidden on spec (kind's API server allows it).
//
// These specs run on any cluster, a Linux kind cluster included: the pods
// are Windows pods (spec.os.name windows) bound by spec.nodeName to a
// Windows Node object the spec registers (no kubelet behind it), so the
// scheduler never sees them and the API server judges them as it would on
// a Windows node.
const hostProcessValidation = "kube-apiserver v1.36 validateWindowsHostProcessPod (pkg/apis/core/validation)"

// kubeletBeyondHostProcess is what a Windows node adds to the API server's
// decision, which none of these specs can see (their Node has no kubelet).
const kubeletBeyondHostProcess = "Not exercised here (the spec's Node has no kubelet): on a Windows node the kubelet " +
	"(v1.36 pkg/kubelet/kuberuntime) sends every container it starts, an ephemeral one included, " +
	"WindowsContainerSecurityContext.host_process = true when the container or the pod asks for HostProcess " +
	"(securitycontext.HasWindowsHostProcessRequest); it refuses to make the sandbox of a pod that mixes " +
	"HostProcess and other containers or lacks hostNetwork (generatePodSandboxWindowsConfig: \"pod must not contain " +
	"both HostProcess and non-HostProcess containers\", \"hostNetwork is required if Pod contains HostProcess containers\"); " +
	"and containerd refuses a container whose host_process differs from its sandbox's (internal/cri/server/" +
	"container_create.go: \"pod spec and all containers inside must have the HostProcess field set to be valid\"). " +
	"The kubelet also drops targetContainerName on Windows, and a HostProcess ephemeral container runs as a " +
	"process on the host, not in the pod's isolation."

// windowsNode registers a Node object named for the spec, labelled as a
// Windows node, with no kubelet behind it, and deletes it (and first, at
// once, any pod of the spec bound to it) when the spec ends, however it
// ends. It stays clear of every other workload: unschedulable and tainted
// NoSchedule for the scheduler, and labelled kubernetes.io/os=windows,
// which kube-proxy's and other Linux DaemonSets' node selectors exclude.
// The node lifecycle controller marks it NotReady and, after its grace
// period, taints it unreachable:NoExecute; the spec's pods tolerate every
// NoExecute taint, so taint eviction leaves them alone, and while the Node
// exists the pod garbage collector has no orphan to delete.
func windowsNode(ctx context.Context, f *kube.Framework) string {
	GinkgoHelper()
	name := "ectest-win-" + f.Token
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64", corev1.LabelHostname: name,
			corev1.LabelWindowsBuild: "10.0.20348",
			kube.LabelRun:            f.RunID, kube.LabelSpec: f.Token,
		}},
		Spec: corev1.NodeSpec{
			Unschedulable: true,
			Taints:        []corev1.Taint{{Key: "ectest.io/no-kubelet", Value: f.Token, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	if _, err := f.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		// The suite's own need, not a rule of the API server: a cluster
		// (or a kubeconfig) that forbids registering a Node cannot judge
		// WIN-4 here, and that is an error of the run.
		Fail(fmt.Sprintf("%sregister the Windows Node object %s (the HostProcess specs need to create Nodes): %s", capability.EnvironmentErrorPrefix, name, kube.Rejection(err)))
	}
	DeferCleanup(func() error { return deleteWindowsNode(f, name) })
	return name
}

func deleteWindowsNode(f *kube.Framework, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeouts.Cleanup*2)
	defer cancel()
	// No kubelet will ever confirm a graceful deletion: grace period 0.
	zero := int64(0)
	pods, err := f.Client.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
	if err != nil {
		return fmt.Errorf("list the pods bound to node %s: %w", name, err)
	}
	for _, p := range pods.Items {
		if err := f.Client.CoreV1().Pods(f.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s/%s bound to node %s: %w", f.Namespace, p.Name, name, err)
		}
	}
	if err := f.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete node %s: %w", name, err)
	}
	for {
		_, err := f.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s still exists after %s", name, f.Timeouts.Cleanup*2)
		case <-time.After(f.Timeouts.Poll * 5):
		}
	}
}

// hostProcessPod is how a Windows pod makes its containers HostProcess.
type hostProcessPod int

const (
	// podLevel: securityContext.windowsOptions.hostProcess true on the
	// pod; its containers leave theirs unset and inherit it.
	podLevel hostProcessPod = iota
	// containerLevel: the pod says nothing; its one container sets
	// hostProcess true itself.
	containerLevel
	// notHostProcess: no HostProcess anywhere (and no hostNetwork).
	notHostProcess
)

func (k hostProcessPod) String() string {
	return [...]string{"pod-level HostProcess pod", "container-level HostProcess pod", "non-HostProcess Windows pod"}[k]
}

// windowsPod is a Windows pod of the target container, bound to node.
func windowsPod(f *kube.Framework, node string, kind hostProcessPod, hostNetwork bool) *corev1.Pod {
	zero := int64(0)
	no := false
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: f.Namespace, Labels: map[string]string{kube.LabelSpec: f.Token}},
		Spec: corev1.PodSpec{
			OS:                            &corev1.PodOS{Name: corev1.Windows},
			NodeName:                      node,
			HostNetwork:                   hostNetwork,
			Containers:                    []corev1.Container{f.TargetContainer("target", 8080)},
			TerminationGracePeriodSeconds: &zero,
			AutomountServiceAccountToken:  &no,
			// Every NoExecute taint: the node lifecycle controller's
			// unreachable and not-ready taints on the kubelet-less Node
			// must not evict the pod in the middle of the spec.
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
		},
	}
	switch kind {
	case podLevel:
		p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: boolPtr(true)}}
	case containerLevel:
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: boolPtr(true)}}
	}
	return p
}

func boolPtr(b bool) *bool { return &b }

// fieldCause is one field error of an Invalid answer, as the API server
// writes it into the status' details (field.Error: Type, Field, ErrorBody).
type fieldCause struct{ Type, Field, Message string }

// The causes validateWindowsHostProcessPod gives, in the order it appends them.
func mismatchCause(field string, container, pod bool) fieldCause {
	return fieldCause{string(metav1.CauseTypeFieldValueInvalid), field,
		fmt.Sprintf("Invalid value: %v: pod hostProcess value must be identical if both are specified, was %v", container, pod)}
}

var (
	allOrNoneCause   = fieldCause{string(metav1.CauseTypeFieldValueInvalid), "spec", `Invalid value: "": If pod contains any hostProcess containers then all containers must be HostProcess containers`}
	hostNetworkCause = fieldCause{string(metav1.CauseTypeFieldValueInvalid), "spec.hostNetwork", "Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers"}
)

const ephemeralHostProcessField = "spec.ephemeralContainers[0].securityContext.windowsOptions.hostProcess"

// invalidMessage is the status message of an Invalid answer with these
// causes (apierrors.NewInvalid: the kind, the name, and the aggregate of
// the field errors, bracketed when there are several).
func invalidMessage(name string, causes []fieldCause) string {
	var parts []string
	for _, c := range causes {
		parts = append(parts, c.Field+": "+c.Message)
	}
	agg := strings.Join(parts, ", ")
	if len(parts) > 1 {
		agg = "[" + agg + "]"
	}
	return fmt.Sprintf("Pod %q is invalid: %s", name, agg)
}

// judgeDecision compares the API server's answer with what v1.36's
// validation decides: nil causes, accepted; otherwise 422 Invalid with
// exactly those causes, in that order, and their message.
func judgeDecision(err error, name string, want []fieldCause) (ok bool, got string) {
	got = kube.Rejection(err)
	if want == nil {
		return err == nil, got
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) || !apierrors.IsInvalid(err) || se.ErrStatus.Details == nil {
		return false, got
	}
	var causes []fieldCause
	for _, c := range se.ErrStatus.Details.Causes {
		causes = append(causes, fieldCause{string(c.Type), c.Field, c.Message})
	}
	same := len(causes) == len(want)
	for i := 0; same && i < len(want); i++ {
		same = causes[i] == want[i]
	}
	return same && se.ErrStatus.Message == invalidMessage(name, want), got
}

func describeCauses(want []fieldCause) string {
	if want == nil {
		return "accepted"
	}
	return "422 Invalid: " + invalidMessage("target", want)
}

// recordHostProcessDecision records the API server's decision on one case
// under hostprocess-rules: works when it is v1.36's, deviated (with the
// answer as evidence) when not. The capability is required: every API
// server must hold these rules.
func recordHostProcessDecision(f *kube.Framework, what string, err error, want []fieldCause, evidence string) {
	GinkgoHelper()
	ok, got := judgeDecision(err, "target", want)
	AddReportEntry("the API server's answer", got, ReportEntryVisibilityAlways)
	AddReportEntry("beyond the API server", kubeletBeyondHostProcess)
	b := capability.Observe(capability.HostProcessRules).Case(what).Requirements("WIN-4").
		Evidence("the API server answered: %s\nwant (%s): %s\n%s", got, hostProcessValidation, describeCauses(want), evidence)
	works := "rejected with " + hostProcessValidation + "'s field errors"
	if want == nil {
		works = "accepted, as " + hostProcessValidation + " decides"
	}
	switch {
	case ok:
	case want == nil:
		// Refused, or accepted with the ephemeral container changed.
		b.Problem("did not accept as asked what %s accepts: %s", hostProcessValidation, firstLine(got))
	default:
		b.Problem("not the decision of %s: %s", hostProcessValidation, firstLine(got))
	}
	f.Checker.Record(b.Done(works))
}

var _ = Describe("Windows HostProcess pods at the API server", framework.Label(framework.LabelCluster, framework.LabelValidation, framework.LabelWindows, string(capability.HostProcessRules)), func() {
	// newHostProcessFramework is the spec's namespace (privileged: Pod
	// Security's baseline forbids HostProcess and hostNetwork) and its
	// Windows Node; the spec's pods are judged for a Windows node.
	newHostProcessFramework := func(ctx context.Context) (*kube.Framework, string) {
		GinkgoHelper()
		f := newPrivilegedFramework(ctx, capability.HostProcessRules)
		node := windowsNode(ctx, f)
		framework.RecordNodeOS("windows", "the spec's pods are Windows pods bound to the Windows Node object "+node+" it registered; the API server judges them as on a Windows node")
		return f, node
	}

	DescribeTable("an ephemeral container added to a Windows pod follows the HostProcess rules: all containers HostProcess, ephemeral ones included [WIN-4]",
		func(ctx SpecContext, kind hostProcessPod, hostProcess *bool, want []fieldCause) {
			f, node := newHostProcessFramework(ctx)
			pod, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, windowsPod(f, node, kind, kind != notHostProcess), metav1.CreateOptions{})
			if err != nil {
				f.Checker.Fail(fmt.Sprintf("create the %s (a valid one): %s", kind, kube.Rejection(err)))
			}
			ec := f.DebugContainer("debugger", "")
			setting := "unset"
			if hostProcess != nil {
				ec.SecurityContext = &corev1.SecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: hostProcess}}
				setting = fmt.Sprint(*hostProcess)
			}
			got, err := f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			evidence := ""
			if err == nil {
				// Accepted: the container must be there as asked, not
				// with its hostProcess dropped or changed.
				var persisted *corev1.SecurityContext
				if len(got.Spec.EphemeralContainers) == 1 {
					persisted = got.Spec.EphemeralContainers[0].SecurityContext
				}
				evidence = "the ephemeral container's securityContext as persisted: " + mustJSON(persisted)
				if len(got.Spec.EphemeralContainers) != 1 || mustJSON(persisted) != mustJSON(ec.SecurityContext) {
					err = fmt.Errorf("accepted, but the ephemeral container was not persisted as asked (hostProcess %s): %s", setting, mustJSON(got.Spec.EphemeralContainers))
				}
			}
			recordHostProcessDecision(f, fmt.Sprintf("%s, ephemeral container hostProcess %s", kind, setting), err, want, evidence)
		},
		Entry("pod-level HostProcess pod, ephemeral hostProcess true: accepted", podLevel, boolPtr(true), nil, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("pod-level HostProcess pod, ephemeral hostProcess false: rejected (differs from the pod's, and not all HostProcess)", podLevel, boolPtr(false),
			[]fieldCause{mismatchCause(ephemeralHostProcessField, false, true), allOrNoneCause}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("pod-level HostProcess pod, ephemeral hostProcess unset: accepted (it inherits the pod's)", podLevel, nil, nil, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container-level HostProcess pod, ephemeral hostProcess true: accepted", containerLevel, boolPtr(true), nil, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container-level HostProcess pod, ephemeral hostProcess false: rejected (not all HostProcess)", containerLevel, boolPtr(false),
			[]fieldCause{allOrNoneCause}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container-level HostProcess pod, a non-HostProcess ephemeral container (hostProcess unset, nothing to inherit): rejected", containerLevel, nil,
			[]fieldCause{allOrNoneCause}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("non-HostProcess Windows pod, ephemeral hostProcess true: rejected (not all HostProcess, and no hostNetwork)", notHostProcess, boolPtr(true),
			[]fieldCause{allOrNoneCause, hostNetworkCause}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	DescribeTable("a HostProcess pod without hostNetwork is rejected when it is created [WIN-4]",
		func(ctx SpecContext, kind hostProcessPod) {
			f, node := newHostProcessFramework(ctx)
			got, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, windowsPod(f, node, kind, false), metav1.CreateOptions{})
			evidence := ""
			if err == nil {
				evidence = fmt.Sprintf("pod %s/%s was created (hostNetwork %v)", got.Namespace, got.Name, got.Spec.HostNetwork)
			}
			recordHostProcessDecision(f, kind.String()+" with hostNetwork false, at create", err, []fieldCause{hostNetworkCause}, evidence)
		},
		Entry("pod-level HostProcess", podLevel, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("container-level HostProcess", containerLevel, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})
