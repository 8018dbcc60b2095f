package cluster_test

import (
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var _ = Describe("Debugging another user's process through the kubelet", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelLinuxOnly, string(capability.PtraceRules)), func() {
	DescribeTable("an ephemeral container reads the environ and root of a target running as another user only with SYS_PTRACE, asked for explicitly [SEC-3] [STORY-DEBUG]",
		func(ctx SpecContext, caps []corev1.Capability, readable bool) {
			f := newPrivilegedFramework(ctx, capability.PtraceRules)
			nobody := int64(65534)
			pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) {
				p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: &nobody}
				p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "ECTEST_SECRET", Value: f.Token}}
			}))
			ec := f.DebugContainer("debugger", "target")
			root := int64(0)
			ec.SecurityContext = &corev1.SecurityContext{RunAsUser: &root, Capabilities: &corev1.Capabilities{Add: caps}}
			f.RunEphemeral(ctx, pod.Name, ec)
			b := capability.Observe(capability.PtraceRules).Case(fmt.Sprintf("capabilities %v", caps))
			procs, raw := processes(ctx, f, pod.Name, "debugger")
			pid := kube.PIDOf(procs, f.TargetMarker("target"))
			if pid == 0 {
				// The spec reaches the target through targetContainerName:
				// a node that does not honour it blocks this capability
				// (pid-target's specs judge that), it does not judge it.
				dep := capability.DependsOn(capability.PtraceRules)
				f.Checker.Record(b.BlockedBy(dep, string(dep)+" did not work: the target's process is not visible to the ephemeral container targeting it").Evidence("%s", raw).Done(""))
				return
			}
			// A denied read is cat's exit status: run fails the spec only
			// when exec itself did not work.
			environ, _, envErr := run(ctx, f, pod.Name, "debugger", nil, "cat", fmt.Sprintf("/proc/%d/environ", pid))
			marker, _, rootErr := run(ctx, f, pod.Name, "debugger", nil, "cat", fmt.Sprintf("/proc/%d/root/ectest/marker", pid))
			gotEnviron := envErr == nil && strings.Contains(environ, "ECTEST_SECRET="+f.Token)
			gotRoot := rootErr == nil && strings.TrimSpace(marker) == f.Token+"-target"
			b.Evidence("environ: %v %v\nroot: %v %v", gotEnviron, envErr, gotRoot, rootErr)
			b.Check(gotEnviron == readable && gotRoot == readable, "environ readable=%v, root readable=%v; want %v", gotEnviron, gotRoot, readable)
			f.Checker.Record(b.Done(map[bool]string{true: "readable", false: "denied"}[readable]))
		},
		Entry("without SYS_PTRACE: denied", nil, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("with SYS_PTRACE: readable", []corev1.Capability{"SYS_PTRACE"}, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})

var _ = Describe("Static pods", framework.Label(framework.LabelCluster, framework.LabelValidation, framework.LabelAPIRelease), func() {
	It("a static (mirror) pod does not accept ephemeral containers [API-9]", func(ctx SpecContext) {
		if !env.Managed {
			Skip("writing a static pod manifest needs access to a node: only on the suite's own kind cluster")
		}
		f := newFramework(ctx)
		node := env.Node // a kind node's container has the node's name
		static := targetPod(f)
		f.UseRuntimeClass(&static.Spec)
		static.Name, static.Namespace = "static-"+f.Token, f.Namespace
		static.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
		manifest, err := yaml.Marshal(static)
		Expect(err).NotTo(HaveOccurred())
		path := "/etc/kubernetes/manifests/ectest-" + f.Token + ".yaml"
		write := exec.CommandContext(ctx, "docker", "exec", "-i", node, "sh", "-c", "cat > "+path)
		write.Stdin = strings.NewReader(string(manifest))
		out, err := write.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		DeferCleanup(func() error {
			return exec.Command("docker", "exec", node, "rm", "-f", path).Run()
		})
		mirror := static.Name + "-" + node
		Eventually(ctx, func() error {
			_, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, mirror, metav1.GetOptions{})
			return err
		}).WithTimeout(f.Timeouts.ContainerReady*2).WithPolling(time.Second).Should(Succeed(), "mirror pod %s never appeared", mirror)
		_, err = f.AddEphemeral(ctx, f.Client, mirror, f.DebugContainer("debugger", ""))
		Expect(err).To(HaveOccurred(), "a mirror pod accepted an ephemeral container")
		AddReportEntry("server's answer for a mirror pod", kube.Rejection(err), ReportEntryVisibilityAlways)
		// Every release read (v1.33.13 to v1.37.1, pkg/apis/core/validation/
		// validation.go, ValidatePodEphemeralContainersUpdate) reports the
		// cause on the object itself (field.NewPath(""), shown as "[]"), so
		// only the message is required.
		Expect(kube.HasCause(err, "", "static pods do not support ephemeral containers")).To(BeTrue(),
			"want a 422 cause saying static pods do not support ephemeral containers, got %s", kube.Rejection(err))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
