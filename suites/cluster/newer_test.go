package cluster_test

import (
	"fmt"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// Newer pod features that name ephemeral containers, each gated on the
// kubelet release that has it on by default (framework.MinimumKubeletVersion:
// on an older kubelet the spec says "not applicable" with the release).
const (
	// Sidecar containers (KEP-753, restartable init containers): beta and
	// on by default from 1.29, GA in 1.33.
	sidecarMinKubelet = "1.29"
	// The kubelet reports status.observedGeneration (KEP-5067,
	// PodObservedGenerationTracking): on by default from 1.34, GA in 1.35.
	observedGenerationMinKubelet = "1.35"
)

const (
	sidecarTargetText      = "an ephemeral container targeting a running sidecar (a restartable init container) sees exactly the sidecar's processes [CRI-2] [MinimumKubeletVersion:1.29]"
	observedGenerationText = "after an ephemeral container is added, the kubelet's status.observedGeneration reaches the pod's new generation [API-11] [MinimumKubeletVersion:1.35]"
)

var (
	sidecarTargetLabels      = framework.Label(string(capability.PIDTarget), framework.LabelPID, framework.LabelLinuxOnly, framework.MinimumKubeletVersion(sidecarMinKubelet))
	observedGenerationLabels = framework.Label(framework.LabelLifecycle, framework.MinimumKubeletVersion(observedGenerationMinKubelet))
)

var _ = Describe("Newer pod features and ephemeral containers", framework.Label(framework.LabelCluster), func() {
	It(sidecarTargetText, sidecarTargetLabels, func(ctx SpecContext) { sidecarTarget(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(observedGenerationText, observedGenerationLabels, func(ctx SpecContext) { observedGeneration(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// sidecarTarget: targetContainerName may name any container of the pod,
// init containers included (validateEphemeralContainers looks the name up
// among all of them); a running sidecar is a real target.
func sidecarTarget(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.PIDTarget)
	framework.SkipOnWindows(env.Runtime.OS)
	f.RequireKubelet(ctx, sidecarMinKubelet, "sidecar containers (restartable init containers) are on by default")
	always := corev1.ContainerRestartPolicyAlways
	sidecar := f.TargetContainer("sidecar", 8081)
	sidecar.RestartPolicy = &always
	pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) { p.Spec.InitContainers = []corev1.Container{sidecar} }))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", "sidecar"))
	procs, raw, err := f.Processes(ctx, pod.Name, "debugger")
	Expect(err).NotTo(HaveOccurred())
	m := cri.Markers{Self: f.DebugMarker("debugger"), Target: f.TargetMarker("sidecar"), Siblings: []string{f.TargetMarker("target")}, Helpers: cri.DebugHelpers}
	inside := cri.Classify(procs, m)
	view, why, from := nodePIDView(ctx, f, pod, m, inside)
	b := capability.Observe(capability.PIDTarget).Case("a sidecar target").
		Evidence("targetContainerName=sidecar, a restartable init container (restartPolicy: Always) running beside the container target\njudged %s: %s\nps in the ephemeral container:\n%s", from, why, raw)
	b.Check(view == cri.ViewTarget, "targeting the sidecar, the ephemeral container is in the %s, not the sidecar's", view)
	b.Check(view != cri.ViewTarget || inside == cri.ViewTarget, "in the sidecar's namespace, but the processes it sees (ps) look like the %s", inside)
	f.Checker.Record(b.Done(string(view)))
}

// observedGeneration: KEP-5067: the API server bumps metadata.generation
// when an ephemeral container is added (API-11's spec), and the kubelet
// acknowledges the spec it acted on in status.observedGeneration.
func observedGeneration(ctx SpecContext, at placement) {
	if v := serverMinor(); v < 35 {
		Skip(fmt.Sprintf("not applicable: server %s; pods' status.observedGeneration is GA from Kubernetes 1.35 (KEP-5067)", env.ServerVersion))
	}
	f := at.framework(ctx)
	f.RequireKubelet(ctx, observedGenerationMinKubelet, "the kubelet reports status.observedGeneration")
	pod := f.RunPod(ctx, targetPod(f))
	got, err := f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer("debugger", ""))
	Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
	Expect(got.Generation).To(BeNumerically(">", pod.Generation), "metadata.generation did not change when an ephemeral container was added")
	seen := f.WaitPod(ctx, pod.Name, fmt.Sprintf("observed at generation %d by the kubelet", got.Generation), func(p *corev1.Pod) bool {
		return p.Status.ObservedGeneration >= got.Generation
	})
	AddReportEntry("generation", fmt.Sprintf("metadata.generation %d -> %d; status.observedGeneration %d (kubelet on %s)", pod.Generation, got.Generation, seen.Status.ObservedGeneration, seen.Spec.NodeName), ReportEntryVisibilityAlways)
}
