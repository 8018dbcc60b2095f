package cluster_test

import (
	"fmt"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
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

var _ = Describe("Pod Security admission of ephemeral containers", framework.Label(framework.LabelCluster, framework.LabelSecurity), func() {
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
			Expect(kube.Rejection(err)).To(ContainSubstring(fmt.Sprintf("violates PodSecurity %q", level+":latest")), "want the Pod Security admission message")
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

	// A pod admitted before its namespace enforced baseline keeps its
	// hostPath volume; an ephemeral container must not become the way to
	// mount the host once the level is enforced.
	It("an ephemeral container mounting a hostPath volume of a pod admitted earlier is rejected once the namespace enforces baseline [SEC-2]", func(ctx SpecContext) {
		f := newFrameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"})
		pod, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}))
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		patch := []byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`)
		_, err = f.Client.CoreV1().Namespaces().Patch(ctx, f.Namespace, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		ec := f.DebugContainer("debugger", "target")
		ec.VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}
		_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
		AddReportEntry("baseline namespace, pod with a hostPath volume", kube.Rejection(err), ReportEntryVisibilityAlways)
		Expect(kube.Rejection(err)).To(ContainSubstring(`violates PodSecurity "baseline:latest"`), "want the Pod Security admission message")
		Expect(kube.Rejection(err)).To(ContainSubstring(hostPathVolumes), "the message must name the hostPath volume")
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
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
