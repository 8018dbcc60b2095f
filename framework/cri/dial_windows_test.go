//go:build windows

package cri

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/Microsoft/go-winio"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// pipeRuntime answers Version only: a stand-in CRI server for the dialer's
// own test, not a runtime anything is judged against.
type pipeRuntime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
}

func (pipeRuntime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{RuntimeName: "ectest-npipe-selftest", RuntimeVersion: "0", RuntimeApiVersion: "v1"}, nil
}

// The suite dials a CRI runtime on a named pipe (npipe:////./pipe/<name>)
// as the kubelet does on Windows: a gRPC server on a pipe answers Probe.
// make test runs this under Wine (hack/wine-test.sh).
func TestProbeNamedPipe(t *testing.T) {
	name := fmt.Sprintf("ectest-selftest-%d", os.Getpid())
	l, err := winio.ListenPipe(`\\.\pipe\`+name, nil)
	if err != nil {
		t.Fatalf("listen on a named pipe: %v", err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, pipeRuntime{})
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := Probe(ctx, "npipe:////./pipe/"+name)
	if err != nil {
		t.Fatalf("Probe over the named pipe: %v", err)
	}
	if v.RuntimeName != "ectest-npipe-selftest" {
		t.Errorf("Version answered %q", v.RuntimeName)
	}
	if _, err := Probe(ctx, "npipe:////./pipe/"+name+"-absent"); err == nil {
		t.Error("Probe of a pipe nobody serves succeeded")
	}
}
