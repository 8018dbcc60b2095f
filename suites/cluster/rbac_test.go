package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// subject is who an RBAC spec grants rules to and then acts as: a User, or
// a ServiceAccount of the spec's namespace (the form a workload or a CI job
// debugging a pod has).
type subject struct {
	kind, name, namespace string
}

func userSubject(name string) subject { return subject{kind: rbacv1.UserKind, name: name} }

// serviceAccountSubject creates the ServiceAccount (it goes with the
// namespace) so that the subject exists, as it would for a real workload.
func serviceAccountSubject(ctx context.Context, f *kube.Framework, name string) subject {
	GinkgoHelper()
	_, err := f.Client.CoreV1().ServiceAccounts(f.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return subject{kind: rbacv1.ServiceAccountKind, name: name, namespace: f.Namespace}
}

func (s subject) rbac() rbacv1.Subject {
	if s.kind == rbacv1.ServiceAccountKind {
		return rbacv1.Subject{Kind: s.kind, Name: s.name, Namespace: s.namespace}
	}
	return rbacv1.Subject{Kind: s.kind, APIGroup: rbacv1.GroupName, Name: s.name}
}

// user is the name the authorizer sees, and the one a 403 message names.
func (s subject) user() string {
	if s.kind == rbacv1.ServiceAccountKind {
		return "system:serviceaccount:" + s.namespace + ":" + s.name
	}
	return s.name
}

// groups are the subject's groups besides system:authenticated.
func (s subject) groups() []string {
	if s.kind == rbacv1.ServiceAccountKind {
		return []string{"system:serviceaccounts", "system:serviceaccounts:" + s.namespace}
	}
	return nil
}

func (s subject) client(f *kube.Framework) kubernetes.Interface {
	GinkgoHelper()
	return f.Impersonate(s.user(), s.groups()...)
}

// grant binds a Role with rules (or a ClusterRole by name) to who in the
// spec's namespace. Both live in the namespace, which the run deletes.
func grant(ctx context.Context, f *kube.Framework, who subject, clusterRole string, rules ...rbacv1.PolicyRule) {
	GinkgoHelper()
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole}
	if clusterRole == "" {
		role, err := f.Client.RbacV1().Roles(f.Namespace).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-"}, Rules: rules}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		ref = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
	}
	_, err := f.Client.RbacV1().RoleBindings(f.Namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ectest-"},
		Subjects:   []rbacv1.Subject{who.rbac()},
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
			User: who.user(), Groups: append([]string{"system:authenticated"}, who.groups()...),
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: f.Namespace, Verb: r.Verbs[0], Resource: resource, Subresource: sub},
		}}
		Eventually(ctx, func() (bool, error) {
			got, err := f.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return got.Status.Allowed, nil
		}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll).Should(BeTrue(), "%s %s for %s never took effect", r.Verbs[0], r.Resources[0], who.user())
	}
}

func rule(resource string, verbs ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
}

// The two ways to add an ephemeral container, each needing its own verb on
// pods/ephemeralcontainers: PUT (after a GET of the pod) and PATCH.
var addMethods = []struct {
	verb string
	add  func(ctx context.Context, f *kube.Framework, client kubernetes.Interface, pod string, ec corev1.EphemeralContainer) (*corev1.Pod, error)
}{
	{"update", func(ctx context.Context, f *kube.Framework, c kubernetes.Interface, pod string, ec corev1.EphemeralContainer) (*corev1.Pod, error) {
		return f.AddEphemeral(ctx, c, pod, ec)
	}},
	{"patch", func(ctx context.Context, f *kube.Framework, c kubernetes.Interface, pod string, ec corev1.EphemeralContainer) (*corev1.Pod, error) {
		return f.PatchEphemeral(ctx, c, pod, ec)
	}},
}

// expectForbiddenBy checks that err is the authorizer's refusal of verb on
// the subresource for who: status 403, reason Forbidden, and the message
// the API server builds for it (k8s.io/apiserver
// pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage; an
// authorizer may append ": <reason>").
func expectForbiddenBy(err error, f *kube.Framework, who subject, verb, pod string) {
	GinkgoHelper()
	var se *apierrors.StatusError
	Expect(errors.As(err, &se)).To(BeTrue(), "want a 403 status from the API server, got %s", kube.Rejection(err))
	Expect(se.ErrStatus.Code).To(BeEquivalentTo(http.StatusForbidden), kube.Rejection(err))
	Expect(se.ErrStatus.Reason).To(Equal(metav1.StatusReasonForbidden), kube.Rejection(err))
	Expect(se.ErrStatus.Message).To(HavePrefix(fmt.Sprintf(`pods %q is forbidden: User %q cannot %s resource "pods/ephemeralcontainers" in API group "" in the namespace %q`,
		pod, who.user(), verb, f.Namespace)), "the refusal must be the authorizer's, for %s on the subresource", verb)
}

