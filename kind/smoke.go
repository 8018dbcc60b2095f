package kind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/registry"
	"github.com/ectest/ectest/internal/hostdeps"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// NetworkGateway is the IPv4 gateway of kind's docker network: the host's
// address as the nodes see it, where the suite's registry listens for them.
func NetworkGateway(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "network", "inspect", "kind", "-f", "{{range .IPAM.Config}}{{.Gateway}} {{end}}").Output()
	if err != nil {
		return "", fmt.Errorf("docker network inspect kind: %w", err)
	}
	for _, gw := range strings.Fields(string(out)) {
		if !strings.Contains(gw, ":") {
			return gw, nil
		}
	}
	return "", fmt.Errorf("kind network has no IPv4 gateway (%q)", strings.TrimSpace(string(out)))
}

// Smoke proves the cluster serves the suites: the suite's registry is
// reachable from the nodes, a pod of the target image runs, and an
// ephemeral container of a debug image the node has never seen is pulled at
// debug time, runs, and has its status reported. It leaves nothing behind.
func Smoke(ctx context.Context, c *Cluster, logf func(string, ...any)) (err error) {
	gw, err := NetworkGateway(ctx)
	if err != nil {
		return err
	}
	reg, err := registry.Start(gw + ":0")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, reg.Close()) }()
	if err := hostdeps.Ensure(ctx, logf, hostdeps.DebugImage); err != nil {
		return fmt.Errorf("smoke: debug image: %w", err)
	}
	set, err := images.BuildAndPush(ctx, reg.Addr(), images.BuildOptions{})
	if err != nil {
		return err
	}
	if err := c.ConfigureRegistry(reg.Addr()); err != nil {
		return err
	}
	token := randomToken()
	debugRef, err := images.Variant(ctx, set[images.Debug], reg.Addr(), "smoke-"+token, token)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ectest-smoke-" + token, Labels: map[string]string{"ectest.io/suite": "smoke"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err = errors.Join(err, cs.CoreV1().Namespaces().Delete(dctx, ns.Name, metav1.DeleteOptions{}))
	}()
	// Pods are refused until the namespace's default ServiceAccount exists
	// (a fresh cluster's controller manager may take a moment).
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("namespace %s never got its default ServiceAccount: %w", ns.Name, err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "target", Image: set[images.Target], Args: []string{"--token=" + token},
		}}},
	}
	start := time.Now()
	if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	var got *corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = cs.CoreV1().Pods(ns.Name).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning, nil
	}); err != nil {
		return fmt.Errorf("target pod not running after 3m: %s", podSummary(got))
	}
	logf("smoke: pod of %s running after %s", set[images.Target], time.Since(start).Round(time.Millisecond))
	got.Spec.EphemeralContainers = append(got.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Image: debugRef, Command: []string{"sh", "-c", "ps -o pid,args; cat /ectest-variant; sleep 3600"},
		},
		TargetContainerName: "target",
	})
	start = time.Now()
	if _, err := cs.CoreV1().Pods(ns.Name).UpdateEphemeralContainers(ctx, pod.Name, got, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("add ephemeral container: %w", err)
	}
	var status *corev1.ContainerStatus
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = cs.CoreV1().Pods(ns.Name).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for i := range got.Status.EphemeralContainerStatuses {
			if s := &got.Status.EphemeralContainerStatuses[i]; s.Name == "debugger" {
				status = s
				return s.State.Running != nil, nil
			}
		}
		return false, nil
	}); err != nil {
		return fmt.Errorf("ephemeral container not running after 3m: %s", podSummary(got))
	}
	b, _ := json.Marshal(status)
	logf("smoke: ephemeral container of %s (pulled at debug time) running after %s; status: %s", debugRef, time.Since(start).Round(time.Millisecond), b)
	logs, err := cs.CoreV1().Pods(ns.Name).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "debugger"}).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("logs of the ephemeral container: %w", err)
	}
	if !strings.Contains(string(logs), "--token="+token) || !strings.Contains(string(logs), token+"\n") {
		return fmt.Errorf("the ephemeral container should see the target's process and run the pulled image; its log:\n%s", logs)
	}
	logf("smoke: the ephemeral container sees the target's process and runs the pulled image")
	return nil
}

func podSummary(p *corev1.Pod) string {
	if p == nil {
		return "(no pod)"
	}
	b, _ := json.Marshal(p.Status)
	return string(b)
}

func randomToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
