package cluster_test

import (
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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

// observe runs the checks of a capability and records the outcome in the
// matrix: works when they hold, deviated (with the failure as evidence)
// when not. Setup stays outside: only what the capability promises is judged.
func observe(f *kube.Framework, n capability.Name, observed string, checks func()) {
	GinkgoHelper()
	o := capability.Observation{Capability: n, Outcome: capability.Works, Observed: observed}
	if failure := InterceptGomegaFailure(checks); failure != nil {
		o.Outcome, o.Observed, o.Evidence = capability.Deviated, "failed: "+firstLine(failure.Error()), failure.Error()
	}
	f.Checker.Record(o)
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