// expectEphemeralNames reads the pod as the spec's admin and checks which
// ephemeral containers it has.
func expectEphemeralNames(ctx context.Context, f *kube.Framework, pod string, names ...string) {
	GinkgoHelper()
	got, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	if len(names) == 0 {
		Expect(ephemeralNames(got)).To(BeEmpty(), "a refused call added an ephemeral container")
		return
	}
	Expect(ephemeralNames(got)).To(Equal(names))
}

// allows reports whether rules grant verb on resource ("pods" or
// "pods/<subresource>") in the core API group, with RBAC's wildcards: "*"
// for groups, verbs and resources, and "*/<subresource>" (as the
// authorizer's ResourceMatches in k8s.io/kubernetes
// pkg/apis/rbac/v1/evaluation_helpers.go). ResourceNames are ignored: a
// rule limited to some names still grants the verb for them.
func allows(rules []rbacv1.PolicyRule, resource, verb string) []rbacv1.PolicyRule {
	_, sub, _ := strings.Cut(resource, "/")
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		resourceMatches := slices.Contains(r.Resources, rbacv1.ResourceAll) || slices.Contains(r.Resources, resource) ||
			(sub != "" && slices.Contains(r.Resources, "*/"+sub))
		if resourceMatches && (slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, rbacv1.APIGroupAll)) &&
			(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, rbacv1.VerbAll)) {
			out = append(out, r)
		}
	}
	return out
}

