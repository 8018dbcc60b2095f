package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
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
