//go:build !windows

package cri

import (
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Shapes of containerd's verbose Status "config" (internal/cri/config
// Config: the runtime config inline, then containerdRootDir,
// containerdEndpoint, rootDir, stateDir), as containerd on Windows and on
// Linux fill them by default.
const (
	windowsConfig = `{"containerd":{"defaultRuntimeName":"runhcs-wcow-process","runtimes":{"runhcs-wcow-process":{"runtimeType":"io.containerd.runhcs.v1"}}},` +
		`"cni":{"binDirs":["C:\\Program Files\\containerd\\cni\\bin"]},` +
		`"containerdRootDir":"C:\\ProgramData\\containerd\\root","containerdEndpoint":"\\\\.\\pipe\\containerd-containerd",` +
		`"rootDir":"C:\\ProgramData\\containerd\\root\\io.containerd.grpc.v1.cri","stateDir":"C:\\ProgramData\\containerd\\state\\io.containerd.grpc.v1.cri"}`
	linuxConfig = `{"containerd":{"defaultRuntimeName":"runc","runtimes":{"runc":{"runtimeType":"io.containerd.runc.v2"}}},` +
		`"containerdRootDir":"/var/lib/containerd","containerdEndpoint":"/run/containerd/containerd.sock",` +
		`"rootDir":"/var/lib/containerd/io.containerd.grpc.v1.cri","stateDir":"/run/containerd/io.containerd.grpc.v1.cri"}`
)

func TestOSFromStatusInfo(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         string
		ok           bool
	}{
		{"containerd on Windows", windowsConfig, "windows", true},
		{"containerd on Linux", linuxConfig, "linux", true},
		{"no paths", `{"containerd":{}}`, "", false},
		{"paths of both kinds", `{"rootDir":"/var/lib/x","stateDir":"C:\\x"}`, "", false},
		{"not JSON", `config`, "", false},
	} {
		n, ok := OSFromStatusInfo(map[string]string{"config": c.config, "golang": `"go1.24"`})
		if n.OS != c.want || ok != c.ok || (ok && n.Evidence == "") {
			t.Errorf("%s: %+v, %v; want %q, %v", c.name, n, ok, c.want, c.ok)
		}
	}
	if _, ok := OSFromStatusInfo(nil); ok {
		t.Error("no info decided an OS")
	}
}

// statusServer answers Status with fixed info, as a runtime would.
type statusServer struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	info map[string]string
}

func (s statusServer) Status(_ context.Context, r *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	resp := &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{}}
	if r.Verbose {
		resp.Info = s.info
	}
	return resp, nil
}

func serveStatus(t *testing.T, info map[string]string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, statusServer{info: info})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return "unix://" + sock
}

func TestDetectOS(t *testing.T) {
	ctx := context.Background()
	n, err := DetectOS(ctx, "npipe:////./pipe/containerd-containerd")
	if err != nil || n.OS != "windows" || !strings.Contains(n.Evidence, "named pipe") {
		t.Errorf("named pipe: %+v, %v", n, err)
	}
	n, err = DetectOS(ctx, serveStatus(t, map[string]string{"config": windowsConfig}))
	if err != nil || n.OS != "windows" || !strings.Contains(n.Evidence, `C:\\ProgramData\\containerd\\root`) {
		t.Errorf("Windows paths over a unix socket: %+v, %v", n, err)
	}
	n, err = DetectOS(ctx, serveStatus(t, map[string]string{"config": linuxConfig}))
	if err != nil || n.OS != "linux" {
		t.Errorf("Linux paths: %+v, %v", n, err)
	}
	n, err = DetectOS(ctx, serveStatus(t, nil))
	if err != nil || n.OS != runtime.GOOS || !strings.Contains(n.Evidence, "suite's own OS") {
		t.Errorf("no signal: %+v, %v", n, err)
	}
	if _, err := DetectOS(ctx, "tcp://x"); err == nil {
		t.Error("bad endpoint accepted")
	}
}

// WIN-5: what the runtime says it serves, and whether that is a named pipe.
func TestServedEndpointAndNamedPipes(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"containerdEndpoint":"\\\\.\\pipe\\containerd-containerd"}`: `\\.\pipe\containerd-containerd`,
		`{"containerdEndpoint":"/run/containerd/containerd.sock"}`:    "/run/containerd/containerd.sock",
		`{"rootDir":"/var/lib"}`:                                      "",
		`not json`:                                                    "",
	} {
		got, ok := ServedEndpoint(map[string]string{"config": cfg})
		if got != want || ok != (want != "") {
			t.Errorf("ServedEndpoint(%s) = %q, %v; want %q", cfg, got, ok, want)
		}
	}
	for addr, want := range map[string]bool{
		`\\.\pipe\containerd-containerd`:            true,
		`//./pipe/containerd-containerd`:            true,
		`npipe:////./pipe/containerd-containerd`:    true,
		`\\server\PIPE\x`:                           true,
		`/run/containerd/containerd.sock`:           false,
		`unix:///run/containerd/containerd.sock`:    false,
		`C:\ProgramData\containerd\containerd.sock`: false,
		`\\.\pipe\`: false,
	} {
		if got := IsNamedPipe(addr); got != want {
			t.Errorf("IsNamedPipe(%q) = %v, want %v", addr, got, want)
		}
	}
}

// WIN-3: an image's platform from containerd's verbose ImageStatus.
func TestImagePlatform(t *testing.T) {
	p, ok := ImagePlatform(map[string]string{"info": `{"chainID":"sha256:x","imageSpec":{"architecture":"amd64","os":"windows","os.version":"10.0.20348.2966","config":{}}}`})
	if !ok || p.OS != "windows" || p.OSVersion != "10.0.20348.2966" || p.Architecture != "amd64" {
		t.Errorf("ImagePlatform = %+v, %v", p, ok)
	}
	if _, ok := ImagePlatform(map[string]string{}); ok {
		t.Error("no info, yet a platform")
	}
}
