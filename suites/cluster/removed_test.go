package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// LIFE-2 when the runtime loses an ephemeral container behind the kubelet's
// back (kubernetes/kubernetes#124176): a node agent, an operator with
// crictl or a runtime that lost its state removes a running ephemeral
// container; it must not come back. The kubelet of v1.37.1 starts any
// ephemeral container of the pod spec that the runtime has no record of
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions:
// FindContainerStatusByName == nil), and the removal of a running
// container is a ContainerDied event (pkg/kubelet/pleg/generic.go
// generateEvents), which syncs the pod within a relist; the fix proposed
// upstream (kubernetes/kubernetes#124177) was closed unmerged.
const lifecycleRemovedText = "an ephemeral container removed from the runtime behind the kubelet's back is not started again [LIFE-2]"

var _ = Describe("Ephemeral container lifecycle: a container lost behind the kubelet's back", framework.Label(framework.LabelCluster, framework.LabelLifecycle, framework.LabelLinuxOnly, string(capability.RemovedStaysGone)), func() {
	It(lifecycleRemovedText, func(ctx SpecContext) { lifecycleRemovedStaysGone(ctx, onCluster) },
		SpecTimeout(framework.DefaultTimeouts.Spec+framework.RemovedNeverStartedWindow))
})

// lifecycleRemovedStaysGone removes a running ephemeral container with the
// node's crictl (from the node observer, in the node's namespaces) and
// watches, from outside, for it to run again: a process carrying its
// marker on the node (the node's /proc, read by the node observer), or a
// status naming another container.
func lifecycleRemovedStaysGone(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.RemovedStaysGone)
	framework.SkipOnWindows(env.Runtime.OS)
	// The suite's own steps failing is no verdict on the node.
	ownFailure := func(format string, args ...any) {
		GinkgoHelper()
		Fail(capability.EnvironmentErrorPrefix + fmt.Sprintf(format, args...))
	}
	pod := f.RunPod(ctx, targetPod(f))
	marker := f.DebugMarker("debugger")
	running := f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", "")) // one process, carrying the marker
	id := kube.EphemeralStatus(running, "debugger").ContainerID
	before, unavailable := f.NodeReport(ctx, running, marker)
	if unavailable != "" {
		Skip("not judged: the ephemeral container's process cannot be seen from the node: " + unavailable)
	}
	if len(before.Found[marker]) == 0 {
		ownFailure("the running ephemeral container %s has no process carrying %s on the node", id, marker)
	}
	first := before.Found[marker][0]
	_, bare, _ := strings.Cut(id, "://")
	out, unavailable, err := f.NodeCommand(ctx, running, "crictl", "rm", "-f", bare)
	if unavailable != "" {
		Skip("not judged: the container cannot be removed behind the kubelet's back: " + unavailable)
	}
	if err != nil {
		ownFailure("removing %s on the node: %v", id, err)
	}
	b := capability.Observe(capability.RemovedStaysGone).
		Evidence("ephemeral container debugger %s (process %d on node %s) removed with crictl rm -f (it answered %q)", id, first.PID, running.Spec.NodeName, strings.Join(strings.Fields(out), " "))

	// From the removal on, watched for the window in which a kubelet that
	// starts it again shows it (framework.RemovedNeverStartedWindow), from
	// the node: first the removed process must end (else the removal did
	// not happen, and nothing is judged), then a process carrying the
	// marker is a new start; so is one with another PID before the old one
	// was seen gone (a kubelet quicker than the first look), and a status
	// naming another container. A poll that could not look counts for
	// nothing, and a window with no look at all is no verdict. The watch
	// ends early when it is seen again; the window running out is the
	// clean end.
	looks, last, since, ended := 0, "", time.Now(), false
	var again []string
	_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll*20, framework.RemovedNeverStartedWindow, true, func(ctx context.Context) (bool, error) {
		if r, why := f.NodeReport(ctx, running, marker); why == "" {
			looks++
			for _, p := range r.Found[marker] {
				if ended || p.PID != first.PID {
					again = append(again, fmt.Sprintf("process %d (%s) carrying its marker", p.PID, p.Args))
				}
			}
			ended = ended || len(r.Found[marker]) == 0
		}
		if p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
			s := kube.EphemeralStatus(p, "debugger")
			last = statusLine(s)
			if s != nil && s.ContainerID != "" && s.ContainerID != id {
				again = append(again, "its status names another container: "+last)
			}
		}
		return len(again) > 0, nil
	})
	if ctx.Err() != nil {
		ownFailure("the spec ended while watching: %v", ctx.Err())
	}
	switch {
	case looks == 0:
		ownFailure("the node observer never answered in the %s after the removal: nothing judged", framework.RemovedNeverStartedWindow)
	case len(again) == 0 && !ended:
		ownFailure("the process %d of %s still ran on the node %s after crictl rm -f: the removal did not happen, nothing judged", first.PID, id, framework.RemovedNeverStartedWindow)
	}
	watched := fmt.Sprintf("watched the whole window of %s", framework.RemovedNeverStartedWindow)
	if len(again) > 0 {
		watched = fmt.Sprintf("seen again %s after the removal (window %s)", time.Since(since).Round(time.Second), framework.RemovedNeverStartedWindow)
	}
	b.Evidence("%s, %d looks at the node's /proc; the ephemeral container's status at the end: %s", watched, looks, last)
	b.Check(len(again) == 0, "it was started again after its removal: %s", strings.Join(again, "; "))
	f.Checker.Record(b.Done("not started again"))
}

// statusLine renders a container status for the evidence.
func statusLine(s *corev1.ContainerStatus) string {
	switch {
	case s == nil:
		return "no status"
	case s.State.Running != nil:
		return fmt.Sprintf("running, %s, restarts %d", s.ContainerID, s.RestartCount)
	case s.State.Terminated != nil:
		return fmt.Sprintf("terminated (%s, exit %d), %s, restarts %d", s.State.Terminated.Reason, s.State.Terminated.ExitCode, s.ContainerID, s.RestartCount)
	case s.State.Waiting != nil:
		return fmt.Sprintf("waiting (%s: %s), %s, restarts %d", s.State.Waiting.Reason, s.State.Waiting.Message, s.ContainerID, s.RestartCount)
	}
	return "unknown state"
}
