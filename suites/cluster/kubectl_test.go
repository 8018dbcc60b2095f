package cluster_test

import (
	"os/exec"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var _ = Describe("kubectl debug", framework.Label(framework.LabelCluster, framework.LabelStory), func() {
	kubectl := func(ctx SpecContext, f *kube.Framework, stdin string, args ...string) (string, error) {
		GinkgoHelper()
		if env.Kubectl == "" {
			Skip("no kubectl within one minor version of the server " + env.ServerVersion)
		}
		cmd := exec.CommandContext(ctx, env.Kubectl, append([]string{"--kubeconfig", env.Kubeconfig, "-n", f.Namespace}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	It("kubectl debug --target, non-interactive and interactive, adds ephemeral containers the API shows targeting the container [API-1] [CRI-2] [STORY-DEBUG]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := f.RunPod(ctx, targetPod(f))
		out, err := kubectl(ctx, f, "", "debug", pod.Name, "--image="+f.Images[images.Debug], "--target=target", "-c", "batch", "--", "sh", "-c", "ps -o pid,args")
		Expect(err).NotTo(HaveOccurred(), out)
		got := f.WaitPod(ctx, pod.Name, "showing the batch debugger finished", func(p *corev1.Pod) bool {
			s := kube.EphemeralStatus(p, "batch")
			return s != nil && s.State.Terminated != nil
		})
		Expect(got.Spec.EphemeralContainers[0].TargetContainerName).To(Equal("target"))
		logs, err := f.Logs(ctx, pod.Name, "batch")
		Expect(err).NotTo(HaveOccurred())
		Expect(logs).To(ContainSubstring(f.TargetMarker("target")), "kubectl debug --target should see the target's process")

		out, err = kubectl(ctx, f, "ps -o pid,args; exit\n", "debug", "-it", pod.Name, "--image="+f.Images[images.Debug], "--target=target", "-c", "interactive", "--", "sh")
		Expect(err).NotTo(HaveOccurred(), out)
		Expect(out).To(ContainSubstring(f.TargetMarker("target")), "the interactive session should show the target's process")
		p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ephemeralNames(p)).To(Equal([]string{"batch", "interactive"}))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
