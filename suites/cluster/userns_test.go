package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ectest/ectest/fixtures/programs/targetinfo"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
)

// usernsMinKubelet is the first kubelet release whose user namespaces
// (KEP-127, feature gate UserNamespacesSupport) are on by default: beta
// and default-on from 1.33, GA in 1.36. An older kubelet runs a
// hostUsers: false pod only with the gate set by hand: not applicable.
const usernsMinKubelet = "1.33"

// identityMap is the uid_map of the node's own user namespace.
const identityMap = "0 0 4294967295"

// KEP-127 through a real kubelet: a hostUsers: false pod, whose every
// container the kubelet gives the pod's user namespace (NamespacesForPod
// sends the pod's UsernsOptions, ephemeral containers included). Users
// report that an ephemeral container with --target in such a pod gets
// "Permission denied" on /proc/<pid>/root (kubernetes/kubernetes#117159):
// the spec reproduces that and reports what the node does.
const usernsPodText = "ephemeral containers of a hostUsers: false pod, with and without targetContainerName, are in the pod's user namespace with its maps, not the node's, and the targeting one reads the target's files through /proc/<pid>/root [CRI-2] [CRI-6] [MinimumKubeletVersion:1.33]"

var usernsPodLabels = framework.Label(framework.LabelSecurity, framework.LabelLinuxOnly, framework.MinimumKubeletVersion(usernsMinKubelet), string(capability.UsernsPod), framework.LabelPID, framework.LabelFilesystem)

var _ = Describe("User namespaces through the kubelet", framework.Label(framework.LabelCluster), func() {
	It(usernsPodText, usernsPodLabels, func(ctx SpecContext) { usernsPod(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// usernsPod: see usernsPodText.
func usernsPod(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.UsernsPod)
	framework.SkipOnWindows(env.Runtime.OS)
	f.RequireKubelet(ctx, usernsMinKubelet, "user namespaces (hostUsers: false) are on by default")
	no := false
	created, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) { p.Spec.HostUsers = &no }))
	if err != nil {
		f.Checker.Record(capability.Observe(capability.UsernsPod).Outcome(capability.Refused, "the API server refused a hostUsers: false pod").Evidence("%s", kube.Rejection(err)).Done(""))
		return
	}
	pod, failed := runsOrFails(ctx, f, created.Name)
	if failed != "" {
		// The node could not run it: "not supported" when the profile
		// says so, nonconformant when it declares support.
		f.Checker.Record(capability.Observe(capability.UsernsPod).Outcome(capability.Refused, "the node did not run a hostUsers: false pod").Evidence("%s", failed).Done(""))
		return
	}
	f.RunEphemeral(ctx, pod.Name, f.DebugContainer("targeting", "target"))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("plain", ""))
	b := capability.Observe(capability.UsernsPod).Evidence("pod %s with hostUsers: false on node %s; ephemeral containers targeting (targetContainerName: target) and plain (none)", pod.Name, pod.Spec.NodeName)
	debuggers := []string{"targeting", "plain"}
	markers := []string{f.TargetMarker("target"), f.DebugMarker("targeting"), f.DebugMarker("plain")}
	report, unavailable := f.NodeReport(ctx, pod, markers...)
	seen := unavailable == ""
	for _, m := range markers {
		seen = seen && len(report.Found[m]) > 0
	}
	if seen {
		t := report.Found[markers[0]][0]
		b.Evidence("judged %s; the node's user namespace %s (%s)\ntarget %s: %s", kube.ObserverFrom, report.Node.Namespaces[oracle.User], report.Node.How, t, t.UserNS())
		b.Check(t.UIDMap != identityMap && t.UIDMap != "", "the target's uid_map is %q: it runs in the node's user namespace", t.UIDMap)
		b.Check(t.Namespaces[oracle.User] != report.Node.Namespaces[oracle.User], "the target is in the node's user namespace %s", t.Namespaces[oracle.User])
		for i, name := range debuggers {
			d := report.Found[markers[i+1]][0]
			b.Evidence("%s %s: %s", name, d, d.UserNS())
			b.Check(oracle.Same(oracle.User, d, t), "the %s ephemeral container's user namespace %s is not the pod's (the target's) %s", name, d.Namespaces[oracle.User], t.Namespaces[oracle.User])
			b.Check(d.UIDMap == t.UIDMap && d.GIDMap == t.GIDMap, "the %s ephemeral container's maps (uid %q, gid %q) are not the pod's (uid %q, gid %q)", name, d.UIDMap, d.GIDMap, t.UIDMap, t.GIDMap)
		}
	} else {
		// The node's /proc is out of reach (see NodeReport): the
		// inside view decides, and the evidence says so.
		b.Evidence("from inside the containers: %s", unavailable)
		out, stderr, err := run(ctx, f, pod.Name, "plain", nil, "wget", "-qO-", "http://localhost:8080/info")
		var info targetinfo.Info
		if err != nil || json.Unmarshal([]byte(out), &info) != nil {
			b.Problem("the target's /info did not answer the ephemeral container: %v %q %q", err, out, stderr)
		} else {
			tmap := oracle.NormalizeMap(info.UIDMap)
			b.Evidence("the target's /info: user namespace %s, uid_map %q", info.Namespaces["user"], tmap)
			b.Check(tmap != identityMap && tmap != "", "the target's uid_map is %q: it runs in the node's user namespace", tmap)
			for _, name := range debuggers {
				link, _, lerr := run(ctx, f, pod.Name, name, nil, "readlink", "/proc/self/ns/user")
				m, _, merr := run(ctx, f, pod.Name, name, nil, "cat", "/proc/self/uid_map")
				link, m = strings.TrimSpace(link), oracle.NormalizeMap(m)
				b.Evidence("%s: /proc/self/ns/user %s (%v), uid_map %q (%v)", name, link, lerr, m, merr)
				b.Check(lerr == nil && link == info.Namespaces["user"], "the %s ephemeral container's user namespace %s is not the target's %s", name, link, info.Namespaces["user"])
				b.Check(merr == nil && m == tmap, "the %s ephemeral container's uid_map %q is not the target's %q", name, m, tmap)
			}
		}
	}
	// CRI-6 in a user-namespace pod (kubernetes/kubernetes#117159).
	procs, raw := processes(ctx, f, pod.Name, "targeting")
	if pid := kube.PIDOf(procs, f.TargetMarker("target")); pid == 0 {
		b.Problem("the target's process is not visible from the targeting ephemeral container").Evidence("ps in it:\n%s", raw)
	} else {
		path := fmt.Sprintf("/proc/%d/root/ectest/marker", pid)
		marker, stderr, err := run(ctx, f, pod.Name, "targeting", nil, "cat", path)
		b.Evidence("the target is PID %d in the targeting ephemeral container; cat %s: %q %q %v", pid, path, marker, stderr, err)
		if err != nil {
			b.Problem("cannot read the target's files through %s as the same user of the same user namespace (kubernetes/kubernetes#117159): %s", path, strings.TrimSpace(stderr))
		} else {
			b.Check(strings.TrimSpace(marker) == f.Token+"-target", "read %q from %s, want %q", strings.TrimSpace(marker), path, f.Token+"-target")
		}
	}
	f.Checker.Record(b.Done("the pod's user namespace and maps in both ephemeral containers; the target's files read through /proc/<pid>/root"))
}

