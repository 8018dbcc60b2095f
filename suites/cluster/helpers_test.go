package cluster_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
)

// serverMinor is the discovered API server's minor version: expectations
// that changed across releases are chosen from it, not hard-coded.
func serverMinor() int {
	v, err := version.ParseGeneric(env.ServerVersion)
	if err != nil {
		return 0
	}
	return int(v.Minor())
}

func execProbe() *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
}

func resourceQty(s string) resource.Quantity { return resource.MustParse(s) }
