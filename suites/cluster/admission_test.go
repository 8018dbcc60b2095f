package cluster_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// restrictedTarget makes the target pod itself acceptable under the
// restricted Pod Security level.
func restrictedTarget(p *corev1.Pod) {
	yes, no, nobody := true, false, int64(65534)
	p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &nobody, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
}

func compliant(ec *corev1.EphemeralContainer) {
	no := false
	ec.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
}

var _ = Describe("Pod Security admission of ephemeral containers", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelAPIRelease), func() {
	// Each entry: the namespace's enforced level, the ephemeral container,
	// and whether admission must let it in; a rejection must name the
	// ephemeral container and the Pod Security check it violates.
	DescribeTable("admission applies to ephemeral containers [SEC-2] [SEC-3]",
		func(ctx SpecContext, level string, shape func(*corev1.EphemeralContainer), admitted bool, violates ...string) {
			f := newFrameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": level})
			pod, err := f.CreatePod(ctx, targetPod(f, restrictedTarget))
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			ec := f.DebugContainer("debugger", "target")
			shape(&ec)
			_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			AddReportEntry(fmt.Sprintf("%s namespace", level), kube.Rejection(err), ReportEntryVisibilityAlways)
			if admitted {
				Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
				return
			}
			Expect(kube.Rejection(err)).To(ContainSubstring(fmt.Sprintf("violates PodSecurity %q", level+":latest")), "want the Pod Security admission message (%s)", kube.Cite(env.ServerVersion, "k8s.io/pod-security-admission", "admission/admission.go"))
			Expect(kube.Rejection(err)).To(ContainSubstring(`container "debugger"`), "the message must name the ephemeral container")
			for _, v := range violates {
				Expect(kube.Rejection(err)).To(ContainSubstring(v), "the message must name the violated check")
			}
		},
		Entry("restricted: a privileged container is rejected", "restricted", func(ec *corev1.EphemeralContainer) {
			yes := true
			ec.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		}, false, privileged, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("baseline: a privileged container is rejected", "baseline", func(ec *corev1.EphemeralContainer) {
			yes := true
			ec.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
		}, false, privileged, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("restricted: SYS_PTRACE, asked for explicitly, is rejected", "restricted", func(ec *corev1.EphemeralContainer) {
			compliant(ec)
			ec.SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_PTRACE"}
		}, false, unrestrictedCaps, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("baseline: SYS_PTRACE, asked for explicitly, is rejected (not in baseline's list)", "baseline", func(ec *corev1.EphemeralContainer) {
			ec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}}
		}, false, nonDefaultCaps, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("privileged: SYS_PTRACE is admitted", "privileged", func(ec *corev1.EphemeralContainer) {
			ec.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}}
		}, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("restricted: privilege escalation as root is rejected", "restricted", func(ec *corev1.EphemeralContainer) {
			yes, root := true, int64(0)
			ec.SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &yes, RunAsUser: &root, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		}, false, escalation, rootUser, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("restricted: a compliant container is admitted", "restricted", compliant, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	// What Pod Security admission decides when an ephemeral container is
	// added (k8s.io/pod-security-admission admission/admission.go, the code
	// the API server's PodSecurity plugin delegates to; byte-identical in
	// every release the suite read, v0.33.13 to v0.37.1, and cited for the
	// server under test):
	// ValidatePod evaluates the ephemeralcontainers subresource (it is not
	// among the ignored pod subresources), isSignificantPodUpdate counts an
	// added ephemeral container as significant, and EvaluatePod then checks
	// the whole pod spec against the namespace's enforced level. Volumes are
	// pod-level, so a hostPath volume the pod was admitted with before the
	// namespace enforced baseline now fails every such update: the ephemeral
	// container's own volume mount plays no part, which the entry without
	// the mount shows, and a pod without the volume in the same namespace
	// takes the same container. The refusal is forbiddenResponse's 403, with
	// "violates PodSecurity" and the check's ForbiddenDetail as message.
	DescribeTable("once its namespace enforces baseline, a pod admitted earlier with a hostPath volume takes no ephemeral container: Pod Security evaluates the whole pod on the update, whether or not the container mounts the volume [SEC-2]",
		func(ctx SpecContext, hostPath, mount bool) {
			f := newFrameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"})
			withHostPath := func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
			}
			pod := targetPod(f)
			if hostPath {
				pod = targetPod(f, withHostPath)
			}
			pod, err := f.CreatePod(ctx, pod)
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`)
			_, err = f.Client.CoreV1().Namespaces().Patch(ctx, f.Namespace, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
			// Admission reads namespace labels from an informer: wait until
			// baseline is in force (a dry-run create of the same pod is
			// refused), or an admitted container would prove nothing.
			Eventually(ctx, func() string {
				probe := targetPod(f, withHostPath)
				probe.Name = "probe"
				probe.Namespace = f.Namespace
				_, err := f.Client.CoreV1().Pods(f.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return kube.Rejection(err)
			}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll).Should(ContainSubstring(`violates PodSecurity "baseline:latest"`), "the namespace never enforced baseline")
			ec := f.DebugContainer("debugger", "target")
			if mount {
				ec.VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}
			}
			_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			AddReportEntry(fmt.Sprintf("baseline namespace, pod admitted earlier (hostPath volume: %v), ephemeral container mounts it: %v", hostPath, mount), kube.Rejection(err), ReportEntryVisibilityAlways)
			if !hostPath {
				Expect(err).NotTo(HaveOccurred(), "a pod that meets baseline must take a container that does: %s", kube.Rejection(err))
				return
			}
			var se *apierrors.StatusError
			Expect(errors.As(err, &se)).To(BeTrue(), "want Pod Security's 403, got %s", kube.Rejection(err))
			Expect(se.ErrStatus.Code).To(BeEquivalentTo(http.StatusForbidden), kube.Rejection(err))
			Expect(se.ErrStatus.Reason).To(Equal(metav1.StatusReasonForbidden), kube.Rejection(err))
			Expect(se.ErrStatus.Message).To(Equal(fmt.Sprintf(`pods %q is forbidden: violates PodSecurity "baseline:latest": %s`, pod.Name, hostPathVolumes)),
				"want exactly Pod Security's verdict on the whole pod: its hostPath volume, not the ephemeral container (%s)", kube.Cite(env.ServerVersion, "k8s.io/pod-security-admission", "admission/admission.go"))
			got, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(ephemeralNames(got)).To(BeEmpty(), "the refused ephemeral container was added")
		},
		Entry("the ephemeral container mounts the hostPath volume: forbidden", true, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: the ephemeral container mounts nothing: forbidden all the same", true, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: a pod without the volume, the same container: admitted", false, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

// The names Pod Security gives the checks these specs violate.
const (
	privileged       = "privileged"
	unrestrictedCaps = "unrestricted capabilities"
	nonDefaultCaps   = "non-default capabilities"
	escalation       = "allowPrivilegeEscalation != false"
	rootUser         = "runAsUser=0"
	hostPathVolumes  = `hostPath volumes (volume "host")`
)
