package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

func targetPod(f *kube.Framework, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "target"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{f.TargetContainer("target", 8080)}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

// getSubresource reads the pod through GET pods/ephemeralcontainers.
func getSubresource(ctx context.Context, f *kube.Framework, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	err := f.Client.CoreV1().RESTClient().Get().Namespace(f.Namespace).Resource("pods").Name(name).SubResource("ephemeralcontainers").Do(ctx).Into(&p)
	return &p, err
}

// strippable says whether a server of this minor release may drop a
// disallowed field instead of rejecting it, because the field's feature gate
// can be off there and the release's pkg/api/pod/util.go then clears it on
// ephemeral containers before validation (read at every release of
// framework/kube/releases.go):
//   - resizePolicy: InPlacePodVerticalScaling is beta (on by default, can be
//     turned off) in v1.33.13 and v1.34.10, GA locked on from v1.35.8;
//   - restartPolicy: ContainerRestartRules arrives alpha (off) in v1.34.10 and
//     is beta (on by default, can be turned off) from v1.35.8 to v1.37.1;
//     with it off, dropContainerRestartRules clears RestartPolicy and
//     RestartPolicyRules of every ephemeral container (v1.34.10
//     pkg/api/pod/util.go). v1.33.13 has no such drop (SidecarContainers,
//     GA locked on, clears only init containers' restartPolicy), so it must
//     reject. A v1.34.10 cluster with default gates strips it: observed.
//
// On a server with the gate on, validateFieldAllowList rejects both (neither
// is in allowedEphemeralContainerFields of pkg/apis/core/validation/
// validation.go, v1.33.13 to v1.37.1). Every other disallowed field must be
// rejected by every server.
func strippable(field string, minor int) bool {
	switch field {
	case "resizePolicy":
		return minor < 35
	case "restartPolicy", "restartPolicyRules":
		return minor >= 34
	}
	return false
}

// podWithEphemeral creates the target pod and adds an ephemeral container
// named name through the subresource, without waiting for either to run:
// the API specs judge the server, not the kubelet.
func podWithEphemeral(ctx context.Context, f *kube.Framework, name string) *corev1.Pod {
	GinkgoHelper()
	pod, err := f.CreatePod(ctx, targetPod(f))
	Expect(err).NotTo(HaveOccurred())
	_, err = f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer(name, ""))
	Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
	return pod
}