var _ = Describe("RBAC on pods/ephemeralcontainers", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelAPIRelease), func() {
	// Each method is tried on its own, the refused ones first so that
	// "nothing was added" is checked on a pod without ephemeral containers.
	DescribeTable("a subject adds an ephemeral container only with the verb it has on the subresource: update for PUT, patch for PATCH, each alone [SEC-1]",
		func(ctx SpecContext, kind string, rules []rbacv1.PolicyRule, granted ...string) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			who := userSubject(kube.ImpersonatedUser)
			if kind == rbacv1.ServiceAccountKind {
				who = serviceAccountSubject(ctx, f, "ectest-"+f.Token)
			}
			grant(ctx, f, who, "", rules...)
			as := who.client(f)
			for _, m := range addMethods {
				if slices.Contains(granted, m.verb) {
					continue
				}
				_, err := m.add(ctx, f, as, pod.Name, f.DebugContainer("by-"+m.verb, ""))
				AddReportEntry(fmt.Sprintf("%s %s, %s", kind, who.user(), m.verb), kube.Rejection(err), ReportEntryVisibilityAlways)
				expectForbiddenBy(err, f, who, m.verb, pod.Name)
				expectEphemeralNames(ctx, f, pod.Name)
			}
			var added []string
			for _, m := range addMethods {
				if !slices.Contains(granted, m.verb) {
					continue
				}
				_, err := m.add(ctx, f, as, pod.Name, f.DebugContainer("by-"+m.verb, ""))
				AddReportEntry(fmt.Sprintf("%s %s, %s", kind, who.user(), m.verb), kube.Rejection(err), ReportEntryVisibilityAlways)
				Expect(err).NotTo(HaveOccurred(), "%s on the subresource was granted: %s", m.verb, kube.Rejection(err))
				added = append(added, "by-"+m.verb)
				expectEphemeralNames(ctx, f, pod.Name, added...)
			}
		},
		// get on pods lets the PUT read the pod first, so that its refusal
		// can only come from the subresource's verb.
		Entry("a User with patch only: PATCH adds, PUT is forbidden", rbacv1.UserKind, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "patch")}, "patch", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a User with update only: PUT adds, PATCH is forbidden", rbacv1.UserKind, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "update")}, "update", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a ServiceAccount with patch only: PATCH adds, PUT is forbidden", rbacv1.ServiceAccountKind, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "patch")}, "patch", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("a ServiceAccount with update only: PUT adds, PATCH is forbidden", rbacv1.ServiceAccountKind, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "update")}, "update", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("update and patch on pods, not on the subresource: both forbidden", rbacv1.UserKind, []rbacv1.PolicyRule{rule("pods", "get", "update", "patch")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("get on the subresource only: both forbidden", rbacv1.UserKind, []rbacv1.PolicyRule{rule("pods", "get"), rule("pods/ephemeralcontainers", "get")}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	// The upstream fact, from the bootstrap policy of every release the
	// suite read (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/
	// bootstrappolicy/policy.go at v1.33.13, v1.34.10, v1.35.8, v1.36.4 and
	// v1.37.1; framework/kube/releases.go; the spec cites the one of the
	// server under test): "admin" and "edit" have no rules of their own, only aggregation rules
	// (aggregate-to-admin, aggregate-to-edit; edit is itself aggregated into
	// admin). What edit gets is system:aggregate-to-edit's editRules(): the
	// write verbs on pods, pods/attach, pods/exec, pods/portforward and
	// pods/proxy, create on pods/eviction, and no pods/ephemeralcontainers;
	// admin adds only localsubjectaccessreviews, roles and rolebindings
	// (system:aggregate-to-admin). The omission is deliberate: adding an
	// ephemeral container bypasses admission policies written before the
	// subresource existed, so proposals to grant it to edit/admin were
	// declined (kubernetes/kubernetes PRs 109332, 121217 and 131114).
	// editRules changed between those releases (events in a rule of their
	// own from 1.35; gated scheduling and eviction-request resources from
	// 1.36 and 1.37), never to add the subresource. The spec reads the aggregated roles as the server serves them; the
	// write rules on pods it also checks show the aggregation was read.
	DescribeTable("the aggregated edit and admin ClusterRoles leave pods/ephemeralcontainers out, as the bootstrap policy of the server's release does, and a subject bound to one adds no ephemeral container by either method [SEC-1]",
		func(ctx SpecContext, clusterRole string) {
			f := newFramework(ctx)
			policy := kube.Cite(env.ServerVersion, "", "plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go")
			AddReportEntry("bootstrap policy", policy, ReportEntryVisibilityAlways)
			role, err := f.Client.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(role.AggregationRule).NotTo(BeNil(), "the built-in %s ClusterRole is aggregated", clusterRole)
			for _, verb := range []string{"create", "update", "patch", "delete"} {
				Expect(allows(role.Rules, "pods", verb)).NotTo(BeEmpty(), "the bootstrap policy gives %s %s on pods: its aggregated rules were not read", clusterRole, verb)
			}
			Expect(allows(role.Rules, "pods/exec", "create")).NotTo(BeEmpty(), "the bootstrap policy gives %s create on pods/exec", clusterRole)
			for _, verb := range []string{"update", "patch"} {
				Expect(allows(role.Rules, "pods/ephemeralcontainers", verb)).To(BeEmpty(),
					"ClusterRole %s grants %s on pods/ephemeralcontainers; the bootstrap policy of server %s leaves the subresource out (%s; a ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-%s adds it?)", clusterRole, verb, env.ServerVersion, policy, clusterRole)
			}
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			who := userSubject(kube.ImpersonatedUser)
			grant(ctx, f, who, clusterRole)
			for _, m := range addMethods {
				_, err := m.add(ctx, f, who.client(f), pod.Name, f.DebugContainer("by-"+m.verb, ""))
				AddReportEntry(fmt.Sprintf("built-in %s on %s, %s", clusterRole, env.ServerVersion, m.verb), kube.Rejection(err), ReportEntryVisibilityAlways)
				expectForbiddenBy(err, f, who, m.verb, pod.Name)
			}
			expectEphemeralNames(ctx, f, pod.Name)
		},
		Entry("edit", "edit", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("admin", "admin", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("a support engineer with view plus the subresource only runs a diagnosis and reads its logs; the container stays in the spec [STORY-SUPPORT] [SEC-1] [SEC-5]", framework.Label(framework.LabelStory), func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := f.RunPod(ctx, targetPod(f))
		who := userSubject(kube.ImpersonatedSupport)
		grant(ctx, f, who, "view")
		grant(ctx, f, who, "", rule("pods/ephemeralcontainers", "update", "patch"))
		as := who.client(f)
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
