//go:build !windows

package cri

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestPassing(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unknown, "failed to remove container: container is in starting state, can't be removed"), true},
		{status.Error(codes.Unknown, "container \"x\" is running, stop it first"), true},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), true},
		{status.Error(codes.NotFound, "no such container"), false},
		{status.Error(codes.Unknown, "failed to destroy network for sandbox: cni plugin not initialized"), false},
		{errors.New("plain"), false},
	} {
		if got := Passing(c.err); got != c.want {
			t.Errorf("Passing(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// starting refuses RemoveContainer while its container is starting, as
// containerd does for a container whose StartContainer has not returned.
type starting struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	refusals atomic.Int32
	removed  atomic.Bool
}

func (s *starting) StopContainer(context.Context, *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	return &runtimeapi.StopContainerResponse{}, nil
}

func (s *starting) RemoveContainer(context.Context, *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if s.refusals.Add(-1) >= 0 {
		return nil, status.Error(codes.Unknown, "container is in starting state, can't be removed")
	}
	s.removed.Store(true)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (s *starting) StopPodSandbox(context.Context, *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	return nil, status.Error(codes.Unknown, "failed to destroy network for sandbox: cni plugin not initialized")
}

func (s *starting) RemovePodSandbox(context.Context, *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	return nil, status.Error(codes.Unknown, "sandbox container is not fully stopped")
}

// A cleanup asks again while the runtime refuses for a while, and gives
// up at once on a refusal that does not pass.
func TestRemoverAsksAgain(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fake := &starting{}
	fake.refusals.Store(3)
	runtimeapi.RegisterRuntimeServiceServer(srv, fake)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	conn, err := Dial("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := Remover{Runtime: conn.Runtime, Within: 10 * time.Second, Call: time.Second, Poll: 10 * time.Millisecond}
	if err := r.Container(context.Background(), "c1"); err != nil || !fake.removed.Load() {
		t.Fatalf("a container refused three times while starting: %v (removed %v)", err, fake.removed.Load())
	}
	start := time.Now()
	err = r.Sandbox(context.Background(), "s1")
	if err == nil || !strings.Contains(err.Error(), "cni plugin not initialized") {
		t.Fatalf("a sandbox the runtime cannot stop: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a refusal that does not pass was asked again for %s", took)
	}
	left := Leftover{Sandboxes: []*runtimeapi.PodSandbox{{Id: "s1"}}, Containers: []*runtimeapi.Container{{Id: "c2"}}}
	if got := strings.Join(left.Commands("unix:///run/containerd/containerd.sock"), "; "); got != "crictl --runtime-endpoint unix:///run/containerd/containerd.sock rm -f c2; crictl --runtime-endpoint unix:///run/containerd/containerd.sock rmp -f s1" {
		t.Errorf("commands: %s", got)
	}
}
