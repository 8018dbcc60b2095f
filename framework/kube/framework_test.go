package kube

import (
	"context"
	"slices"
	"testing"

	"github.com/ectest/ectest/framework"
	corev1 "k8s.io/api/core/v1"
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

// A spec's cleanup deletes its namespace's pods, not the namespace; the end
// of the process deletes every namespace its specs left, once, and a
// namespace already gone is no error.
func TestNamespacesGoAtTheEndPodsAtOnce(t *testing.T) {
	client := fake.NewClientset(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ectest-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ectest-b"}},
	)
	var podsDeletedIn []string
	client.PrependReactor("delete-collection", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		podsDeletedIn = append(podsDeletedIn, a.GetNamespace())
		return true, nil, nil
	})
	s := &Session{Client: client, Timeouts: framework.DefaultTimeouts}
	for _, ns := range []string{"ectest-a", "ectest-b", "ectest-gone"} {
		if err := (&Framework{Session: s, Namespace: ns}).emptyNamespace(); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"ectest-a", "ectest-b", "ectest-gone"}; !slices.Equal(podsDeletedIn, want) {
		t.Errorf("pods deleted in %v, want %v", podsDeletedIn, want)
	}
	nss, _ := client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if len(nss.Items) != 2 {
		t.Errorf("a spec's cleanup deleted a namespace: %d left of 2", len(nss.Items))
	}
	if err := s.DeleteNamespaces(context.Background()); err != nil {
		t.Errorf("a namespace already gone is no error: %v", err)
	}
	nss, _ = client.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if len(nss.Items) != 0 {
		t.Errorf("%d namespaces left after DeleteNamespaces", len(nss.Items))
	}
	deletes := func() (n int) {
		for _, a := range client.Actions() {
			if a.GetVerb() == "delete" && a.GetResource().Resource == "namespaces" {
				n++
			}
		}
		return n
	}
	if n := deletes(); n != 3 {
		t.Errorf("DeleteNamespaces asked %d deletions, want 3", n)
	}
	// Once: a second call has nothing left to delete.
	if err := s.DeleteNamespaces(context.Background()); err != nil || deletes() != 3 {
		t.Errorf("a second DeleteNamespaces asked again (%d deletions in all): %v", deletes(), err)
	}
}