func ephemeralNames(p *corev1.Pod) []string {
	var out []string
	for _, e := range p.Spec.EphemeralContainers {
		out = append(out, e.Name)
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("The pods/ephemeralcontainers subresource", framework.Label(framework.LabelCluster, framework.LabelValidation, framework.LabelAPIRelease), func() {
	DescribeTable("adds an ephemeral container, which GET on the subresource and on the pod then show [API-1]",
		func(ctx SpecContext, method string) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			ec := f.DebugContainer("debugger", "")
			pods := f.Client.CoreV1().Pods(f.Namespace)
			switch method {
			case "update":
				_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			case "strategic merge patch":
				_, err = pods.Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(`{"spec":{"ephemeralContainers":[`+mustJSON(ec)+`]}}`), metav1.PatchOptions{}, "ephemeralcontainers")
			case "JSON merge patch":
				_, err = pods.Patch(ctx, pod.Name, types.MergePatchType, []byte(`{"spec":{"ephemeralContainers":[`+mustJSON(ec)+`]}}`), metav1.PatchOptions{}, "ephemeralcontainers")
			case "JSON patch":
				_, err = pods.Patch(ctx, pod.Name, types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/ephemeralContainers","value":[`+mustJSON(ec)+`]}]`), metav1.PatchOptions{}, "ephemeralcontainers")
			}
			Expect(err).NotTo(HaveOccurred(), "%s on pods/ephemeralcontainers: %s", method, kube.Rejection(err))
			sub, err := getSubresource(ctx, f, pod.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(ephemeralNames(sub)).To(Equal([]string{"debugger"}), "GET pods/ephemeralcontainers")
			got, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(ephemeralNames(got)).To(Equal([]string{"debugger"}), "GET pods")
			Expect(got.Spec.EphemeralContainers[0].Image).To(Equal(ec.Image))
		},
		Entry("with update (PUT)", "update", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("with a strategic merge patch", "strategic merge patch", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("with a JSON merge patch", "JSON merge patch", SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("with a JSON patch", "JSON patch", SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("a plain update of the pod can neither add, change nor remove ephemeral containers [API-1]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := podWithEphemeral(ctx, f, "debugger")
		pods := f.Client.CoreV1().Pods(f.Namespace)
		attempts := map[string]func(*corev1.Pod){
			"add": func(p *corev1.Pod) {
				p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, f.DebugContainer("second", ""))
			},
			"change": func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Command = []string{"sh", "-c", "exit 0"} },
			"remove": func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil },
		}
		for what, mutate := range attempts {
			var before string
			// Retry conflicts (the kubelet updates status meanwhile): the
			// answer that counts is the server's judgement of the change.
			updErr := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				before = mustJSON(cur.Spec.EphemeralContainers)
				mutate(cur)
				_, err = pods.Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			after, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(mustJSON(after.Spec.EphemeralContainers)).To(Equal(before),
				"a plain pod update must not %s ephemeral containers; the update answered: %s", what, kube.Rejection(updErr))
			AddReportEntry("plain pod update that tries to "+what, kube.Rejection(updErr))
		}
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("ephemeral containers cannot be set when a pod is created [API-2]", func(ctx SpecContext) {
		f := newFramework(ctx)
		_, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{f.DebugContainer("debugger", "")}
		}))
		Expect(kube.HasCause(err, "spec.ephemeralContainers", "cannot be set on create")).To(BeTrue(),
			"want Forbidden: cannot be set on create on spec.ephemeralContainers; got %s", kube.Rejection(err))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("ephemeral containers cannot be set in a pod template [API-2]", func(ctx SpecContext) {
		f := newFramework(ctx)
		tmpl := targetPod(f, func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{f.DebugContainer("debugger", "")}
		})
		labels := map[string]string{"app": "ectest-" + f.Token}
		one := int32(1)
		_, err := f.Client.AppsV1().Deployments(f.Namespace).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "template"},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: tmpl.Spec}},
		}, metav1.CreateOptions{})
		if err == nil {
			// Accepted (a nonconformance): its ReplicaSet would go on
			// making pods (or trying to) after the spec's cleanup deleted
			// them, until the run's end deletes the namespace.
			DeferCleanup(func(ctx SpecContext) error {
				return f.Client.AppsV1().Deployments(f.Namespace).Delete(ctx, "template", metav1.DeleteOptions{})
			})
		}
		Expect(kube.HasCause(err, "spec.template.spec.ephemeralContainers", "")).To(BeTrue(),
			"want a field error on spec.template.spec.ephemeralContainers, got %s", kube.Rejection(err))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("existing ephemeral containers can be neither changed nor removed through the subresource [API-3]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod := podWithEphemeral(ctx, f, "debugger")
		pods := f.Client.CoreV1().Pods(f.Namespace)
		for what, mutate := range map[string]func(*corev1.Pod){
			"change": func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Command = []string{"sh", "-c", "exit 0"} },
			"remove": func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil },
		} {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				mutate(cur)
				_, err = pods.UpdateEphemeralContainers(ctx, pod.Name, cur, metav1.UpdateOptions{})
				return err
			})
			Expect(err).To(HaveOccurred(), "the subresource let an existing ephemeral container be %sd", what)
			Expect(kube.HasCause(err, "spec.ephemeralContainers", "")).To(BeTrue(), "want a field error on spec.ephemeralContainers, got %s", kube.Rejection(err))
			AddReportEntry("subresource update that tries to "+what, kube.Rejection(err))
		}
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	DescribeTable("a disallowed field is rejected with its field path [API-4]",
		func(ctx SpecContext, field string, set func(*corev1.EphemeralContainer), persisted func(*corev1.EphemeralContainer) bool) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			}))
			Expect(err).NotTo(HaveOccurred())
			ec := f.DebugContainer("debugger", "")
			set(&ec)
			got, err := f.AddEphemeral(ctx, f.Client, pod.Name, ec)
			if err == nil {
				// A server whose feature gate for the field is off drops it
				// instead of rejecting it: acceptable only for such a field,
				// on a server old enough to have the gate off, and only if
				// the field is not persisted.
				Expect(persisted(&got.Spec.EphemeralContainers[0])).To(BeFalse(),
					"the server accepted and persisted %s on an ephemeral container: %s", field, mustJSON(got.Spec.EphemeralContainers[0]))
				Expect(strippable(field, serverMinor())).To(BeTrue(),
					"server %s accepted %s on an ephemeral container without persisting it; no feature gate of this release lets it drop the field, so it must reject it (%s and pkg/api/pod/util.go)", env.ServerVersion, field, kube.Cite(env.ServerVersion, "", "pkg/features/kube_features.go"))
				AddReportEntry("outcome", field+": accepted but not persisted (stripped)", ReportEntryVisibilityAlways)
				return
			}
			Expect(kube.HasCause(err, field, "")).To(BeTrue(), "want a field error on %s (%s, validateEphemeralContainers), got %s", field, kube.Cite(env.ServerVersion, "", "pkg/apis/core/validation/validation.go"), kube.Rejection(err))
			AddReportEntry("outcome", field+": rejected: "+kube.Rejection(err), ReportEntryVisibilityAlways)
		},
		Entry("ports", "ports", func(c *corev1.EphemeralContainer) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} },
			func(c *corev1.EphemeralContainer) bool { return len(c.Ports) > 0 }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("livenessProbe", "livenessProbe", func(c *corev1.EphemeralContainer) { c.LivenessProbe = execProbe() },
			func(c *corev1.EphemeralContainer) bool { return c.LivenessProbe != nil }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("readinessProbe", "readinessProbe", func(c *corev1.EphemeralContainer) { c.ReadinessProbe = execProbe() },
			func(c *corev1.EphemeralContainer) bool { return c.ReadinessProbe != nil }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("startupProbe", "startupProbe", func(c *corev1.EphemeralContainer) { c.StartupProbe = execProbe() },
			func(c *corev1.EphemeralContainer) bool { return c.StartupProbe != nil }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("lifecycle", "lifecycle", func(c *corev1.EphemeralContainer) {
			c.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		}, func(c *corev1.EphemeralContainer) bool { return c.Lifecycle != nil }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("resources", "resources", func(c *corev1.EphemeralContainer) {
			c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resourceQty("100m")}}
		}, func(c *corev1.EphemeralContainer) bool { return len(c.Resources.Limits) > 0 }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("resizePolicy", "resizePolicy", func(c *corev1.EphemeralContainer) {
			c.ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired}}
		}, func(c *corev1.EphemeralContainer) bool { return len(c.ResizePolicy) > 0 }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("restartPolicy", "restartPolicy", func(c *corev1.EphemeralContainer) {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}, func(c *corev1.EphemeralContainer) bool { return c.RestartPolicy != nil }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		// KEP-5307's restart rules (beta, on by default from 1.35): an
		// ephemeral container is never restarted, so it may not have any.
		Entry("restartPolicyRules", "restartPolicyRules", func(c *corev1.EphemeralContainer) {
			c.RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestart,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
		}, func(c *corev1.EphemeralContainer) bool { return len(c.RestartPolicyRules) > 0 }, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("volumeMounts[].subPath", "subPath", func(c *corev1.EphemeralContainer) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
		}, func(c *corev1.EphemeralContainer) bool {
			return len(c.VolumeMounts) > 0 && c.VolumeMounts[0].SubPath != ""
		}, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("volumeMounts[].subPathExpr", "subPathExpr", func(c *corev1.EphemeralContainer) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPathExpr: "$(POD_NAME)"}}
		}, func(c *corev1.EphemeralContainer) bool {
			return len(c.VolumeMounts) > 0 && c.VolumeMounts[0].SubPathExpr != ""
		}, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	DescribeTable("an ephemeral container's name must differ from every container's [API-5]",
		func(ctx SpecContext, name string, withInit bool, addFirst bool) {
			f := newFramework(ctx)
			pod, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) {
				if withInit {
					p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: f.Images["debug"], Command: []string{"true"}}}
				}
			}))
			Expect(err).NotTo(HaveOccurred())
			if addFirst {
				_, err = f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer(name, ""))
				Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			}
			_, err = f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer(name, ""))
			Expect(kube.HasCause(err, "spec.ephemeralContainers", "Duplicate value")).To(BeTrue(), "want Duplicate value, got %s", kube.Rejection(err))
		},
		Entry("a regular container", "target", false, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("an init container", "init", true, false, SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("another ephemeral container", "debugger", false, true, SpecTimeout(framework.DefaultTimeouts.Spec)),
	)

	It("targetContainerName must name an existing container [API-6]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		_, err = f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer("debugger", "no-such-container"))
		Expect(kube.HasCause(err, "targetContainerName", "Not found")).To(BeTrue(), "want Not found on targetContainerName, got %s", kube.Rejection(err))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("an update based on a stale resourceVersion gets a Conflict [API-7]", func(ctx SpecContext) {
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		stale, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer("first", ""))
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		stale.Spec.EphemeralContainers = append(stale.Spec.EphemeralContainers, f.DebugContainer("second", ""))
		_, err = f.Client.CoreV1().Pods(f.Namespace).UpdateEphemeralContainers(ctx, pod.Name, stale, metav1.UpdateOptions{})
		Expect(err).To(HaveOccurred(), "a stale update was accepted")
		Expect(kube.Rejection(err)).To(ContainSubstring("409 Conflict"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	It("the pre-1.22 EphemeralContainers request body is rejected with a clear error [API-8] [SKEW-2]", framework.Label(framework.LabelSkew), func(ctx SpecContext) {
		if v := serverMinor(); v < 22 {
			Skip(fmt.Sprintf("server %s: before 1.22 the subresource's body is the EphemeralContainers kind", env.ServerVersion))
		}
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		old := map[string]any{
			"kind": "EphemeralContainers", "apiVersion": "v1",
			"metadata":            map[string]any{"name": pod.Name, "namespace": f.Namespace},
			"ephemeralContainers": []any{f.DebugContainer("debugger", "")},
		}
		err = f.Client.CoreV1().RESTClient().Put().Namespace(f.Namespace).Resource("pods").Name(pod.Name).SubResource("ephemeralcontainers").
			Body([]byte(mustJSON(old))).Do(ctx).Error()
		Expect(err).To(HaveOccurred(), "a server from 1.22 on must not accept the EphemeralContainers kind")
		AddReportEntry("server's answer to the old shape", kube.Rejection(err), ReportEntryVisibilityAlways)
		got, gerr := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(gerr).NotTo(HaveOccurred())
		Expect(got.Spec.EphemeralContainers).To(BeEmpty(), "the old-shape request added a container")
		Expect(apierrors.IsBadRequest(err)).To(BeTrue(), "want 400 Bad Request for the body's kind, got %s", kube.Rejection(err))
		Expect(kube.Rejection(err)).To(ContainSubstring(`"EphemeralContainers"`), "the error must name the kind the server no longer takes")
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	// metadata.generation of pods is set on create and bumped on every spec
	// change, the ephemeralcontainers subresource's included, from
	// Kubernetes 1.33 on, whatever the PodObservedGenerationTracking gate
	// says (it governs status.observedGeneration only; alpha, off, in
	// 1.33): pkg/registry/core/pod/strategy.go, PrepareForCreate and
	// podEphemeralContainersStrategy.PrepareForUpdate calling
	// updatePodGeneration, in every release from v1.33.13 to v1.37.1; v1.32.5
	// has neither.
	It("adding an ephemeral container bumps the pod's generation [API-11]", func(ctx SpecContext) {
		if v := serverMinor(); v < 33 {
			Skip(fmt.Sprintf("server %s: pods' metadata.generation is maintained from Kubernetes 1.33 (pkg/registry/core/pod/strategy.go, updatePodGeneration)", env.ServerVersion))
		}
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		got, err := f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer("debugger", ""))
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		AddReportEntry("generation", fmt.Sprintf("%d -> %d on server %s", pod.Generation, got.Generation, env.ServerVersion), ReportEntryVisibilityAlways)
		Expect(got.Generation).To(BeNumerically(">", pod.Generation), "server %s did not bump metadata.generation (%s, updatePodGeneration)", env.ServerVersion, kube.Cite(env.ServerVersion, "", "pkg/registry/core/pod/strategy.go"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
