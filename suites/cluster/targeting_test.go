package cluster_test

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

// pidMode is one PID setup of a pod and its ephemeral container: the pod's
// shareProcessNamespace, the ephemeral container's target, the capability
// the kubelet's choice exercises at the CRI, and the view the ephemeral
// container must have.
type pidMode struct {
	text   string
	share  bool
	target string
	n      capability.Name
	want   cri.View
}

var pidModes = []pidMode{
	{"isolated namespaces, targeting a container: exactly the target's processes", false, "target", capability.PIDTarget, cri.ViewTarget},
	{"isolated namespaces, no target: only its own", false, "", capability.PIDContainer, cri.ViewOwn},
	{"shareProcessNamespace, no target: every process of the pod", true, "", capability.PIDPod, cri.ViewPod},
	{"shareProcessNamespace, targeting a container: still every process of the pod", true, "target", capability.PIDTargetPod, cri.ViewPod},
}

const pidViewText = "an ephemeral container sees the processes its pod's PID sharing and its target give it [CRI-2] [CRI-7]"

// hostPIDTargets are the targets of the hostPID spec's entries.
var hostPIDTargets = []struct{ text, target string }{{"no target", ""}, {"targeting a container", "target"}}

const hostPIDText = "with hostPID an ephemeral container sees the node's processes, whatever its target [CRI-7] [CRI-1]"

