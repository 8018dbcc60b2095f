package cri

import (
	"context"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// execAnswers is a runtime (a stub, testing the suite itself) whose
// ExecSync answers with a fixed response.
type execAnswers struct {
	runtimeapi.RuntimeServiceClient
	resp *runtimeapi.ExecSyncResponse
}

func (s execAnswers) ExecSync(context.Context, *runtimeapi.ExecSyncRequest, ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	return s.resp, nil
}

// A non-zero exit is an answer a judge reads ("denied", "not found"); a
// negative exit code, CRI-O's answer to an exec its timeout ended, is no
// answer and must not be read as one.
func TestExecNegativeExitCodeIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name    string
		resp    *runtimeapi.ExecSyncResponse
		wantErr string
	}{
		{"denied", &runtimeapi.ExecSyncResponse{ExitCode: 1, Stderr: []byte("cat: can't open '/proc/7/environ': Permission denied\n")}, ""},
		{"ran", &runtimeapi.ExecSyncResponse{Stdout: []byte("ok\n")}, ""},
		{"timed out (CRI-O)", &runtimeapi.ExecSyncResponse{ExitCode: -1, Stderr: []byte("command timed out")}, "answered exit code -1, which no process exits with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Framework{Session: &Session{Runtime: &Conn{Runtime: execAnswers{resp: tc.resp}}, Timeouts: framework.DefaultTimeouts}}
			r, err := f.Exec(context.Background(), &Container{ID: "c", Name: "debug"}, "cat", "/proc/7/environ")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v for an answer", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if r.ExitCode != tc.resp.ExitCode {
				t.Errorf("exit code %d, want %d", r.ExitCode, tc.resp.ExitCode)
			}
		})
	}
}
