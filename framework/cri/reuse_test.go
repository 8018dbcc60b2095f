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
	infra := oracle.Process{PID: 100, Args: "/pause", StartTime: 5000}
	left := oracle.Process{PID: 200, Args: "sleep 86400 ectest-debug-x", StartTime: 6000}
	clean := sandboxSeen{netns: "net:[4026532000]", state: runtimeapi.PodSandboxState_SANDBOX_READY, procs: []oracle.Process{infra}, infra: &infra}
	if why := clean.why(); why != "" {
		t.Fatalf("a clean sandbox is not reused: %s", why)
	}
	// A runtime that pins the namespaces without an infra process (CRI-O's
	// drop_infra_ctr): an empty namespace is clean, any process is not.
	noInfra := clean
	noInfra.infra, noInfra.procs = nil, nil
	if why := noInfra.why(); why != "" {
		t.Errorf("a clean sandbox without an infra is not reused: %s", why)
	}
	noInfra.procs = []oracle.Process{left}
	if why := noInfra.why(); !strings.Contains(why, "1 processes besides its infra") {
		t.Errorf("a process left in a sandbox without an infra: why() = %q", why)
	}
	for _, c := range []struct {
		name string
		edit func(*sandboxSeen)
		want string
	}{
		{"the spec failed", func(s *sandboxSeen) { s.failed = true }, "the spec failed"},
		{"never seen from outside", func(s *sandboxSeen) { s.netns = "" }, "never seen from outside"},
		{"not ready", func(s *sandboxSeen) { s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY }, "SANDBOX_NOTREADY"},
		{"status refused", func(s *sandboxSeen) { s.stateErr = errors.New("unavailable") }, "unavailable"},
		{"a container listed", func(s *sandboxSeen) { s.containers = 1 }, "lists 1 containers"},
		{"list refused", func(s *sandboxSeen) { s.listErr = errors.New("deadline") }, "deadline"},
		{"a process left", func(s *sandboxSeen) { s.procs = append(s.procs, left) }, "1 processes besides its infra"},
		{"the infra gone", func(s *sandboxSeen) { s.procs = nil }, "infra process"},
		{"the infra's PID reused", func(s *sandboxSeen) {
			again := infra
			again.StartTime++
			s.procs = []oracle.Process{again}
		}, "1 processes besides its infra"},
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
	if c, ok := reusable(SandboxOptions{Reuse: true, PID: runtimeapi.NamespaceMode_CONTAINER}); !ok || c != a {
		t.Errorf("PID CONTAINER asked for by name: reusable %v, key %v, want the zero value's %v", ok, c, a)
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
