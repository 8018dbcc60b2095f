package cri

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseEndpoint(t *testing.T) {
	cases := []struct {
		in, scheme, path, err string
	}{
		{"unix:///run/containerd/containerd.sock", "unix", "/run/containerd/containerd.sock", ""},
		{"/run/crio/crio.sock", "unix", "/run/crio/crio.sock", ""},
		{"npipe:////./pipe/containerd-containerd", "npipe", `\\.\pipe\containerd-containerd`, ""},
		{"tcp://127.0.0.1:1234", "", "", `unknown scheme "tcp"`},
		{"unix://", "", "", "no socket path"},
		{"npipe://pipe", "", "", "want npipe:////./pipe/<name>"},
		{"", "", "", "empty"},
	}
	for _, c := range cases {
		ep, err := ParseEndpoint(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseEndpoint(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || ep.Scheme != c.scheme || ep.Path != c.path {
			t.Errorf("ParseEndpoint(%q) = %+v, %v", c.in, ep, err)
		}
	}
	if runtime.GOOS != "windows" {
		if _, err := Dial("npipe:////./pipe/x"); err == nil || !strings.Contains(err.Error(), "only on Windows") {
			t.Errorf("npipe on Linux: %v", err)
		}
	}
}

const psPod = `PID   USER     COMMAND
    1 65535    /pause
    7 root     /target --token=tok-target --listen=:8080 --marker=/ectest/marker
   13 root     /target --token=tok-sibling --listen=:8081 --marker=/ectest/marker
   19 root     sh -c sleep 86400 & wait ectest-debug-tok-debug
   25 root     sleep 86400
   26 root     ps -o pid,user,args
`

func TestParsePSAndClassify(t *testing.T) {
	procs, err := ParsePS(psPod)
	if err != nil || len(procs) != 6 || procs[1].PID != 7 || procs[1].User != "root" || !strings.HasPrefix(procs[1].Args, "/target --token=tok-target") {
		t.Fatalf("ParsePS = %+v, %v", procs, err)
	}
	m := Markers{Self: "ectest-debug-tok-debug", Target: "--token=tok-target", Siblings: []string{"--token=tok-sibling"}, Helpers: DebugHelpers}
	views := map[string]struct {
		ps   string
		want View
	}{
		"pod": {psPod, ViewPod},
		"target": {`PID USER COMMAND
 1 root /target --token=tok-target --listen=:8080
 9 root sh -c sleep 86400 & wait ectest-debug-tok-debug
 15 root sleep 86400
 16 root ps -o pid,user,args`, ViewTarget},
		"own": {`PID USER COMMAND
 1 root sh -c sleep 86400 & wait ectest-debug-tok-debug
 7 root sleep 86400
 8 root ps -o pid,user,args`, ViewOwn},
		"node": {`PID USER COMMAND
 1 root /sbin/init
 400 root /usr/bin/containerd
 900 root /target --token=tok-target
 901 root sh -c sleep 86400 & wait ectest-debug-tok-debug
 902 root ps -o pid,user,args`, ViewNode},
		"target but sibling visible": {`PID USER COMMAND
 1 root /target --token=tok-target
 5 root /target --token=tok-sibling
 9 root sh -c sleep 86400 & wait ectest-debug-tok-debug
 10 root ps -o pid,user,args`, ViewOther},
	}
	for name, c := range views {
		procs, err := ParsePS(c.ps)
		if err != nil {
			t.Fatal(err)
		}
		if got := Classify(procs, m); got != c.want {
			t.Errorf("%s: Classify = %s, want %s", name, got, c.want)
		}
	}
	if _, err := ParsePS("PID USER COMMAND\n"); err == nil {
		t.Error("empty ps accepted")
	}
	if _, err := ParsePS("x root /bin/sh"); err == nil {
		t.Error("bad PID accepted")
	}
}

// The kubelet's log reader (cri-client) splits a CRI log into its streams
// and glues partial lines.
func TestLogStreams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "debug.log")
	log := "2026-11-22T04:00:00.000000001Z stdout F out-42\n" +
		"2026-11-22T04:00:00.1Z stderr P err-\n" +
		"2026-11-22T04:00:00.2Z stderr F 42\n"
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, err := LogStreams(context.Background(), path)
	if err != nil || out != "out-42\n" || errs != "err-42\n" {
		t.Errorf("LogStreams = %q, %q, %v", out, errs, err)
	}
	if err := os.WriteFile(path, []byte("not a log line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LogStreams(context.Background(), path); err == nil {
		t.Error("a malformed log accepted")
	}
}

// An Unknown error counts as a refusal only when it speaks of the request.
func TestJudgeRefusalUnknownNeedsEvidence(t *testing.T) {
	for _, c := range []struct {
		err   error
		about []string
		want  capability.Outcome
	}{
		{status.Error(codes.Unknown, `invalid target container: container "abc" does not exist`), nil, capability.Works},
		{status.Error(codes.Unknown, `failed to create sandbox: no space left on device`), nil, capability.Deviated},
		{status.Error(codes.Unknown, `container "0123abcd" is not running`), []string{"0123abcd"}, capability.Works},
		{status.Error(codes.InvalidArgument, `bad`), nil, capability.Works},
		{status.Error(codes.Unavailable, `namespace mode`), nil, capability.Deviated},
	} {
		if got, why := JudgeRefusal(false, c.err, c.about...); got != c.want {
			t.Errorf("%v %v: %s (%s), want %s", c.err, c.about, got, why, c.want)
		}
	}
}
