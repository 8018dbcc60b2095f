package kube

import (
	"context"
	"slices"
	"testing"

	"github.com/ectest/ectest/framework"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestPodDefaultsPlaceOnTheSpecsNode(t *testing.T) {
	f := &Framework{Session: &Session{RuntimeClass: "gvisor"}, Node: "w2"}
	var spec corev1.PodSpec
	f.PodDefaults(&spec)
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName != "gvisor" {
		t.Error("runtime class not set")
	}
	terms := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || terms[0].MatchFields[0].Key != "metadata.name" || terms[0].MatchFields[0].Values[0] != "w2" {
		t.Errorf("affinity: %+v", terms)
	}
	if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != ControlPlaneRole {
		t.Errorf("tolerations: %+v", spec.Tolerations)
	}
	// A pod that says where it goes keeps it; no node leaves it to the scheduler.
	own := corev1.PodSpec{NodeSelector: map[string]string{"a": "b"}}
	f.PodDefaults(&own)
	if own.Affinity != nil || own.Tolerations != nil {
		t.Errorf("a placed pod was moved: %+v", own)
	}
	free := corev1.PodSpec{}
	(&Framework{Session: &Session{}}).PodDefaults(&free)
	if free.Affinity != nil || free.Tolerations != nil {
		t.Error("no node: the scheduler decides")
	}
}

// A spec's cleanup deletes its namespace's pods, not the namespace (the
// run's end does, environment.ClusterHandle.DeleteNamespaces).
func TestSpecCleanupDeletesPodsNotTheNamespace(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ectest-a"}})
	var podsDeletedIn []string
	client.PrependReactor("delete-collection", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		podsDeletedIn = append(podsDeletedIn, a.GetNamespace())
		return true, nil, nil
	})
	f := &Framework{Session: &Session{Client: client, Timeouts: framework.DefaultTimeouts}, Namespace: "ectest-a"}
	if err := f.emptyNamespace(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(podsDeletedIn, []string{"ectest-a"}) {
		t.Errorf("pods deleted in %v, want [ectest-a]", podsDeletedIn)
	}
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "ectest-a", metav1.GetOptions{}); err != nil {
		t.Errorf("a spec's cleanup deleted its namespace: %v", err)
	}
	// DeleteNamespace: once gone, asking again is no error.
	if err := DeleteNamespace(context.Background(), client, "ectest-a"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteNamespace(context.Background(), client, "ectest-a"); err != nil {
		t.Errorf("a namespace already gone is no error: %v", err)
	}
}

// Impersonation sends no group the server gives the user itself: a group
// impersonated is a grant of its own (deploy/sonobuoy/rbac.yaml holds none).
func TestImpersonationSendsOnlyGroupsTheServerDoesNotImply(t *testing.T) {
	for _, c := range []struct {
		user   string
		groups []string
		want   []string
	}{
		{"ectest-user", nil, nil},
		{"ectest-user", []string{"system:authenticated"}, nil},
		{"system:serviceaccount:ectest-a:sa", []string{"system:serviceaccounts", "system:serviceaccounts:ectest-a"}, nil},
		{"system:serviceaccount:ectest-a:sa", []string{"system:serviceaccounts"}, []string{"system:authenticated", "system:serviceaccounts"}},
		{"system:serviceaccount:ectest-a:sa", nil, []string{"system:authenticated"}},
		{"ectest-user", []string{"team"}, []string{"system:authenticated", "team"}},
	} {
		if got := impersonatedGroups(c.user, c.groups); !slices.Equal(got, c.want) {
			t.Errorf("impersonatedGroups(%q, %q) = %q, want %q", c.user, c.groups, got, c.want)
		}
	}
}

// With $ECTEST_NAMESPACE_ROLE the suite binds that ClusterRole to itself in
// a namespace it made; without it (a run from outside) it binds nothing.
func TestAdoptNamespaceBindsTheRoleToTheSuiteOnlyWhenAsked(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ectest-a"}})
	client.PrependReactor("create", "selfsubjectreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := &authenticationv1.SelfSubjectReview{}
		r.Status.UserInfo.Username = "system:serviceaccount:sonobuoy:ectest"
		return true, r, nil
	})
	s := &Session{Client: client, RunID: "r1", Timeouts: framework.DefaultTimeouts}
	t.Setenv(NamespaceRoleEnv, "")
	if err := s.adoptNamespace(context.Background(), "ectest-a"); err != nil {
		t.Fatal(err)
	}
	if l, _ := client.RbacV1().RoleBindings("ectest-a").List(context.Background(), metav1.ListOptions{}); len(l.Items) != 0 {
		t.Fatalf("bound without being asked: %+v", l.Items)
	}
	t.Setenv(NamespaceRoleEnv, "ectest-namespace")
	if err := s.adoptNamespace(context.Background(), "ectest-a"); err != nil {
		t.Fatal(err)
	}
	b, err := client.RbacV1().RoleBindings("ectest-a").Get(context.Background(), NamespaceRoleBinding, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ectest", Namespace: "sonobuoy"}
	if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != "ectest-namespace" || len(b.Subjects) != 1 || b.Subjects[0] != want || b.Labels[LabelRun] != "r1" {
		t.Errorf("binding %+v", b)
	}
}
