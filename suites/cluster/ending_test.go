package cluster_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/oracle"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// An ephemeral container ends when its command ends (KEP: Killing
// Ephemeral Containers); through the API it cannot be stopped alone. One
// that targets a container shares that container's PID namespace, so the
// kernel ends nothing with its first process: the runtime must end the
// rest, its command's children and its exec sessions, judged with live
// sessions in place and from the node's /proc.
var _ = Describe("An ephemeral container's end, read on the node", framework.Label(framework.LabelCluster, framework.LabelLifecycle, framework.LabelPID, framework.LabelLinuxOnly), func() {
	It("an ephemeral container targeting a container whose command ends takes its command's child and its exec sessions without and with a TTY with it [CRI-2] [LIFE-4]", framework.Label(string(capability.PIDTarget)), func(ctx SpecContext) {
		f := newFramework(ctx, capability.PIDTarget)
		framework.SkipOnWindows(env.Runtime.OS)
		pod := f.RunPod(ctx, targetPod(f))
		marker := f.DebugMarker("debugger")
		ec := f.DebugContainer("debugger", "target")
		// Its command keeps a child (carrying marker-child) and ends when
		// the spec touches /tmp/ectest-end (the container's own loop).
		ec.Command = []string{"sh", "-c", `sh -c "sleep 86400 & wait" "$0-child" & while [ ! -e /tmp/ectest-end ]; do sleep 1; done`, marker}
		pod = f.RunEphemeral(ctx, pod.Name, ec)
		b := capability.Observe(capability.PIDTarget).Case("an ephemeral container whose command ends")
		carriers := map[string]string{marker: "the ephemeral container's own process", marker + "-child": "its command's child"}

		// A live session of each kind, each with a child, held open.
		sessionCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		var mu sync.Mutex
		ended := map[kube.SessionKind]string{}
		for _, kind := range kube.SessionKinds {
			sm := fmt.Sprintf("ectest-session-%s-%s", f.Token, strings.ReplaceAll(string(kind), " ", "-"))
			carriers[sm], carriers[sm+"-child"] = "the "+string(kind)+" session", "the "+string(kind)+" session's child"
			stdin, typing := io.Pipe()
			defer func() { _ = typing.Close() }()
			go func() {
				defer GinkgoRecover()
				_, stderr, err := f.Exec(sessionCtx, pod.Name, "debugger", stdin, kind == kube.ExecTTYSession, "sh", "-c", `sh -c "sleep 86400 & wait" "$0-child" & wait`, sm)
				mu.Lock()
				ended[kind] = fmt.Sprintf("%v %s", err, strings.TrimSpace(stderr))
				mu.Unlock()
			}()
		}
		markers := make([]string, 0, len(carriers))
		for m := range carriers {
			markers = append(markers, m)
		}
		var report oracle.Report
		var unavailable string
		err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
			report, unavailable = f.NodeReport(ctx, pod, markers...)
			if unavailable != "" {
				return true, nil
			}
			for _, m := range markers {
				if len(live(report.Found[m])) == 0 {
					return false, nil
				}
			}
			return true, nil
		})
		if unavailable != "" {
			Skip("whether an ephemeral container's processes ended is the node's to tell, and the node cannot: " + unavailable)
		}
		if err != nil {
			var missing []string
			for _, m := range markers {
				if len(live(report.Found[m])) == 0 {
					missing = append(missing, carriers[m]+" ("+m+")")
				}
			}
			mu.Lock()
			why := fmt.Sprintf("not all seen on the node within %s: %s; sessions ended: %v", f.Timeouts.ContainerReady, strings.Join(missing, ", "), ended)
			mu.Unlock()
			blockOnWayIn(f, []string{"exec: " + why})
			f.Checker.Record(b.Done(""))
			return
		}
		for _, m := range markers {
			for _, p := range live(report.Found[m]) {
				b.Evidence("before: %s: PID %d (%d inside) %q", carriers[m], p.PID, p.InnerPID(), p.Args)
			}
		}

		// The command ends.
		if _, stderr, err := f.Exec(ctx, pod.Name, "debugger", nil, false, "touch", "/tmp/ectest-end"); err != nil {
			f.Checker.Fail(fmt.Sprintf("touch /tmp/ectest-end in the ephemeral container: %v %s", err, stderr))
		}
		var status *corev1.ContainerStatus
		if err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerExit, true, func(ctx context.Context) (bool, error) {
			p, err := f.Client.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			status = kube.EphemeralStatus(p, "debugger")
			return status != nil && status.State.Terminated != nil, nil
		}); err != nil {
			b.Problem("its command ended, but the ephemeral container is not reported terminated within %s: %s", f.Timeouts.ContainerExit, statusLine(status))
		} else {
			b.Evidence("after its command ended: the ephemeral container is terminated, exit code %d, reason %q", status.State.Terminated.ExitCode, status.State.Terminated.Reason)
		}

		// Nothing it ran may live on in the target's namespace.
		leftIn := func(r oracle.Report) (left []string) {
			for _, m := range markers {
				for _, p := range live(r.Found[m]) {
					left = append(left, fmt.Sprintf("PID %d (%d inside) %q, %s, state %q", p.PID, p.InnerPID(), p.Args, carriers[m], p.State))
				}
			}
			return left
		}
		// Polled until nothing is left or ContainerExit has passed; then
		// read once more with the spec's own context (a read the poll's
		// deadline cut short decides nothing).
		_ = wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerExit, true, func(ctx context.Context) (bool, error) {
			r, why := f.NodeReport(ctx, pod, markers...)
			return why == "" && len(leftIn(r)) == 0, nil
		})
		report, unavailable = f.NodeReport(ctx, pod, markers...)
		left := leftIn(report)
		if unavailable != "" {
			f.Checker.Fail("the node observer stopped answering after the ephemeral container ended: " + unavailable)
		}
		for _, l := range left {
			b.Problem("after the ephemeral container's command ended, still running on the node after %s: %s", f.Timeouts.ContainerExit, l)
		}
		mu.Lock()
		for kind, e := range ended {
			b.Evidence("the %s session's call ended: %s", kind, e)
		}
		mu.Unlock()
		f.Checker.Record(b.Done("everything it ran ended with its command: its child and its exec sessions of every kind"))
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

// live are the processes that have not ended (zombies have: their parent
// has yet to reap them), but for the node observer's own readers: one
// whose call a poll's deadline cut short may still be reading, every
// marker in its argv.
func live(ps []oracle.Process) []oracle.Process {
	var out []oracle.Process
	for _, p := range ps {
		if strings.HasPrefix(p.Args, helper.Path+" "+helper.ModeOracle+" ") {
			continue
		}
		if !strings.HasPrefix(p.State, "Z") && !strings.HasPrefix(p.State, "X") {
			out = append(out, p)
		}
	}
	return out
}
