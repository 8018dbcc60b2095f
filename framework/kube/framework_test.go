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
