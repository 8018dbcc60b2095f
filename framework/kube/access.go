package kube

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// NamespaceRoleEnv names the ClusterRole the suite binds to itself in each
// namespace it makes (set by the sonobuoy plugin, whose service account
// holds pod, exec and RBAC rights only there); unset, nothing is bound.
const NamespaceRoleEnv = "ECTEST_NAMESPACE_ROLE"

// NamespaceRoleBinding is the name of that RoleBinding.
const NamespaceRoleBinding = "ectest"

// The users the RBAC and audit specs impersonate: fixed names, so that the
// in-cluster RBAC can name them (deploy/sonobuoy/rbac.yaml). Each is bound
// only in one spec's namespace, so specs running at once share them safely.
const (
	ImpersonatedUser    = "ectest-user"
	ImpersonatedSupport = "ectest-support"
	ImpersonatedAudited = "ectest-audited"
)

// ImpersonatedUsers lists them.
var ImpersonatedUsers = []string{ImpersonatedUser, ImpersonatedSupport, ImpersonatedAudited}

// self is the suite's own identity as a RoleBinding subject, found once per
// process.
type self struct {
	once    sync.Once
	subject rbacv1.Subject
	err     error
}

// adoptNamespace binds the ClusterRole NamespaceRoleEnv names to the suite
// itself in namespace ns (which it just made) and waits until the binding
// is in force; without NamespaceRoleEnv it does nothing.
func (s *Session) adoptNamespace(ctx context.Context, ns string) error {
	role := os.Getenv(NamespaceRoleEnv)
	if role == "" {
		return nil
	}
	s.self.once.Do(func() { s.self.subject, s.self.err = whoAmI(ctx, s.Client) })
	if s.self.err != nil {
		return s.self.err
	}
	_, err := s.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: NamespaceRoleBinding, Labels: map[string]string{LabelRun: s.RunID}},
		Subjects:   []rbacv1.Subject{s.self.subject},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("bind ClusterRole %s ($%s) to %s in namespace %s: %w", role, NamespaceRoleEnv, s.self.subject.Name, ns, err)
	}
	// The authorizer sees a new binding a moment later; reading the
	// namespace itself needs it.
	var last error
	err = wait.PollUntilContextTimeout(ctx, s.Timeouts.Poll, s.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		_, last = s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the binding of ClusterRole %s in namespace %s never took effect: %v", role, ns, last)
	}
	return nil
}

// whoAmI is the client's identity (a SelfSubjectReview) as a subject.
func whoAmI(ctx context.Context, client kubernetes.Interface) (rbacv1.Subject, error) {
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return rbacv1.Subject{}, fmt.Errorf("who the suite is (SelfSubjectReview): %w", err)
	}
	name := r.Status.UserInfo.Username
	if ns, sa, ok := serviceAccountOf(name); ok {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}, nil
	}
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}, nil
}

// serviceAccountOf splits a service account's user name.
func serviceAccountOf(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != "" && !strings.Contains(name, ":")
}

// impersonatedGroups are the groups to send when impersonating user with
// groups: none when the API server gives exactly those itself
// (system:authenticated, and a service account's own groups), since
// impersonating a group is a grant of its own.
func impersonatedGroups(user string, groups []string) []string {
	all := append([]string{"system:authenticated"}, groups...)
	implied := []string{"system:authenticated"}
	if ns, _, ok := serviceAccountOf(user); ok {
		implied = append(implied, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	for _, g := range all {
		if !slices.Contains(implied, g) {
			return all
		}
	}
	for _, g := range implied {
		if !slices.Contains(all, g) {
			return all
		}
	}
	return nil
}
