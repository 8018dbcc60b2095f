package cluster_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/fixtures/apiproxy"
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
			err := usernsAdmission(ctx, level, version, userns, target, shape, "")
			Expect(judgeAdmission(err, admitted, refusal)).To(BeEmpty())
		},
		Entry("restricted: root in a user namespace is admitted (runAsNonRoot and runAsUser relaxed)", "restricted", "", true, rootTarget, rootEphemeral, true, "", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: restricted, root in the node's user namespace is refused", "restricted", "", false, restrictedTarget, rootEphemeral, false, rootUser, SpecTimeout(framework.DefaultTimeouts.Spec)),
		// The relaxation is the policy's: the same root container in the same
		// kind of pod, under restricted pinned to the policy before it.
		Entry("control: restricted pinned to policy v1.34, root in a user namespace is refused (the relaxation came with policy v1.35)", "restricted", "v1.34", true, restrictedTarget, rootEphemeral, false, rootUser, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("baseline: procMount Unmasked in a user namespace is admitted (procMount relaxed)", "baseline", "", true, rootTarget, unmaskedEphemeral, true, "", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("control: procMount Unmasked in the node's user namespace is refused (API validation: hostUsers must be false)", "baseline", "", false, rootTarget, unmaskedEphemeral, false, "`hostUsers` must be false to use `Unmasked`", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	// The judge of the admitted entries, seen saying no: the same requests
	// through a TEST DOUBLE of a server whose Pod Security predates the
	// relaxations (fixtures/apiproxy, pod-security-v1.34: it pins the
	// namespace to policy v1.34 before it forwards the ephemeral
	// container). Not a claim about any server: it checks the suite.
	DescribeTable("TEST DOUBLE: the relaxation judge says no through a server whose Pod Security predates the relaxations (fixtures/apiproxy pod-security-v1.34) [SEC-2]", framework.Label(framework.LabelTestDouble),
		func(ctx SpecContext, level string, shape func(*corev1.EphemeralContainer)) {
			err := usernsAdmission(ctx, level, "", true, rootTarget, shape, apiproxy.PodSecurityV134)
			problems := judgeAdmission(err, true, "")
			AddReportEntry("the judge through the double", problems, ReportEntryVisibilityAlways)
			Expect(problems).NotTo(BeEmpty(), "the judge of an admitted relaxation said yes through a server without the relaxation")
			Expect(kube.Rejection(err)).To(ContainSubstring(fmt.Sprintf("violates PodSecurity %q", level+":v1.34")), "the double's refusal must be Pod Security's at the pinned policy")
		},
		Entry("restricted, root in a user namespace", "restricted", rootEphemeral, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("baseline, procMount Unmasked in a user namespace", "baseline", unmaskedEphemeral, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

func rootEphemeral(ec *corev1.EphemeralContainer) {
	compliant(ec)
	root := int64(0)
	ec.SecurityContext.RunAsUser = &root
}

func unmaskedEphemeral(ec *corev1.EphemeralContainer) {
	unmasked := corev1.UnmaskedProcMount
	ec.SecurityContext = &corev1.SecurityContext{ProcMount: &unmasked}
}

// usernsAdmission makes a namespace enforcing level (at policy version, ""
// for latest), a target pod of that shape (in a user namespace or not) and
// asks for an ephemeral container of shape, through the test double double
// when given: the API server's answer.
func usernsAdmission(ctx SpecContext, level, version string, userns bool, target func(*corev1.Pod), shape func(*corev1.EphemeralContainer), double apiproxy.Personality) error {
	GinkgoHelper()
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
	client, server := throughDouble(f, double)
	_, err = f.AddEphemeral(ctx, client, pod.Name, ec)
	AddReportEntry(fmt.Sprintf("%s: %s namespace (policy %s), hostUsers: false %v", server, level, orLatest(version), userns), kube.Rejection(err), ReportEntryVisibilityAlways)
	return err
}

// judgeAdmission is the judge of an entry: what is wrong with the server's
// answer err, when it must admit (admitted) or refuse naming refusal.
func judgeAdmission(err error, admitted bool, refusal string) []string {
	switch {
	case admitted && err != nil:
		return []string{fmt.Sprintf("server %s must admit it (%s): %s", env.ServerVersion, kube.Cite(env.ServerVersion, "k8s.io/pod-security-admission", "policy/helpers.go"), kube.Rejection(err))}
	case !admitted && err == nil:
		return []string{fmt.Sprintf("server %s admitted it", env.ServerVersion)}
	case !admitted && !strings.Contains(kube.Rejection(err), refusal):
		return []string{fmt.Sprintf("the refusal does not say %q: %s", refusal, kube.Rejection(err))}
	}
	return nil
}

func orLatest(version string) string {
	if version == "" {
		return "latest"
	}
	return version
}