var _ = Describe("Targeting through the kubelet", framework.Label(framework.LabelCluster, framework.LabelPID, framework.LabelLinuxOnly), func() {
	var entries []TableEntry
	for _, m := range pidModes {
		entries = append(entries, Entry(m.text, m, SpecTimeout(framework.DefaultTimeouts.Spec)))
	}
	DescribeTable(pidViewText, func(ctx SpecContext, m pidMode) { pidView(ctx, onCluster, m) }, entries)

	// hostPID maps to PID NODE, and the kubelet sends TARGET only when the
	// effective mode is CONTAINER: with or without a target, an ephemeral
	// container of a hostPID pod is in the node's namespace, where the
	// kubelet itself runs.
	entries = nil
	for _, t := range hostPIDTargets {
		entries = append(entries, Entry(t.text, t.target, SpecTimeout(framework.DefaultTimeouts.Spec)))
	}
	DescribeTable(hostPIDText, func(ctx SpecContext, target string) { hostPIDView(ctx, onCluster, target) }, entries)

	It("shareProcessNamespace together with hostPID is rejected [CRI-7]", func(ctx SpecContext) {
		f := newFramework(ctx)
		share := true
		_, err := f.CreatePod(ctx, targetPod(f, func(p *corev1.Pod) {
			p.Spec.ShareProcessNamespace = &share
			p.Spec.HostPID = true
		}))
		Expect(kube.HasCause(err, "shareProcessNamespace", "")).To(BeTrue(), "want a field error on shareProcessNamespace, got %s", kube.Rejection(err))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// pidView: an ephemeral container of a pod with the mode's PID sharing and
// target is where the mode puts it, judged by the oracle from the node
// (nodePIDView), and sees what that namespace shows (ps inside).
func pidView(ctx SpecContext, at placement, mode pidMode) {
	share, target, n, want := mode.share, mode.target, mode.n, mode.want
	f := at.framework(ctx, n)
	pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) {
		p.Spec.ShareProcessNamespace = &share
		p.Spec.Containers = append(p.Spec.Containers, f.TargetContainer("sibling", 8081))
	}))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", target))
	procs, raw, err := f.Processes(ctx, pod.Name, "debugger")
	Expect(err).NotTo(HaveOccurred())
	m := cri.Markers{Self: f.DebugMarker("debugger"), Target: f.TargetMarker("target"), Siblings: []string{f.TargetMarker("sibling")}, Helpers: cri.DebugHelpers}
	if target == "" {
		m.Target, m.Siblings = "", []string{f.TargetMarker("target"), f.TargetMarker("sibling")}
	}
	inside := cri.Classify(procs, cri.Markers{Self: m.Self, Target: m.Target, Siblings: map[bool][]string{true: m.Siblings}[target != "" || share], Helpers: m.Helpers})
	if target == "" && !share {
		for _, p := range procs {
			if p.PID != 1 && (strings.Contains(p.Args, f.TargetMarker("target")) || strings.Contains(p.Args, f.TargetMarker("sibling"))) {
				inside = cri.ViewOther
			}
		}
	}
	view, why, from := nodePIDView(ctx, f, pod, m, inside)
	b := capability.Observe(n).Evidence("shareProcessNamespace=%v targetContainerName=%q; wanted %s\njudged %s: %s\nps in the ephemeral container:\n%s", share, target, want, from, why, raw)
	b.Check(view == want, "%s", view)
	b.Check(view != want || inside == want, "in the %s, but the processes it sees (ps) look like the %s", want, inside)
	f.Checker.Record(b.Done(string(view)))
}

// nodePIDView judges where the ephemeral container (m.Self) is: by the
// oracle, from the node observer's report (kube.NodeReport), where the
// pod's processes are visible there; else by inside, what ps in the
// container looks like, and from says which.
func nodePIDView(ctx SpecContext, f *kube.Framework, pod *corev1.Pod, m cri.Markers, inside cri.View) (view cri.View, why, from string) {
	markers := append([]string{m.Self}, m.Siblings...)
	if m.Target != "" {
		markers = append(markers, m.Target)
	}
	report, unavailable := f.NodeReport(ctx, pod, markers...)
	if unavailable == "" {
		subjects, missing := report.Subjects(m.Self, m.Target, m.Siblings...)
		if len(missing) == 0 {
			view, why = oracle.JudgePID(subjects)
			nodeText := "unknown: " + report.NoNode
			if report.Node != nil {
				nodeText = report.Node.How + ", " + report.Node.Namespaces[oracle.PID]
			}
			var procs []string
			for _, mk := range markers {
				for _, p := range report.Found[mk] {
					procs = append(procs, p.String())
				}
			}
			return view, fmt.Sprintf("%s\nthe node: %s\n%s", why, nodeText, strings.Join(procs, "\n")), kube.ObserverFrom
		}
		unavailable = fmt.Sprintf("the node observer sees no process of %v (a runtime with a kernel of its own hides them)", missing)
	}
	return inside, "the processes ps shows inside look like the " + string(inside), "from inside the ephemeral container: " + unavailable
}

// hostPIDView: an ephemeral container of a hostPID pod is in the node's
// PID namespace, the kubelet's (judged by the oracle from the node), where
// it sees the kubelet, whatever its target.
func hostPIDView(ctx SpecContext, at placement, target string) {
	f := at.privilegedFramework(ctx, capability.PIDNode)
	pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) { p.Spec.HostPID = true }))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", target))
	procs, raw, err := f.Processes(ctx, pod.Name, "debugger")
	Expect(err).NotTo(HaveOccurred())
	m := cri.Markers{Self: f.DebugMarker("debugger"), Target: f.TargetMarker("target"), Helpers: cri.DebugHelpers}
	inside := cri.Classify(procs, m)
	kubelet := false
	for _, p := range procs {
		kubelet = kubelet || strings.HasPrefix(p.Args, "kubelet ") || strings.Contains(p.Args, "/kubelet ")
	}
	view, why, from := nodePIDView(ctx, f, pod, m, inside)
	b := capability.Observe(capability.PIDNode).Case(fmt.Sprintf("targetContainerName=%q", target)).
		Evidence("hostPID=true targetContainerName=%q; kubelet visible inside: %v\njudged %s: %s\nps in the ephemeral container:\n%s", target, kubelet, from, why, raw)
	b.Check(view == cri.ViewNode, "%s", view)
	b.Check(kubelet, "the kubelet is not visible from the ephemeral container")
	f.Checker.Record(b.Done(string(view)))
}
