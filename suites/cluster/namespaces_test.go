package cluster_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/fixtures/programs/targetinfo"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The namespaces a kubelet gives an ephemeral container besides PID: the
// same capabilities the CRI suite observes on the runtime alone, observed
// here through a real kubelet and recorded in the matrix's cluster column.
const (
	netPodText     = "an ephemeral container shares the pod's network: the target's port on localhost, the pod IP and the pod's hostname [CRI-5]"
	ipcPodText     = "an ephemeral container shares the pod's IPC objects, System V and POSIX (/dev/shm), and another pod's container shares neither [CRI-5]"
	procRootFSText = "an ephemeral container targeting a container reads its files through /proc/<pid>/root [CRI-6]"
)

// The labels of those specs.
var (
	netPodLabels     = framework.Label(string(capability.NetPod), framework.LabelNetwork, framework.LabelNetworkOnly)
	ipcPodLabels     = framework.Label(string(capability.IPCPod), framework.LabelIPC, framework.LabelLinuxOnly)
	procRootFSLabels = framework.Label(string(capability.ProcRootFS), framework.LabelFilesystem, framework.LabelLinuxOnly)
)

var _ = Describe("Network, IPC and filesystem through the kubelet", framework.Label(framework.LabelCluster), func() {
	It(netPodText, netPodLabels, func(ctx SpecContext) { netPod(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(ipcPodText, ipcPodLabels, func(ctx SpecContext) { ipcPod(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
	It(procRootFSText, procRootFSLabels, func(ctx SpecContext) { procRootFS(ctx, onCluster) }, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// netPod: the ephemeral container is in the pod's network namespace.
func netPod(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.NetPod)
	framework.SkipOnWindows(env.Runtime.OS)
	pod := f.RunPod(ctx, targetPod(f))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", ""))
	// The oracle first: the two containers' processes, read on the node.
	// The hostname is the UTS namespace's: the pod's, not one of the
	// container's own that merely carries the pod's name.
	apart := apartOnNodeIn(ctx, f, pod, f.DebugMarker("debugger"), f.TargetMarker("target"), oracle.Net, oracle.UTS)
	b := capability.Observe(capability.NetPod)
	if e := apart[oracle.Net]; e != "" {
		b.Problem("the ephemeral container's network namespace is not the target's (from the node)").Evidence("%s", e)
	}
	if e := apart[oracle.UTS]; e != "" {
		b.Problem("the ephemeral container's UTS namespace (its hostname) is not the target's (from the node)").Evidence("%s", e)
	}
	out, stderr, err := run(ctx, f, pod.Name, "debugger", nil, "wget", "-qO-", "http://localhost:8080/info")
	b.Evidence("GET localhost:8080/info from the ephemeral container: %q %q %v", out, stderr, err)
	var info targetinfo.Info
	answered := false
	switch {
	case err != nil:
		b.Problem("the target's port 8080 is not reachable on localhost from the ephemeral container: %v", err)
	case json.Unmarshal([]byte(out), &info) != nil:
		b.Problem("localhost:8080 answered %q, not the target's /info", out)
	default:
		answered = true
		b.Check(info.Token == f.Token+"-target", "localhost:8080 answered for another process (token %q)", info.Token)
	}
	hostname, _, err := run(ctx, f, pod.Name, "debugger", nil, "hostname")
	hostname = strings.TrimSpace(hostname)
	addrs, _, aerr := run(ctx, f, pod.Name, "debugger", nil, "ip", "-o", "addr", "show")
	b.Evidence("hostname: %q %v\nip -o addr show: %v\n%s", hostname, err, aerr, addrs)
	if answered {
		b.Check(hostname == info.Hostname, "the ephemeral container's hostname %q differs from the target's %q", hostname, info.Hostname)
	}
	b.Check(hostname == pod.Name, "the ephemeral container's hostname %q is not the pod's name (hostname exit: %v)", hostname, err)
	b.Check(pod.Status.PodIP != "", "the pod has no IP in its status")
	b.Check(aerr == nil && strings.Contains(addrs, " "+pod.Status.PodIP+"/"), "the pod IP %s is not on the ephemeral container's interfaces", pod.Status.PodIP)
	if answered && pod.Status.PodIP != "" {
		b.Check(slices.ContainsFunc(info.Addresses, func(a string) bool { return strings.HasPrefix(a, pod.Status.PodIP+"/") }),
			"the pod IP %s is not on the target's interfaces %v", pod.Status.PodIP, info.Addresses)
	}
	f.Checker.Record(b.Done("shared network namespace"))
}

// ipcPod: the ephemeral container is in the pod's IPC namespace, and a
// container of another pod is not. The segment is looked up by key with the
// helper (shmget), not in /proc/sysvipc/shm, which a sandboxed kernel
// (gVisor) may not provide; the other pod is the negative control against
// a node that puts every pod in one IPC namespace (the host's).
func ipcPod(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.IPCPod)
	if !images.Built(env.Images[images.Debug], images.Debug, env.Registry) {
		Skip(fmt.Sprintf("the debug image %s is not the suite's own, so it has no %s to look up SysV shared memory with", env.Images[images.Debug], helper.Path))
	}
	key, err := helper.KeyFor(f.Token, 0x3c7f0000)
	Expect(err).NotTo(HaveOccurred())
	posix := "ectest-" + f.Token
	pod := f.RunPod(ctx, targetPod(f, func(p *corev1.Pod) {
		p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, fmt.Sprintf("--shm-key=%d", key), "--posix-shm="+posix)
	}))
	pod = f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", ""))
	// Under a node that puts pods in the host's IPC namespace the segment
	// would outlive the pod there.
	DeferCleanup(func(ctx SpecContext) {
		_, _, _ = f.Exec(ctx, pod.Name, "debugger", nil, false, helper.Path, helper.ModeShmRemove, strconv.Itoa(key))
	}, NodeTimeout(f.Timeouts.Cleanup))
	outsider := f.RunPod(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "outsider"},
		// On the target's node: IPC namespaces are a node's.
		Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName, Containers: []corev1.Container{{
			Name: "outsider", Image: env.Images[images.Debug],
			Command: []string{"sh", "-c", "sleep 86400 & wait", f.DebugMarker("outsider")},
		}}},
	})
	find := func(podName, container string) (helper.Result, string) {
		GinkgoHelper()
		out, stderr, err := run(ctx, f, podName, container, nil, helper.Path, helper.ModeShmFind, strconv.Itoa(key))
		// The helper exits 1 when the kernel refuses (ENOENT): its answer
		// is on stdout either way. An answer it cannot give is the
		// suite's own tool failing.
		r, perr := helper.ParseResult(out)
		if perr != nil {
			f.Checker.Fail(fmt.Sprintf("%s in %s/%s: %v (%v)\n%s%s", helper.ModeShmFind, podName, container, perr, err, out, stderr))
		}
		return r, strings.TrimSpace(out)
	}
	apart := apartOnNode(ctx, f, pod, oracle.IPC, f.DebugMarker("debugger"), f.TargetMarker("target"))
	cat := func(podName, container string) (string, error) {
		GinkgoHelper()
		out, _, err := run(ctx, f, podName, container, nil, "cat", "/dev/shm/"+posix)
		return out, err
	}
	b := capability.Observe(capability.IPCPod)
	if apart != "" {
		b.Problem("the ephemeral container's IPC namespace is not the target's (from the node)").Evidence("%s", apart)
	}
	inside, insideOut := find(pod.Name, "debugger")
	outside, outsideOut := find(outsider.Name, "outsider")
	insidePosix, insideErr := cat(pod.Name, "debugger")
	outsidePosix, outsideErr := cat(outsider.Name, "outsider")
	b.Evidence("the target made SysV shm key %d and /dev/shm/%s, both holding %q\nin the ephemeral container: %s; /dev/shm/%s: %q %v\nin a container of another pod: %s; /dev/shm/%s: %q %v",
		key, posix, f.Token+"-target", insideOut, posix, insidePosix, insideErr, outsideOut, posix, outsidePosix, outsideErr)
	b.Check(insideErr == nil && insidePosix == f.Token+"-target", "the ephemeral container does not find the target's POSIX shared memory /dev/shm/%s: %q %v", posix, insidePosix, insideErr)
	b.Check(outsideErr != nil, "a container of another pod finds /dev/shm/%s: pods share one /dev/shm", posix)
	b.Check(inside.OK() && inside.Content == f.Token+"-target", "the ephemeral container does not find the target's SysV segment (key %d): %s", key, insideOut)
	b.Check(outside.Result == "ENOENT", "a container of another pod finds the segment (key %d): pods share one IPC namespace: %s", key, outsideOut)
	f.Checker.Record(b.Done("shared IPC namespace: the target's SysV segment and POSIX shared memory found, neither from another pod"))
}

// apartOnNode says, with the evidence, that the processes carrying markers
// a and b are in different namespaces of kind k, as the node observer
// reads them ("" when they share it, or when the observer cannot tell:
// then the checks inside the containers decide, as before).
func apartOnNode(ctx SpecContext, f *kube.Framework, pod *corev1.Pod, k oracle.Kind, a, b string) string {
	return apartOnNodeIn(ctx, f, pod, a, b, k)[k]
}

// apartOnNodeIn is apartOnNode for several kinds from one reading of the
// node: the evidence by kind, for the kinds a and b do not share.
func apartOnNodeIn(ctx SpecContext, f *kube.Framework, pod *corev1.Pod, a, b string, kinds ...oracle.Kind) map[oracle.Kind]string {
	out := map[oracle.Kind]string{}
	report, unavailable := f.NodeReport(ctx, pod, a, b)
	if unavailable != "" || len(report.Found[a]) == 0 || len(report.Found[b]) == 0 {
		return out
	}
	pa, pb := report.Found[a][0], report.Found[b][0]
	for _, k := range kinds {
		if !oracle.Same(k, pa, pb) {
			out[k] = fmt.Sprintf("judged %s:\n%s\n%s", kube.ObserverFrom, pa, pb)
		}
	}
	return out
}

// procRootFS: a targeting ephemeral container reads the target's files
// through /proc/<pid>/root.
func procRootFS(ctx SpecContext, at placement) {
	f := at.framework(ctx, capability.ProcRootFS)
	pod := f.RunPod(ctx, targetPod(f))
	f.RunEphemeral(ctx, pod.Name, f.DebugContainer("debugger", "target"))
	b := capability.Observe(capability.ProcRootFS)
	procs, raw := processes(ctx, f, pod.Name, "debugger")
	pid := kube.PIDOf(procs, f.TargetMarker("target"))
	if pid == 0 {
		f.Checker.Record(b.Problem("the target's process is not visible").Evidence("ps in the ephemeral container:\n%s", raw).Done(""))
		return
	}
	path := fmt.Sprintf("/proc/%d/root/ectest/marker", pid)
	marker, stderr, err := run(ctx, f, pod.Name, "debugger", nil, "cat", path)
	b.Evidence("the target is PID %d in the ephemeral container; cat %s: %q %q %v", pid, path, marker, stderr, err)
	switch {
	case err != nil:
		b.Problem("cannot read %s: %s", path, strings.TrimSpace(stderr))
	default:
		b.Check(strings.TrimSpace(marker) == f.Token+"-target", "read %q from %s, want %q", strings.TrimSpace(marker), path, f.Token+"-target")
	}
	f.Checker.Record(b.Done("target's marker file read"))
}
