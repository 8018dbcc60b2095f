package environment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/kind"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func node(name, label, reported string, controlPlane bool) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if label != "" {
		n.Labels[kind.LabelKubeletVersion] = label
	}
	if controlPlane {
		n.Labels[kube.ControlPlaneRole] = ""
	}
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: reported, ContainerRuntimeVersion: "containerd://2.4.2", OperatingSystem: "linux"}
	return n
}

func TestKubeletNodes(t *testing.T) {
	ns, err := kubeletNodes([]corev1.Node{
		node("cp", "v1.37.1", "v1.37.1", true),
		node("w3", "v1.35.8", "v1.35.8", false),
		node("w1", "v1.37.1", "v1.37.1", false),
		node("w4", "v1.34.10", "v1.34.10", false),
		node("other", "", "v1.36.4", false),
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, n := range ns {
		order = append(order, n.Kubelet+"@"+n.Name)
	}
	if strings.Join(order, " ") != "v1.37.1@cp v1.37.1@w1 v1.35.8@w3 v1.34.10@w4" {
		t.Errorf("labelled nodes, newest kubelet first: %v", order)
	}
	e := &ClusterEnvironment{KubeletNodes: ns}
	if n, ok := e.KubeletNode("v1.37.1"); !ok || n.Name != "w1" {
		t.Errorf("a worker is preferred to the control plane: %+v", n)
	}
	if _, ok := e.KubeletNode("v1.36.4"); ok {
		t.Error("an unlabelled node is no skew node")
	}
	if d := defaultKubeletNode(ns, "v1.37.1"); d.Name != "w1" {
		t.Errorf("default node %s, want the worker of the server's release", d.Name)
	}
	if layers := e.KubeletLayers(); len(layers) != 3 || layers[capability.KubeletLayer("v1.34.10")].APIVersion != "kubelet v1.34.10" {
		t.Errorf("kubelet layers: %+v", layers)
	}
	// A skew pair: N only on the control plane.
	pair, _ := kubeletNodes([]corev1.Node{node("cp", "v1.37.1", "v1.37.1", true), node("w", "v1.36.4", "v1.36.4", false)})
	if d := defaultKubeletNode(pair, "v1.37.1+abc"); d.Name != "cp" {
		t.Errorf("pair: default node %s", d.Name)
	}
	if _, err := kubeletNodes([]corev1.Node{node("w", "v1.35.8", "v1.36.4", false)}); err == nil || !strings.Contains(err.Error(), "reports v1.36.4") {
		t.Errorf("a label the kubelet contradicts must fail the environment: %v", err)
	}
}

// The node runtime probe says no as well as yes: a runtime running since
// before the spec is fine; one not running, or started again after the
// spec began, breaks it.
func TestRuntimeUnitsProblem(t *testing.T) {
	since := time.Date(2026, 11, 26, 11, 0, 0, 500_000_000, time.UTC)
	before := kind.RuntimeUnit{Node: "n", Active: "active", Started: since.Add(-time.Hour), PID: "10"}
	if err := runtimeUnitsProblem([]kind.RuntimeUnit{before}, "containerd", since); err != nil {
		t.Errorf("a runtime running since before the spec: %v", err)
	}
	for _, c := range []struct {
		name string
		u    kind.RuntimeUnit
		want string
	}{
		{"not running", kind.RuntimeUnit{Node: "n", Active: "activating", Started: since.Add(-time.Hour)}, "containerd.service is activating"},
		{"started again in the spec's first second", kind.RuntimeUnit{Node: "n", Active: "active", Started: since.Truncate(time.Second), PID: "11"}, "started again at 11:00:00 (pid 11)"},
		{"started again later", kind.RuntimeUnit{Node: "n", Active: "active", Started: since.Add(time.Minute), PID: "12"}, "went away during the spec"},
	} {
		err := runtimeUnitsProblem([]kind.RuntimeUnit{before, c.u}, "containerd", since)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The leak check removes what the kubelet's garbage collection would (a
// stopped sandbox with nothing running in it) and reports the rest: a
// sandbox still ready, or one whose removal was refused (a container still
// running in it), is a leak, and a ready one is never asked to be removed.
func TestRemoveStoppedSandboxes(t *testing.T) {
	stopped := kind.NodeSandbox{Node: "n", ID: "aaaa", Namespace: "ns1", Name: "p1"}
	ready := kind.NodeSandbox{Node: "n", ID: "bbbb", Namespace: "ns2", Name: "p2", Ready: true}
	busy := kind.NodeSandbox{Node: "n", ID: "cccc", Namespace: "ns3", Name: "p3"}
	var asked []string
	remove := func(sb kind.NodeSandbox) error {
		asked = append(asked, sb.ID)
		if sb.ID == busy.ID {
			return errors.New("it is stopped, but its containers dddd (CONTAINER_RUNNING) have not exited")
		}
		return nil
	}
	left, removed := removeStoppedSandboxes([]kind.NodeSandbox{stopped, ready, busy}, remove)
	if strings.Join(removed, ",") != "n/aaaa ns1/p1 (stopped)" {
		t.Errorf("removed %v, want the stopped one with nothing in it", removed)
	}
	want := []string{"n/bbbb ns2/p2 (ready)", "n/cccc ns3/p3 (stopped): it is stopped, but its containers dddd (CONTAINER_RUNNING) have not exited"}
	if strings.Join(left, "\n") != strings.Join(want, "\n") {
		t.Errorf("left %q, want %q", left, want)
	}
	if strings.Join(asked, ",") != "aaaa,cccc" {
		t.Errorf("asked to remove %v, want the stopped ones only (aaaa, cccc)", asked)
	}
	if left, removed := removeStoppedSandboxes(nil, remove); len(left) != 0 || len(removed) != 0 {
		t.Errorf("no sandboxes: left %v, removed %v", left, removed)
	}
}

// The run's end waits for its namespaces while they go, however slowly, and
// reports what has not gone once nothing went for the drain window, or once
// the limit ran out.
func TestWaitGoneWaitsWhileThingsGo(t *testing.T) {
	const drain, limit, poll = 200 * time.Millisecond, 10 * time.Second, time.Millisecond
	// Slow but steady: one goes every 50 ms (more than the window between
	// the first and the last, a quarter of it between two).
	list := []string{"ns-1", "ns-2", "ns-3", "ns-4", "ns-5", "ns-6"}
	started := time.Now()
	steady := func() ([]string, error) {
		gone := int(time.Since(started) / (50 * time.Millisecond))
		return list[min(gone, len(list)):], nil
	}
	if left, err := waitGone(context.Background(), drain, limit, poll, steady); err != nil || len(left) != 0 {
		t.Errorf("deletions that keep going were cut off: left %v, err %v", left, err)
	}
	// Stuck: two go, then one stays.
	calls := 0
	stuck := func() ([]string, error) {
		calls++
		if calls < 3 {
			return list[calls:3], nil
		}
		return []string{"ns-3 (Terminating)"}, nil
	}
	left, err := waitGone(context.Background(), drain, limit, poll, stuck)
	if err != nil || len(left) != 1 || left[0] != "ns-3 (Terminating)" {
		t.Errorf("a namespace that never goes must be reported: left %v, err %v", left, err)
	}
	// Progress forever, but the limit holds.
	n := 0
	churn := func() ([]string, error) { n++; return []string{fmt.Sprint("ns-", n)}, nil }
	bound, cancelBound := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelBound()
	left, err = waitGone(bound, drain, 300*time.Millisecond, poll, churn)
	if err != nil || len(left) != 1 {
		t.Errorf("the limit did not hold: left %v, err %v", left, err)
	}
	// An error of the listing, and a cancelled context, end the wait.
	if _, err := waitGone(context.Background(), drain, limit, poll, func() ([]string, error) { return nil, errors.New("boom") }); err == nil {
		t.Error("a listing error was not returned")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := waitGone(ctx, time.Hour, time.Hour, poll, func() ([]string, error) { return []string{"x"}, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait returned %v", err)
	}
}

// The run's end deletes every namespace of the run, whoever emptied it, and
// leaves alone those of other runs and those already being deleted.
func TestDeleteRunNamespaces(t *testing.T) {
	ns := func(name, run string, deleting bool) *corev1.Namespace {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelRun: run}}}
		if deleting {
			now := metav1.Now()
			n.DeletionTimestamp = &now
		}
		return n
	}
	client := fake.NewClientset(ns("ectest-a", "r1", false), ns("ectest-b", "r1", false), ns("ectest-c", "r1", true), ns("ectest-other", "r2", false))
	if err := deleteRunNamespaces(context.Background(), client, "r1"); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range client.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok && a.GetResource().Resource == "namespaces" {
			deleted = append(deleted, d.GetName())
		}
	}
	slices.Sort(deleted)
	if !slices.Equal(deleted, []string{"ectest-a", "ectest-b"}) {
		t.Errorf("deleted %v, want the run's namespaces not yet being deleted: [ectest-a ectest-b]", deleted)
	}
}
