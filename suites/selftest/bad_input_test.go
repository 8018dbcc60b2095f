package selftest

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
)

// Bad input gets exactly one line on stderr, starting "ectest: ", and exit
// code 2, before any environment is brought up, in both suites.
func TestBadInputGetsOneClearLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A socket file nobody listens on: connection refused.
	dead := filepath.Join(dir, "dead.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: dead, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()

	// A kubeconfig whose server refuses connections.
	refused := write("refused.kubeconfig", `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`)

	cases := []struct {
		name  string
		suite string
		args  []string
		want  string
	}{
		{"endpoint that does not exist", "cri", []string{"-runtime-endpoint=unix:///nonexistent/ectest.sock"}, "no such file or directory"},
		{"path that is not a socket", "cri", []string{"-runtime-endpoint=unix://" + write("plain", "x")}, "is not a socket"},
		{"registry address of no interface here", "cri", []string{"-registry-addr=203.0.113.7:5000"}, "-registry-addr 203.0.113.7:5000"},
		{"run ID that is no label value", "cri", []string{"-run-id=CI_Job.7"}, `-run-id "CI_Job.7"`},
		{"progress URL that is no http URL", "cluster", []string{"-progress-url=localhost:8099/progress"}, `-progress-url "localhost:8099/progress": an http or https URL`},
		{"unknown scheme", "cri", []string{"-runtime-endpoint=tcp://127.0.0.1:1"}, `unknown scheme "tcp"`},
		{"unreachable runtime", "cri", []string{"-runtime-endpoint=unix://" + dead}, "does not answer Version"},
		{"unknown profile name", "cri", []string{"-profile=no-such-runtime"}, `unknown profile "no-such-runtime"`},
		{"malformed profile file", "cri", []string{"-profile=" + write("bad-profile.yaml", "name: [unclosed")}, "malformed"},
		{"unknown capability name", "cri", []string{"-profile=" + write("typo.yaml", "name: typo\nos: linux\ncapabilities:\n  pid-targett: supported\n")}, `unknown capability "pid-targett"`},
		{"invalid support value", "cri", []string{"-profile=" + write("support.yaml", "name: s\nos: linux\ncapabilities:\n  pid-target: maybe\n")}, `invalid support "maybe"`},
		{"required capability excused on linux", "cri", []string{"-profile=" + write("excuse.yaml", excusingProfile())}, "target-id-validation is declared not-applicable, but on linux it is required of every runtime"},
		{"malformed images file", "cri", []string{"-images-file=" + write("images.yaml", "linux: [")}, "images file"},
		{"unknown image role", "cri", []string{"-images-file=" + write("roles.yaml", "linux:\n  debugger: busybox\n")}, `unknown image role "debugger"`},
		{"unknown Windows release", "cri", []string{"-images-file=" + write("win.yaml", "windows:\n  ltsc2099:\n    debug: nanoserver\n")}, `unknown Windows release "ltsc2099"`},
		{"missing images file", "cri", []string{"-images-file=/nonexistent/images.yaml"}, "no such file"},
		{"missing busybox", "cri", []string{"-busybox=/nonexistent/busybox"}, "-busybox /nonexistent/busybox: no such file"},
		{"no busybox for a given runtime", "cri", []string{"-runtime-endpoint=unix://" + dead, "-busybox=/nonexistent/busybox"}, "nothing is installed when -runtime-endpoint is given"},
		{"cluster suite, missing busybox", "cluster", []string{"-busybox=/nonexistent/busybox"}, "-busybox /nonexistent/busybox: no such file"},
		{"misspelt label filter", "cri", []string{"-ginkgo.label-filter=pid-targt"}, `unknown label "pid-targt" (nearest: pid-target`},
		{"selection of no spec", "cri", []string{"-ginkgo.focus=no spec is called this"}, "matches none of the suite's"},
		{"unreachable cluster", "cluster", []string{"-kubeconfig=" + refused}, "does not answer"},
		{"malformed kubeconfig", "cluster", []string{"-kubeconfig=" + write("bad.kubeconfig", "clusters: [")}, "error loading config file"},
		{"missing kubeconfig", "cluster", []string{"-kubeconfig=/nonexistent/kubeconfig"}, "no such file"},
		{"cluster suite, unknown profile name", "cluster", []string{"-profile=no-such-runtime"}, `unknown profile "no-such-runtime"`},
		{"unknown node runtime", "cluster", []string{"-node-runtime=containerd-9"}, `unknown node runtime "containerd-9"`},
		{"RuntimeClass the suite's cluster lacks", "cluster", []string{"-runtime-class=kata"}, `-runtime-class "kata": a kind cluster with the node runtime containerd-2 offers RuntimeClasses: none`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(suiteBinary(t, c.suite), c.args...)
			// A working folder of its own: the default report folder
			// (_artifacts) is then the case's. Cases that get past the
			// checks (a label filter, a focus) hold it locked, and a
			// shared one made a parallel case read "in use by another
			// run" (exit 3) instead of its own bad input.
			cmd.Dir = t.TempDir()
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
				t.Fatalf("want exit code 2, got %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "ectest: ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("want one line starting %q containing %q on stderr, got:\n%s", "ectest: ", c.want, stderr.String())
			}
			if strings.Contains(stdout.String()+stderr.String(), "goroutine ") {
				t.Errorf("stack trace printed:\n%s%s", stdout.String(), stderr.String())
			}
		})
	}
}

// excusingProfile is a complete Linux profile that declares a required
// capability not-applicable: a vendor hiding a nonconformance.
func excusingProfile() string {
	var b strings.Builder
	b.WriteString("name: excuse\nos: linux\ncapabilities:\n")
	for _, d := range capability.All() {
		sup := "supported"
		if d.Name == capability.TargetIDValidation {
			sup = "not-applicable"
		}
		b.WriteString("  " + string(d.Name) + ": " + sup + "\n")
	}
	return b.String()
}
