package cluster_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	"github.com/google/go-containerregistry/pkg/name"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func exitingDebugger(f *kube.Framework, name, script string) corev1.EphemeralContainer {
	ec := f.DebugContainer(name, "")
	ec.Command = []string{"sh", "-c", script}
	return ec
}

// The lifecycle specs' texts: the skew specs run the same bodies on every kubelet.
const (
	lifecycleStatusText      = "status moves to running and then terminated with the process's exit code, output before any attach is in the logs [LIFE-1] [LIFE-4]"
	lifecyclePullFailText    = "an ephemeral container whose image cannot be pulled is reported waiting, with the pull failure as its reason [LIFE-1]"
	lifecycleRestartText     = "an exited ephemeral container is never restarted [LIFE-2]"
	lifecycleSideEffectsText = "adding, running and exiting an ephemeral container changes neither the pod's phase, readiness and conditions nor the target's restart count, start time, container ID and landing (namespaces, credentials, cgroups, oom_score_adj, read on the node) [LIFE-3] [LIFE-5]"
	lifecyclePullText        = "the debug image is pulled at debug time: an image pushed after the pod started runs as the ephemeral container [LIFE-6]"
)

// restartPolicies are the LIFE-2 table's entries.
var restartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}

var _ = Describe("Ephemeral container lifecycle", framework.Label(framework.LabelCluster, framework.LabelLifecycle), func() {
	It(lifecycleStatusText, func(ctx SpecContext) { lifecycleStatus(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(lifecyclePullFailText, func(ctx SpecContext) { lifecyclePullFailure(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	var entries []TableEntry
	for _, policy := range restartPolicies {
		entries = append(entries, Entry("restartPolicy "+string(policy), policy, SpecTimeout(framework.DefaultTimeouts.Spec)))
	}
	DescribeTable(lifecycleRestartText, Label(string(capability.ExitedStaysExited)), func(ctx SpecContext, policy corev1.RestartPolicy) { lifecycleNeverRestarted(ctx, onCluster, policy) }, entries)
	It(lifecycleSideEffectsText, framework.Label(string(capability.NoSideEffects)), func(ctx SpecContext) { lifecycleSideEffects(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(lifecyclePullText, func(ctx SpecContext) { lifecyclePullAtDebugTime(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// lifecycleStatus: the ephemeral container's status moves through running
// to terminated with its exit code; its early output is in its log.
func lifecycleStatus(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.Logs)
	pod := f.RunPod(ctx, targetPod(f))
	_, err := f.AddEphemeral(ctx, f.Client, pod.Name, exitingDebugger(f, "debugger", "echo before-attach-$((6*7)); sleep 3; exit 7"))
	Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
	var seen []string
	got := f.WaitPod(ctx, pod.Name, "showing the ephemeral container terminated", func(p *corev1.Pod) bool {
		s := kube.EphemeralStatus(p, "debugger")
		switch {
		case s == nil:
			return false
		case s.State.Waiting != nil:
			seen = appendOnce(seen, "waiting")
		case s.State.Running != nil:
			seen = appendOnce(seen, "running")
		case s.State.Terminated != nil:
			seen = appendOnce(seen, "terminated")
			return true
		}
		return false
	})
	s := kube.EphemeralStatus(got, "debugger")
	AddReportEntry("states seen", strings.Join(seen, " -> "), ReportEntryVisibilityAlways)
	Expect(seen).To(ContainElement("running"), "the status never showed the container running")
	Expect(s.State.Terminated.ExitCode).To(BeEquivalentTo(7))
	// Reading the log through the API server is what Logs promises: a
	// refusal to serve it is the capability's failure.
	b := capability.Observe(capability.Logs)
	logs, err := f.Logs(ctx, pod.Name, "debugger")
	b.Evidence("the ephemeral container's log through the API server: %q (err %v)", logs, err)
	if err != nil {
		b.Problem("its log cannot be read through the API server: %v", err)
	} else {
		b.Check(strings.Contains(logs, "before-attach-42"), "the output written before any attach (before-attach-42) is not in its log")
	}
	f.Checker.Record(b.Done("output before any attach is in the log"))
}

// lifecyclePullFailure: an image that cannot be pulled leaves the ephemeral
// container waiting with the pull failure as its reason.
func lifecyclePullFailure(ctx SpecContext, at placement) {
	f := at.framework(ctx)
	pod := f.RunPod(ctx, targetPod(f))
	// A tag missing from the suite's own registry: the node reaches the
	// registry, which answers that the manifest is unknown.
	debug, err := name.ParseReference(f.Images[images.Debug], name.Insecure)
	Expect(err).NotTo(HaveOccurred())
	missing := debug.Context().Tag("absent-" + f.Token).String()
	ec := f.DebugContainer("debugger", "")
	ec.Image = missing
	_, err = f.AddEphemeral(ctx, f.Client, pod.Name, ec)
	Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
	// The kubelet's verdict on the image is the first state after the
	// ones it reports before it tries (ContainerCreating): it must be
	// waiting, with the pull failure as reason.
	beforePull := []string{"", "ContainerCreating", "PodInitializing"}
	// The kubelet writes a pod's status before it syncs the pod's
	// containers (kubelet.SyncPod), so the failure of this sync's pull
	// shows in the next sync's status: after the pod worker's back-off of
	// an error (10 s), or at once on a change of the pod. Once the kubelet
	// has told of the failure (its Failed event on the container), the
	// spec changes an annotation of the pod, for that sync to come now.
	// What is judged is the status either way.
	fieldPath := "spec.ephemeralContainers{debugger}"
	nudged := false
	var seen []string
	got, err := f.PollPod(ctx, pod.Name, "showing the kubelet's verdict on the ephemeral container's image", func(ctx context.Context, p *corev1.Pod) bool {
		s := kube.EphemeralStatus(p, "debugger")
		switch {
		case s == nil:
			return false
		case s.State.Waiting != nil:
			seen = appendOnce(seen, "waiting:"+s.State.Waiting.Reason)
			if !slices.Contains(beforePull, s.State.Waiting.Reason) {
				return true
			}
			if !nudged && kubeletFailed(ctx, f, pod.Name, fieldPath) {
				nudge := fmt.Sprintf(`{"metadata":{"annotations":{"ectest.io/nudge":%q}}}`, f.Token)
				_, err := f.Client.CoreV1().Pods(f.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(nudge), metav1.PatchOptions{})
				nudged = err == nil
				AddReportEntry("kubelet sync asked for", fmt.Sprintf("after its Failed event on %s: an annotation changed (err %v)", fieldPath, err), ReportEntryVisibilityAlways)
			}
			return false
		case s.State.Running != nil:
			seen = appendOnce(seen, "running")
		case s.State.Terminated != nil:
			seen = appendOnce(seen, "terminated:"+s.State.Terminated.Reason)
		}
		return true
	})
	Expect(err).NotTo(HaveOccurred(), "the ephemeral container's status never left %v; states seen: %s", beforePull, strings.Join(seen, " -> "))
	s := kube.EphemeralStatus(got, "debugger")
	AddReportEntry("states seen", strings.Join(seen, " -> "), ReportEntryVisibilityAlways)
	Expect(s.State.Waiting).NotTo(BeNil(), "a container whose image cannot be pulled must be waiting; states seen: %s", strings.Join(seen, " -> "))
	AddReportEntry("waiting", s.State.Waiting.Reason+": "+s.State.Waiting.Message, ReportEntryVisibilityAlways)
	Expect(s.State.Waiting.Reason).To(BeElementOf("ErrImagePull", "ImagePullBackOff"), "the waiting reason must be the pull failure")
	Expect(s.State.Waiting.Message).To(ContainSubstring(missing), "the reason's message must name the image")
	Expect(s.RestartCount).To(BeZero())
}

// lifecycleNeverRestarted: an exited ephemeral container is not restarted,
// whatever the pod's restartPolicy (ExitedStaysExited). No window of
// silence decides it: the kubelet's own next sync of the pod does. Once
// the API shows the debugger terminated, the kubelet has recorded its exit;
// a second ephemeral container (the sentinel) is then added, and the sync
// that starts it is a sync after the exit. kuberuntime's computePodActions
// decides every container of the pod in one pass and SyncPod starts
// ephemeral containers in spec order, so a kubelet that restarts exited
// ephemeral containers (at once: a first exit has no back-off entry) starts
// the debugger again in that very sync, before the sentinel. What decides
// is seen from outside the kubelet: the debugger's process appends a line
// to a file of the pod's emptyDir each time it starts, which the sentinel
// reads; the status (restart count, container ID) is the evidence beside it.
func lifecycleNeverRestarted(ctx SpecContext, at placement, policy corev1.RestartPolicy) {
	f := at.framework(ctx, capability.ExitedStaysExited)
	starts := corev1.VolumeMount{Name: "starts", MountPath: "/starts"}
	pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) {
		p.Spec.RestartPolicy = policy
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: starts.Name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}))
	debugger := exitingDebugger(f, "debugger", "echo started >> /starts/debugger; exit 1")
	debugger.VolumeMounts = []corev1.VolumeMount{starts}
	_, err := f.AddEphemeral(ctx, f.Client, pod.Name, debugger)
	Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
	// A kubelet that starts it again may never show it terminated at all.
	exited := f.WaitPod(ctx, pod.Name, "showing the ephemeral container terminated (or started again)", func(p *corev1.Pod) bool {
		s := kube.EphemeralStatus(p, "debugger")
		return s != nil && (s.State.Terminated != nil || s.RestartCount > 0)
	})
	first := kube.EphemeralStatus(exited, "debugger")
	b := capability.Observe(capability.ExitedStaysExited)
	if first.State.Terminated == nil {
		b.Evidence("restartPolicy %s; the debugger's status: %s", policy, ephemeralSummary(first))
		b.Problem("the kubelet started the debugger again before its status ever showed it terminated: %s", ephemeralSummary(first))
		f.Checker.Record(b.Done(""))
		return
	}
	sentinel := f.DebugContainer("sentinel", "")
	sentinel.VolumeMounts = []corev1.VolumeMount{starts}
	synced := f.RunEphemeral(ctx, pod.Name, sentinel)
	now := kube.EphemeralStatus(synced, "debugger")
	out, stderr, err := run(ctx, f, pod.Name, "sentinel", nil, "cat", "/starts/debugger")
	if strings.Count(out, "started\n") == 0 {
		// The trace itself did not work (the emptyDir, the shell): the
		// suite's own fixture, no verdict on the kubelet.
		Fail(fmt.Sprintf("%sthe debugger left no trace of its start on the pod's emptyDir: %q (stderr %q, err %v)", capability.EnvironmentErrorPrefix, out, stderr, err))
	}
	b.Evidence("restartPolicy %s; the debugger's starts, each a line its own process appended to the pod's emptyDir, read by a second ephemeral container the kubelet started after the exit: %q (stderr %q, err %v)", policy, out, stderr, err)
	b.Evidence("judged at the kubelet's next sync of the pod after the exit, the one that started the second container: a kubelet restarting exited ephemeral containers as it restarts others restarts one at once after its first exit (kuberuntime doBackOff: no back-off entry yet), so in that sync")
	b.Evidence("the debugger's status: at its exit %s; once the kubelet started the second one %s", ephemeralSummary(first), ephemeralSummary(now))
	b.Check(err == nil && strings.Count(out, "started\n") == 1, "the debugger's process started %d times, not once", strings.Count(out, "started\n"))
	b.Check(now.RestartCount == 0 && now.State.Terminated != nil && now.ContainerID == first.ContainerID,
		"the kubelet reports the debugger started again: %s, at its exit %s", ephemeralSummary(now), ephemeralSummary(first))
	f.Checker.Record(b.Done("exited once, and stayed exited through the kubelet's next sync of the pod"))
}

// podEvents lists the events of the spec's pod named pod.
func podEvents(ctx context.Context, f *kube.Framework, pod string) ([]corev1.Event, error) {
	events, err := f.Client.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return nil, err
	}
	return events.Items, nil
}

// kubeletFailed says whether the kubelet has reported a Failed event on the
// container at fieldPath of the pod (a failed pull, for one).
func kubeletFailed(ctx context.Context, f *kube.Framework, pod, fieldPath string) bool {
	events, err := podEvents(ctx, f, pod)
	return err == nil && slices.ContainsFunc(events, func(e corev1.Event) bool { return e.Reason == "Failed" && e.InvolvedObject.FieldPath == fieldPath })
}

// ephemeralSummary is an ephemeral container's status in one line.
func ephemeralSummary(s *corev1.ContainerStatus) string {
	state := "waiting"
	switch {
	case s.State.Running != nil:
		state = "running"
	case s.State.Terminated != nil:
		state = fmt.Sprintf("terminated (exit %d)", s.State.Terminated.ExitCode)
	}
	return fmt.Sprintf("%s restartCount=%d id=%s", state, s.RestartCount, s.ContainerID)
}

// lifecycleSideEffects: an ephemeral container's life changes neither the
// pod's conditions nor its target.
func lifecycleSideEffects(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.NoSideEffects)
	pod := f.RunPod(ctx, targetPod(f))
	pod = f.WaitPod(ctx, pod.Name, "ready", func(p *corev1.Pod) bool { return conditionsSummary(p) == readySummary(p) })
	before, beforeTarget := conditionsSummary(pod), targetSummary(pod)
	// The target's process, read on the node (not only what the kubelet
	// reports): the same process, running, while the ephemeral container
	// lives.
	targetMarker := f.TargetMarker("target")
	nodeBefore, unavailable := f.NodeReport(ctx, pod, targetMarker)
	// The ephemeral container runs until the spec tells it to exit, so
	// the pod is checked while it runs and after it exited.
	// It targets the target container and carries the debug marker, as
	// kubectl debug --target does: the debugging that could disturb it.
	debugger := exitingDebugger(f, "debugger", "ps; while [ ! -e /tmp/exit ]; do sleep 0.2; done; exit 3")
	debugger.TargetContainerName = "target"
	debugger.Command = append(debugger.Command, f.DebugMarker("debugger"))
	running := f.RunEphemeral(ctx, pod.Name, debugger)
	Expect(conditionsSummary(running)).To(Equal(before), "pod phase or conditions changed while the ephemeral container runs")
	b := capability.Observe(capability.NoSideEffects)
	if unavailable == "" && len(nodeBefore.Found[targetMarker]) > 0 {
		was := nodeBefore.Found[targetMarker][0]
		nodeDuring, why := f.NodeReport(ctx, pod, targetMarker)
		Expect(why).To(BeEmpty(), "the node observer answered before the ephemeral container, not while it runs")
		now := nodeDuring.Found[targetMarker]
		b.Evidence("the target's process, read on the node %s: before %s, while debugged %v", kube.ObserverFrom, was, now)
		switch {
		case len(now) == 0:
			b.Problem("while debugged, the target's process is gone from the node")
		case now[0].PID != was.PID || now[0].StartTime != was.StartTime:
			b.Problem("while debugged, the target's process was replaced: %s, before %s", now[0], was)
		case now[0].Stopped():
			b.Problem("while debugged, the target's process is stopped: %s", now[0])
		}
		if len(now) > 0 {
			// Its whole landing record too: namespaces, credentials,
			// cgroups, oom_score_adj (oracle.Differences), as the CRI
			// layer compares it.
			for _, d := range oracle.Differences(was, now[0]) {
				b.Problem("while debugged: the target's process has %s", d)
			}
		}
	}
	_, stderr, err := f.Exec(ctx, pod.Name, "debugger", nil, false, "touch", "/tmp/exit")
	Expect(err).NotTo(HaveOccurred(), stderr)
	after := f.WaitPod(ctx, pod.Name, "showing the ephemeral container terminated", func(p *corev1.Pod) bool {
		s := kube.EphemeralStatus(p, "debugger")
		return s != nil && s.State.Terminated != nil
	})
	Expect(kube.EphemeralStatus(after, "debugger").State.Terminated.ExitCode).To(BeEquivalentTo(3))
	Expect(conditionsSummary(after)).To(Equal(before), "pod phase or conditions changed after the ephemeral container exited")
	if unavailable == "" && len(nodeBefore.Found[targetMarker]) > 0 {
		// After the ephemeral container exited (the kubelet never removes
		// it while the pod lives): the same process, with the same landing.
		was := nodeBefore.Found[targetMarker][0]
		nodeAfter, why := f.NodeReport(ctx, pod, targetMarker)
		Expect(why).To(BeEmpty(), "the node observer answered before the ephemeral container, not after it")
		now := nodeAfter.Found[targetMarker]
		b.Evidence("the target's process, read on the node after the ephemeral container exited: %v", now)
		switch {
		case len(now) == 0:
			b.Problem("after the ephemeral container exited, the target's process is gone from the node")
		case now[0].PID != was.PID || now[0].StartTime != was.StartTime:
			b.Problem("after the ephemeral container exited, the target's process was replaced: %s, before %s", now[0], was)
		default:
			for _, d := range oracle.Differences(was, now[0]) {
				b.Problem("after the ephemeral container exited: the target's process has %s", d)
			}
		}
	}
	b.Evidence("the target container: before %s; while the ephemeral container ran %s; after %s", beforeTarget, targetSummary(running), targetSummary(after))
	b.Check(targetSummary(running) == beforeTarget, "the target container was affected while the ephemeral container ran: %s, before %s", targetSummary(running), beforeTarget)
	b.Check(targetSummary(after) == beforeTarget, "the target container was affected: %s, before %s", targetSummary(after), beforeTarget)
	f.Checker.Record(b.Done("target unchanged before, during and after"))
}

// lifecyclePullAtDebugTime: the debug image is pulled when the ephemeral
// container starts.
func lifecyclePullAtDebugTime(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.PullAtDebugTime)
	// The image is pushed to the suite's registry: with an images file
	// naming every image and the registry on loopback, no node reaches it.
	if host, _, _ := net.SplitHostPort(f.Registry); !strings.HasPrefix(f.Images[images.Debug], f.Registry+"/") && (host == "localhost" || net.ParseIP(host).IsLoopback()) {
		Skip("the suite's registry is at " + f.Registry + ", which the nodes cannot reach, and the images file's images never needed it: give -registry-addr=<an address of this machine the nodes reach> (docs/cluster.md) to judge pulling at debug time")
	}
	pod := f.RunPod(ctx, targetPod(f))
	ref, err := images.Variant(ctx, f.Images[images.Debug], f.Registry, "pull-"+f.Token, f.Token)
	Expect(err).NotTo(HaveOccurred())
	ec := f.DebugContainer("debugger", "target")
	ec.Image = ref
	got := f.RunEphemeral(ctx, pod.Name, ec)
	b := capability.Observe(capability.PullAtDebugTime)
	s := kube.EphemeralStatus(got, "debugger")
	digest := ref[strings.Index(ref, "@")+1:]
	b.Evidence("pushed at debug time: %s; the ephemeral container's imageID: %s", ref, s.ImageID)
	b.Check(strings.Contains(s.ImageID, digest), "the ephemeral container does not run the image pushed at debug time (its imageID is %s)", s.ImageID)
	out, stderr, err := run(ctx, f, pod.Name, "debugger", nil, "cat", "/ectest-variant")
	b.Evidence("cat /ectest-variant: %q %q %v", out, stderr, err)
	b.Check(err == nil && strings.TrimSpace(out) == f.Token, "the ephemeral container's /ectest-variant holds %q, not the token of the image pushed at debug time", strings.TrimSpace(out))
	events, err := podEvents(ctx, f, pod.Name)
	if err != nil {
		f.Checker.Fail("list the pod's events: " + err.Error())
	}
	pulled := false
	for _, e := range events {
		pulled = pulled || (e.Reason == "Pulled" && strings.Contains(e.Message, ref) && !strings.Contains(e.Message, "already present"))
	}
	b.Check(pulled, "no Pulled event for %s: the kubelet did not pull it", ref)
	f.Checker.Record(b.Done("pulled at debug time"))
}

func appendOnce(list []string, s string) []string {
	if len(list) > 0 && list[len(list)-1] == s {
		return list
	}
	return append(list, s)
}

func conditionsSummary(p *corev1.Pod) string {
	s := "phase=" + string(p.Status.Phase)
	for _, c := range p.Status.Conditions {
		s += fmt.Sprintf(" %s=%s", c.Type, c.Status)
	}
	return s
}

func readySummary(p *corev1.Pod) string {
	s := "phase=Running"
	for _, c := range p.Status.Conditions {
		s += fmt.Sprintf(" %s=True", c.Type)
	}
	return s
}

func targetSummary(p *corev1.Pod) string {
	for _, c := range p.Status.ContainerStatuses {
		if c.Name == "target" && c.State.Running != nil {
			return fmt.Sprintf("restarts=%d started=%s id=%s", c.RestartCount, c.State.Running.StartedAt.UTC(), c.ContainerID)
		}
	}
	return "target not running"
}
