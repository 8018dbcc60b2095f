//go:build !windows

package environment

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ectest/ectest/framework/cri"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// versionServer answers Version and Status, or (hung) holds every call
// until its caller gives up, as a frozen runtime does; notReady makes its
// Status say the network is not ready, as a containerd without a CNI
// network says.
type versionServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	hung, notReady atomic.Bool
}

func (s *versionServer) Status(ctx context.Context, _ *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	if s.hung.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	network := &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Status: true}
	if s.notReady.Load() {
		network = &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Reason: "NetworkPluginNotReady", Message: "Network plugin returns error: cni plugin not initialized"}
	}
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true}, network}}}, nil
}

func (s *versionServer) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if s.hung.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return &runtimeapi.VersionResponse{RuntimeName: "fake"}, nil
}

// healthOf serves fake on a unix socket of the test's own and returns the
// runtime health of a connection to it.
func healthOf(t *testing.T, fake *versionServer) *runtimeHealth {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, fake)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	conn, err := cri.Dial("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return newRuntimeHealth(conn, "unix://"+sock)
}

// A runtime that hung during a spec and answers again by the time the spec
// has failed was gone during the spec (goneSince); an outage that began
// before a spec started is not that spec's.
func TestRuntimeHealthRemembersAnOutage(t *testing.T) {
	fake := &versionServer{}
	h := healthOf(t, fake)
	h.probe = 200 * time.Millisecond

	before := time.Now()
	if err := h.check(); err != nil {
		t.Fatalf("a runtime that answers: %v", err)
	}
	specStart := time.Now()
	fake.hung.Store(true)
	err := h.check()
	if err == nil || !strings.Contains(err.Error(), "the runtime went away at") {
		t.Fatalf("a hung runtime: %v", err)
	}
	if err := h.goneSince(specStart); err == nil {
		t.Error("an outage not over is not reported")
	}
	during := time.Now()
	fake.hung.Store(false)
	h.when = time.Time{} // the last probe's failure is not reused
	if err := h.check(); err != nil {
		t.Fatalf("a runtime that answers again: %v", err)
	}
	after := time.Now()
	if err := h.goneSince(specStart); err == nil || !strings.Contains(err.Error(), "answered again at") {
		t.Errorf("the outage during the spec: %v", err)
	}
	if err := h.goneSince(before); err == nil {
		t.Error("a spec that began before the outage and ended after it: no outage reported")
	}
	if err := h.goneSince(after); err != nil {
		t.Errorf("a spec that began after the runtime was back: %v", err)
	}
	// A spec that began while it was gone failed at its start (its own
	// check); once the runtime is back, that outage is not a later spec's.
	if err := h.goneSince(during); err != nil {
		t.Errorf("a spec that began during the outage, asked after it: %v", err)
	}
}

// A runtime that answers but whose Status says its network is not ready
// is the environment broken, with the runtime's own reason, until it is
// ready again.
func TestRuntimeHealthNotReady(t *testing.T) {
	fake := &versionServer{}
	h := healthOf(t, fake)
	fake.notReady.Store(true)
	err := h.check()
	if err == nil || !strings.Contains(err.Error(), "NetworkReady=false (NetworkPluginNotReady: Network plugin returns error: cni plugin not initialized)") {
		t.Fatalf("a runtime whose network is not ready: %v", err)
	}
	fake.notReady.Store(false)
	h.when = time.Time{}
	if err := h.check(); err != nil {
		t.Fatalf("a runtime ready again: %v", err)
	}
}
