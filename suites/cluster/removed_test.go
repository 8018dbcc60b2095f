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
)

// LIFE-2 when the runtime loses an ephemeral container behind the kubelet's
// back (kubernetes/kubernetes#124176): a node agent, an operator with
// crictl or a runtime that lost its state removes a running ephemeral
// container; it must not come back. The kubelet of v1.37.1 starts any
// ephemeral container of the pod spec that the runtime has no record of
// (pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions:
// FindContainerStatusByName == nil); the fix proposed upstream
// (kubernetes/kubernetes#124177) was closed unmerged.
const lifecycleRemovedText = "an ephemeral container removed from the runtime behind the kubelet's back is not started again [LIFE-2]"

var _ = Describe("Ephemeral container lifecycle: a container lost behind the kubelet's back", framework.Label(framework.LabelCluster, framework.LabelLifecycle, framework.LabelLinuxOnly, string(capability.RemovedStaysGone)), func() {
	It(lifecycleRemovedText, func(ctx SpecContext) { lifecycleRemovedStaysGone(ctx, onCluster) },
		SpecTimeout(framework.DefaultTimeouts.Spec))
})

// lifecycleRemovedStaysGone removes a running ephemeral container with the
// node's crictl (from the node observer, in the node's namespaces) and
// judges at the kubelet's syncs of the pod after the removal, as
// lifecycleNeverRestarted does after an exit: no window of silence decides.
// The removal is not sure to sync the pod (a relist that sees the
// container exited syncs it with its record still there; the one that then
// sees it gone is no event that syncs), so two more ephemeral containers
// (sentinels) are added one after the other, each waited for until it
// runs on the node. The kubelet's pod worker syncs the second with a runtime state
// listed after the first's sync ended (pod_workers.go: the pod cache newer
// than the last sync), so after the removal; computePodActions decides
// every container of the pod in one pass and SyncPod starts ephemeral
// containers in spec order, so a kubelet that starts a removed one again
// starts it in that sync at the latest, before the second sentinel. What
// decides is seen from outside the kubelet, once the second sentinel runs:
// a process carrying the debugger's marker on the node (the node's /proc,
// read by the node observer) other than the removed one, or the removed
// one still running (no removal: nothing judged); the debugger's status
// naming another container is evidence too.
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
	removed := time.Now()
	out, unavailable, err := f.NodeCommand(ctx, running, "crictl", "rm", "-f", bare)
	if unavailable != "" {
		Skip("not judged: the container cannot be removed behind the kubelet's back: " + unavailable)
	}
	if err != nil {
		ownFailure("removing %s on the node: %v", id, err)
	}
	b := capability.Observe(capability.RemovedStaysGone).
		Evidence("ephemeral container debugger %s (process %d on node %s) removed with crictl rm -f (it answered %q)", id, first.PID, running.Spec.NodeName, strings.Join(strings.Fields(out), " "))

	// Each sentinel is waited for on the node (its process, read from
	// outside the kubelet), not in the pod's status: a kubelet that starts
	// the removed container again after its exit was reported has every
	// status update of the pod refused from then on (the API server lets
	// no terminated ephemeral container's status go back to running; seen
	// in make soak, the sentinels' "running" never reached the status).
	sentinel := func(name string) {
		GinkgoHelper()
		if _, err := f.AddEphemeral(ctx, f.Client, pod.Name, f.DebugContainer(name, "")); err != nil {
			ownFailure("add ephemeral container %s to pod %s: %s", name, pod.Name, kube.Rejection(err))
		}
		m := f.DebugMarker(name)
		why := "the node observer found no process carrying " + m
		last, err := f.PollPod(ctx, pod.Name, name+"'s process running on the node", func(ctx context.Context, _ *corev1.Pod) bool {
			// (Each answer of the observer is an exec, bounded by
			// Timeouts.Exec: a hung one does not hold the wait.)
			r, unavailable := f.NodeReport(ctx, running, m)
			if unavailable != "" {
				why = unavailable
				return false
			}
			return len(r.Found[m]) > 0
		})
		if err != nil {
			status := "no pod read"
			if last != nil {
				status = statusLine(kube.EphemeralStatus(last, name))
			}
			ownFailure("the ephemeral container %s was not seen running on the node (%v; %s); its status: %s; nothing judged", name, err, why, status)
		}
	}
	sentinel("sentinel-1")
	sentinel("sentinel-2")
	after, unavailable := f.NodeReport(ctx, running, marker)
	if unavailable != "" {
		ownFailure("the node observer did not answer once the sentinels ran: %s; nothing judged", unavailable)
	}
	// What the pod's status says is evidence, read once the verdict's
	// observation is made: it may lag behind the node for a moment, so it is
	// given that long to show sentinel-2 running (Timeouts.ContainerReady);
	// a status that never does has stopped moving.
	bounded, cancel := context.WithTimeout(ctx, f.Timeouts.ContainerReady)
	synced, lagging := f.PollPod(bounded, pod.Name, "showing sentinel-2 running", func(_ context.Context, p *corev1.Pod) bool {
		s := kube.EphemeralStatus(p, "sentinel-2")
		return s != nil && s.State.Running != nil
	})
	cancel()
	if synced == nil {
		ownFailure("reading pod %s: %v", pod.Name, lagging)
	}
	var again []string
	for _, p := range after.Found[marker] {
		if p.PID == first.PID && p.StartTime == first.StartTime {
			ownFailure("the process %d of %s still runs on the node after crictl rm -f and two syncs of the pod: the removal did not happen, nothing judged", first.PID, id)
		}
		again = append(again, fmt.Sprintf("process %d (%s) carrying its marker", p.PID, p.Args))
	}
	now := kube.EphemeralStatus(synced, "debugger")
	if now != nil && now.ContainerID != "" && now.ContainerID != id {
		again = append(again, "its status names another container: "+statusLine(now))
	}
	b.Evidence("judged %s after the removal, once two ephemeral containers added after it ran on the node (the second started by a sync of the pod that saw the runtime after the removal; a kubelet starting the removed one again starts it in that sync at the latest); the node's /proc then showed %d processes carrying its marker; its status: %s",
		time.Since(removed).Round(time.Second), len(after.Found[marker]), statusLine(now))
	if lagging != nil {
		b.Evidence("sentinel-2's process ran on the node, but the pod's status did not show it running within %s (it shows %s): the pod's status stopped moving, as it does when the API server refuses the kubelet's updates that take a terminated ephemeral container back to running",
			f.Timeouts.ContainerReady, statusLine(kube.EphemeralStatus(synced, "sentinel-2")))
	}
	b.Check(len(again) == 0, "it was started again after its removal: %s", strings.Join(again, "; "))
	f.Checker.Record(b.Done("not started again through the kubelet's syncs of the pod after the removal"))
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
