package cluster_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// grant binds a Role with rules (or a ClusterRole by name) to user in the
// spec's namespace. Both live in the namespace, which the spec deletes.
func grant(ctx context.Context, f *kube.Framework, user, clusterRole string, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: clusterRole}
	if clusterRole == "" {
		role, err := f.Client.RbacV1().Roles(f.Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-"}, Rules: rules}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		ref = rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}
	}
	_, err := f.Client.RbacV1().RoleBindings(f.Namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
		RoleRef:    ref,
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	// The authorizer sees new bindings a moment later: wait until every
	// granted rule is in effect, or a "forbidden" outcome would prove nothing.
	if len(rules) == 0 {
		rules = []rbacv1.PolicyRule{rule("pods", "get")} // every built-in role used here can
	}
	for _, r := range rules {
		resource, sub, _ := strings.Cut(r.Resources[0], "/")
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: f.Namespace, Verb: r.Verbs[0], Resource: resource, Subresource: sub},
		}}
		Eventually(ctx, func() (bool, error) {
			got, err := f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return got.Status.Allowed, nil
		}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll).Should(BeTrue(), "%s %s for %s never took effect", r.Verbs[0], r.Resources[0], user)
	}
}

func rule(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
}

var _ = Describe("RBAC on pods/ephemeralcontainers", framework.Label(framework.LabelCluster, framework.LabelSecurity), func() {
	DescribeTable("only a subject with update or patch on the subresource can add an ephemeral container [SEC-1]",
		func(ctx SpecContext, canAdd bool, rules []rbacv1.PolicyRule) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			user := "ectest-" + f.Token
			grant(ctx, f, user, "", rules...)
			as := f.Impersonate(user)
			_, err = f.AddEphemeral(ctx, as, pod.Name, f.DebugContainer("debugger", ""))
			if canAdd {
				Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			} else {
				Expect(kube.Rejection(err)).To(ContainSubstring("403 Forbidden"))
				Expect(kube.Rejection(err)).To(ContainSubstring("ephemeralcontainers"))
			}
		},
		Entry("update on the subresource and get on pods: allowed", true, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "update")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("patch on the subresource and get on pods: allowed", true, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "patch", "update")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("update and patch on pods, not on the subresource: forbidden", false, []rbacv1.PolicyRule{rule("pods", "get", "update", "patch")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("get on the subresource only: forbidden", false, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "get")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	DescribeTable("the built-in roles, bound in a namespace, are observed and reported [SEC-1]",
		func(ctx SpecContext, clusterRole string) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			user := "ectest-" + f.Token
			grant(ctx, f, user, clusterRole)
			_, err = f.AddEphemeral(ctx, f.Impersonate(user), pod.Name, f.DebugContainer("debugger", ""))
			outcome := "can add ephemeral containers"
			if err != nil {
				outcome = "cannot: " + kube.Rejection(err)
			}
			// What the server did must be what its authorizer says the role
			// allows: the outcome is reported, the agreement is checked.
			allowed := map[string]bool{}
			for _, verb := range []string{"update", "patch"} {
				sar, serr := f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: user, Groups: []string{"system:authenticated"},
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: f.Namespace, Verb: verb, Resource: "pods", Subresource: "ephemeralcontainers"},
				}}, metav1.CreateOptions{})
				Expect(serr).NotTo(HaveOccurred())
				allowed[verb] = sar.Status.Allowed
			}
			AddReportEntry(fmt.Sprintf("built-in %s on %s", clusterRole, env.ServerVersion),
				fmt.Sprintf("%s (authorizer: update=%v patch=%v on pods/ephemeralcontainers)", outcome, allowed["update"], allowed["patch"]), ReportEntryVisibilityAlways)
			if allowed["update"] {
				Expect(err).NotTo(HaveOccurred(), "the authorizer allows update on the subresource, yet: %s", kube.Rejection(err))
			} else {
				Expect(kube.Rejection(err)).To(And(ContainSubstring("403 Forbidden"), ContainSubstring("ephemeralcontainers")),
					"the authorizer denies update on the subresource, so the add must be forbidden")
			}
		},
		Entry("edit", "edit", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("admin", "admin", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("a support engineer with view plus the subresource only runs a diagnosis and reads its logs; the container stays in the spec [STORY-SUPPORT] [SEC-1] [SEC-5]", framework.Label(framework.LabelStory), func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := f.RunPod(ctx, targetPod(f))
		user := "ectest-support-" + f.Token
		grant(ctx, f, user, "view")
		grant(ctx, f, user, "", rule("pods/ephemeralcontainers", "update", "patch"))
		as := f.Impersonate(user)
		err := as.CoreV1().Pods(f.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{})
		Expect(kube.Rejection(err)).To(ContainSubstring("403"), "the support engineer must have no other rights")
		ec := f.DebugContainer("diagnose", "target")
		ec.Command = []string{"sh", "-c", "ps -o pid,args; wget -qO- http://127.0.0.1:8080/info"}
		_, err = f.AddEphemeral(ctx, as, pod.Name, ec)
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		f.WaitPod(ctx, pod.Name, "showing the diagnosis finished", func(p *corev1.Pod) bool {
			s := kube.EphemeralStatus(p, "diagnose")
			return s != nil && s.State.Terminated != nil
		})
		b, err := as.CoreV1().Pods(f.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "diagnose"}).DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred(), "view must allow reading the diagnosis's logs")
		Expect(string(b)).To(And(ContainSubstring(f.TargetMarker("target")), ContainSubstring(`"token":"`+f.Token+`-target"`)))
		got, err := as.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ephemeralNames(got)).To(ContainElement("diagnose"), "an exited ephemeral container must stay in the spec (SEC-5)")
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
