package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	utilexec "k8s.io/client-go/util/exec"
)

var _ = Describe("User stories on a cluster", framework.Label(framework.LabelCluster, framework.LabelStory), func() {
	It("an operator debugs a distroless target: its files, tools it lacks, and a request from the pod's network to a service [STORY-OPS]", framework.Label(framework.LabelLinuxOnly), func(ctx SpecContext) {
		f := newFramework(ctx, capability.StoryOps)
		backend := f.RunPod(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "backend", Labels: map[string]string{"app": "backend-" + f.Token}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{f.TargetContainer("backend", 8080)}},
		})
		_, err := f.Client.CoreV1().Services(f.Namespace).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "backend"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "backend-" + f.Token},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_ = backend
		pod := f.RunPod(ctx, targetPod(f))
		_, _, err = f.Exec(ctx, pod.Name, "target", nil, false, "sh", "-c", "true")
		Expect(err).To(HaveOccurred(), "the target image must have no shell")
		f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", "target"))
		b := capability.Observe(capability.StoryOps)
		// Run tools the target lacks and find its process.
		procs, raw := processes(ctx, f, pod.Name, "debugger")
		b.Evidence("ps in the ephemeral container:\n%s", raw)
		if pid := kube.PIDOf(procs, f.TargetMarker("target")); pid == 0 {
			b.Problem("failed: the target's process is not visible")
		} else {
			// Inspect its filesystem.
			marker, stderr, err := run(ctx, f, pod.Name, "debugger", nil, "cat", fmt.Sprintf("/proc/%d/root/ectest/marker", pid))
			b.Evidence("cat /proc/%d/root/ectest/marker: %q %q %v", pid, marker, stderr, err)
			b.Check(err == nil && strings.TrimSpace(marker) == f.Token+"-target", "failed: cat reads the file the target wrote")
		}
		// A request from the pod's network to a service (its endpoints
		// and the cluster's DNS may take a moment).
		svc := fmt.Sprintf("http://backend.%s.svc.cluster.local/info", f.Namespace)
		want := `"token":"` + f.Token + `-backend"`
		var out string
		_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll*5, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
			out, _, err = f.Exec(ctx, pod.Name, "debugger", nil, false, "wget", "-qO-", svc)
			return err == nil && strings.Contains(out, want), nil
		})
		var ee utilexec.ExitError
		if err != nil && !errors.As(err, &ee) {
			f.Checker.Fail(fmt.Sprintf("exec wget %s in %s/debugger: %v", svc, pod.Name, err))
		}
		b.Evidence("wget %s: %q %v", svc, out, err)
		b.Check(err == nil && strings.Contains(out, want), "failed: a request from the pod's network to %s reaches the backend within %s", svc, f.Timeouts.ContainerReady)
		f.Checker.Record(b.Done("every step worked"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("the same non-interactive audit runs across many pods and its results are read from logs [STORY-AUTO]", func(ctx SpecContext) {
		f := newFramework(ctx)
		const n = 4
		for i := 0; i < n; i++ {
			p := targetPod(f)
			p.Name = fmt.Sprintf("target-%d", i)
			_, err := f.CreatePod(ctx, p)
			Expect(err).NotTo(HaveOccurred())
		}
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("target-%d", i)
			f.WaitPod(ctx, name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
			ec := f.DebugContainer("audit", "target")
			ec.Command = []string{"sh", "-c", "echo audit:$(ps -o args | grep -c -- '--toke[n]=')"}
			_, err := f.AddEphemeral(ctx, f.Client, name, ec)
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		}
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("target-%d", i)
			f.WaitPod(ctx, name, "showing the audit finished", func(p *corev1.Pod) bool {
				s := kube.EphemeralStatus(p, "audit")
				return s != nil && s.State.Terminated != nil
			})
			logs, err := f.Logs(ctx, name, "audit")
			Expect(err).NotTo(HaveOccurred())
			Expect(logs).To(ContainSubstring("audit:1"), "pod %s: the audit should see exactly the target's one process", name)
		}
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
