package cluster_test

import (
	"fmt"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// usernsRelaxedFromMinor is the first release whose Pod Security policy
// relaxes checks for pods in a user namespace unconditionally
// (k8s.io/pod-security-admission policy/helpers.go
// relaxPolicyForUserNamespacePod, used by the 1.35 versions of
// check_runAsNonRoot.go, check_runAsUser.go and check_procMount_baseline.go;
// before, the relaxation hung on the alpha gate
// UserNamespacesPodSecurityStandards, off by default).
const usernsRelaxedFromMinor = 35

// rootTarget makes the target pod acceptable under restricted except that
// it runs as root (runAsNonRoot unset), which restricted allows only in a
// user namespace.
func rootTarget(p *corev1.Pod) {
	no := false
	p.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	}
}

func inUserNamespace(p *corev1.Pod) {
	no := false
	p.Spec.HostUsers = &no
}

var _ = Describe("Pod Security relaxations for user-namespace pods", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelAPIRelease), func() {
	// Each entry: the enforced level, whether the pod is in a user
	// namespace (hostUsers: false), the target pod's and the ephemeral
	// container's shapes, and what admission must decide about the
	// ephemeral container. Pod Security checks ephemeral containers like
	// any other (policy/visitor.go visitContainers), so the relaxations
	// reach them; the controls are the same containers in a pod of the
	// node's user namespace. Admission only: the pods need not run.
	DescribeTable("an ephemeral container of a hostUsers: false pod gets the Pod Security relaxations of its pod [SEC-2] [SEC-3]",
		func(ctx SpecContext, level, version string, userns bool, target func(*corev1.Pod), shape func(*corev1.EphemeralContainer), admitted bool, refusal string) {
			if userns && serverMinor() < usernsRelaxedFromMinor {
				Skip(fmt.Sprintf("not applicable: server %s; Pod Security relaxes its checks for hostUsers: false pods from policy v1.%d (%s)", env.ServerVersion, usernsRelaxedFromMinor, kube.Cite(env.ServerVersion, "k8s.io/pod-security-admission", "policy/helpers.go")))
			}
			labels := map[string]string{"pod-security.kubernetes.io/enforce": level}
			if version != "" {
				labels["pod-security.kubernetes.io/enforce-version"] = version
			}
			f := newFrameworkWithLabels(ctx, labels)
			shapes := []func(*corev1.Pod){target}
			if userns {
				shapes = append(shapes, inUserNamespace)
			}
			pod, err := f.CreatePod(ctx, targetPod(f, shapes...))
			Expect(err).NotTo(HaveOccurred(), "the target pod itself must be admitted (hostUsers: false: %v): %s", userns, kube.Rejection(err))
			ec := f.DebugContainer("debugger", "target")
			shape(&ec)
			_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			AddReportEntry(fmt.Sprintf("%s namespace (policy %s), hostUsers: false %v", level, orLatest(version), userns), kube.Rejection(err), ReportEntryVisibilityAlways)
			if admitted {
				Expect(err).NotTo(HaveOccurred(), "server %s must admit it (%s): %s", env.ServerVersion, kube.Cite(env.ServerVersion, "k8s.io/pod-security-admission", "policy/helpers.go"), kube.Rejection(err))
				return
			}
			Expect(err).To(HaveOccurred(), "server %s admitted it", env.ServerVersion)
			Expect(kube.Rejection(err)).To(ContainSubstring(refusal))
		},
		Entry("restricted: root in a user namespace is admitted (runAsNonRoot and runAsUser relaxed)", "restricted", "", true, rootTarget, func(ec *corev1.EphemeralContainer) {
			compliant(ec)
			root := int64(0)
			ec.SecurityContext.RunAsUser = &root
		}, true, "", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: restricted, root in the node's user namespace is refused", "restricted", "", false, restrictedTarget, func(ec *corev1.EphemeralContainer) {
			compliant(ec)
			root := int64(0)
			ec.SecurityContext.RunAsUser = &root
		}, false, rootUser, SpecTimeout(framework.DefaultTimeouts.Spec)),
		// The relaxation is the policy's: the same root container in the same
		// kind of pod, under restricted pinned to the policy before it.
		Entry("control: restricted pinned to policy v1.34, root in a user namespace is refused (the relaxation came with policy v1.35)", "restricted", "v1.34", true, restrictedTarget, func(ec *corev1.EphemeralContainer) {
			compliant(ec)
			root := int64(0)
			ec.SecurityContext.RunAsUser = &root
		}, false, rootUser, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("baseline: procMount Unmasked in a user namespace is admitted (procMount relaxed)", "baseline", "", true, rootTarget, func(ec *corev1.EphemeralContainer) {
			unmasked := corev1.UnmaskedProcMount
			ec.SecurityContext = &corev1.SecurityContext{ProcMount: &unmasked}
		}, true, "", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: procMount Unmasked in the node's user namespace is refused (API validation: hostUsers must be false)", "baseline", "", false, rootTarget, func(ec *corev1.EphemeralContainer) {
			unmasked := corev1.UnmaskedProcMount
			ec.SecurityContext = &corev1.SecurityContext{ProcMount: &unmasked}
		}, false, "`hostUsers` must be false to use `Unmasked`", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

func orLatest(version string) string {
	if version == "" {
		return "latest"
	}
	return version
}