// runsOrFails waits until the pod runs, or until the node says it cannot
// run it: a container waiting for a reason other than creation or getting
// its image, or a sandbox or container that failed otherwise (an event of
// the pod). failed says what the node said.
func runsOrFails(ctx context.Context, f *kube.Framework, name string) (pod *corev1.Pod, failed string) {
	GinkgoHelper()
	// An image that cannot be had is no node refusing the pod: pull
	// failures are waited out (a registry the node cannot reach is the
	// suite's environment, a run error of PollPod's).
	pod, err := f.PollPod(ctx, name, "running or failed", func(ctx context.Context, p *corev1.Pod) bool {
		if p.Status.Phase == corev1.PodRunning {
			return true
		}
		for _, s := range p.Status.ContainerStatuses {
			if w := s.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" && !kube.PullFailure(w.Reason) {
				failed = fmt.Sprintf("container %s waiting: %s: %s", s.Name, w.Reason, w.Message)
				return true
			}
		}
		events, err := podEvents(ctx, f, name)
		if err == nil {
			for _, e := range events {
				if e.Reason == "FailedCreatePodSandBox" || (e.Reason == "Failed" && !kube.PullFailure(e.Message)) {
					failed = fmt.Sprintf("event %s: %s", e.Reason, e.Message)
					return true
				}
			}
		}
		return false
	})
	if err != nil && failed == "" {
		f.Checker.Fail(fmt.Sprintf("pod %s neither ran nor failed: %v", name, err))
	}
	return pod, failed
}
