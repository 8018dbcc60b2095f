//go:build linux

package selftest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Ctrl-C in the middle of a cluster-suite run, while a spec's pod runs, and a
// suite timeout running out mid-spec, must leave none of the run's
// namespaces, pods or cluster-scoped RBAC objects,
// and must not delete a cluster the run did not create. The suite reuses
// the default kind cluster, which hack/cluster-selftest.sh brought up and
// names in ECTEST_SELFTEST_KUBECONFIG.
func TestClusterInterruptLeavesNothingBehind(t *testing.T) {
	kubeconfig := os.Getenv("ECTEST_SELFTEST_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("ECTEST_SELFTEST_KUBECONFIG is not set: no cluster to interrupt a run on (make test sets it)")
	}
	_, client, err := kube.Connect(kubeconfig, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		signal bool
		argv   func(t *testing.T) []string
	}{
		{"serial suite binary", true, func(t *testing.T) []string {
			return []string{suiteBinary(t, "cluster"), "-ginkgo.focus=Targeting through the kubelet", "-ginkgo.v", "-ginkgo.no-color", "-report-dir=" + t.TempDir()}
		}},
		{"ginkgo -p", true, func(t *testing.T) []string {
			return []string{"go", "tool", "ginkgo", "-p", "--procs=3", "--no-color", "--focus=Targeting through the kubelet", suiteBinary(t, "cluster"), "--", "-report-dir=" + t.TempDir()}
		}},
		// No signal: the suite's own timeout runs out in the middle of the
		// LIFE-2 specs (about 30 s each, serial).
		{"suite timeout", false, func(t *testing.T) []string {
			return []string{suiteBinary(t, "cluster"), "-ginkgo.focus=never restarted", "-ginkgo.timeout=45s", "-ginkgo.v", "-ginkgo.no-color", "-report-dir=" + t.TempDir()}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Ctrl-C once a spec of the run has a running pod in its namespace.
			run := ""
			out := interruptRun(t, c.argv(t), c.signal, func() bool {
				run = runningPodRun(client)
				return run != ""
			}, "a running pod of the run", 5*time.Minute, 4*time.Minute)
			checkRunLeftNothing(t, client, run, out.String())
		})
	}
}

// checkRunLeftNothing fails for every namespace, pod, node or cluster RBAC object
// of the run still in the cluster.
func checkRunLeftNothing(t *testing.T, client kubernetes.Interface, run, output string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: kube.LabelRun + "=" + run}
	nss, err := client.CoreV1().Namespaces().List(ctx, sel)
	if err != nil {
		t.Fatalf("the cluster the run reused is gone or unreachable after the run was cut short: %v", err)
	}
	for _, ns := range nss.Items {
		t.Errorf("namespace %s (%s) left after the run was cut short", ns.Name, ns.Status.Phase)
	}
	pods, err := client.CoreV1().Pods("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		t.Errorf("pod %s/%s left after the run was cut short", p.Namespace, p.Name)
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		t.Errorf("node %s (registered by a spec) left after the run was cut short", n.Name)
	}
	crs, err := client.RbacV1().ClusterRoles().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crs.Items {
		t.Errorf("clusterrole %s left after the run was cut short", r.Name)
	}
	crbs, err := client.RbacV1().ClusterRoleBindings().List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range crbs.Items {
		t.Errorf("clusterrolebinding %s left after the run was cut short", r.Name)
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", output)
	}
}

// runningPodRun is the run ID of a suite namespace holding a running pod, or "".
func runningPodRun(client kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.LabelRun})
	if err != nil {
		return ""
	}
	for _, ns := range nss.Items {
		pods, err := client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				return ns.Labels[kube.LabelRun]
			}
		}
	}
	return ""
}
