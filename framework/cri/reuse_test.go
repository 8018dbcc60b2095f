package cri

import (
	"errors"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/oracle"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A sandbox serves another spec only when everything the suite sees says
// the last spec left nothing in it; each thing seen can say no alone.
func TestSandboxSeenDecidesReuse(t *testing.T) {
	infra := oracle.Process{PID: 100, Args: "/pause"}
	left := oracle.Process{PID: 200, Args: "sleep 86400 ectest-debug-x"}
	clean := sandboxSeen{netns: "net:[4026532000]", state: runtimeapi.PodSandboxState_SANDBOX_READY, procs: []oracle.Process{infra}}
	if why := clean.why(); why != "" {
		t.Fatalf("a clean sandbox is not reused: %s", why)
	}
	for _, c := range []struct {
		name string
		edit func(*sandboxSeen)
		want string
	}{
		{"the spec failed", func(s *sandboxSeen) { s.failed = true }, "did not pass"},
		{"never seen from outside", func(s *sandboxSeen) { s.netns = "" }, "never seen from outside"},
		{"not ready", func(s *sandboxSeen) { s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY }, "SANDBOX_NOTREADY"},
		{"status refused", func(s *sandboxSeen) { s.stateErr = errors.New("unavailable") }, "unavailable"},
		{"a container listed", func(s *sandboxSeen) { s.containers = 1 }, "lists 1 containers"},
		{"list refused", func(s *sandboxSeen) { s.listErr = errors.New("deadline") }, "deadline"},
		{"a process left", func(s *sandboxSeen) { s.procs = append(s.procs, left) }, "2 processes in its network namespace"},
		{"no process at all", func(s *sandboxSeen) { s.procs = nil }, "0 processes"},
		{"/proc unreadable", func(s *sandboxSeen) { s.procErr = errors.New("permission denied") }, "permission denied"},
	} {
		s := clean
		c.edit(&s)
		if why := s.why(); !strings.Contains(why, c.want) {
			t.Errorf("%s: why() = %q, want it to say %q", c.name, why, c.want)
		}
	}
}

// Only sandboxes of the kubelet's usual shapes are shared, each shape in
// its own pool, and only when the spec asks.
func TestReusable(t *testing.T) {
	if _, ok := reusable(SandboxOptions{}); ok {
		t.Error("a sandbox the spec did not ask to share is shared")
	}
	a, ok1 := reusable(SandboxOptions{Reuse: true})
	b, ok2 := reusable(SandboxOptions{Reuse: true, SharePID: true})
	if !ok1 || !ok2 || a == b {
		t.Errorf("PID CONTAINER and shared-PID sandboxes: reusable %v %v, keys %v %v (want both, apart)", ok1, ok2, a, b)
	}
	for name, o := range map[string]SandboxOptions{
		"PID NODE":       {Reuse: true, PID: runtimeapi.NamespaceMode_NODE},
		"network NODE":   {Reuse: true, Network: runtimeapi.NamespaceMode_NODE},
		"IPC NODE":       {Reuse: true, IPC: runtimeapi.NamespaceMode_NODE},
		"user namespace": {Reuse: true, Userns: PodUserns(100000, 65536)},
	} {
		if _, ok := reusable(o); ok {
			t.Errorf("%s: shared", name)
		}
	}
}
