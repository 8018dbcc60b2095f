package embedded

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ectest/ectest/kind/host"
)

// criDockerdDaemon is cri-dockerd (BinDir's build) in front of a Docker
// engine of the run's (Debian's dockerd from PATH) on a containerd of the
// run's (Debian's containerd from PATH), the engine running the host's
// runc through the project's wrappers (see dockerd.go).
func criDockerdDaemon(o Options) (*daemon, error) {
	if o.BinDir == "" {
		return nil, fmt.Errorf("embedded runtime: cri-dockerd is built by the suite (its flavor's programs), and no build directory was given")
	}
	bin := filepath.Join(o.BinDir, "cri-dockerd")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("embedded runtime: %w", err)
	}
	var paths = map[string]string{}
	for _, prog := range []string{"dockerd", "containerd", "containerd-shim-runc-v2", "runc"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			return nil, fmt.Errorf("embedded runtime: %s not found (Debian's docker.io, containerd and runc packages): %w", prog, err)
		}
		paths[prog] = p
	}
	runc := paths["runc"]
	if o.RuncBinary != "" {
		runc = o.RuncBinary
	}
	d := &daemon{name: "cri-dockerd", bin: bin, socket: layout.criDockerdSocket}
	d.prepare = func(l layout, o Options) error {
		oom, err := setUpOOMClamp(l, l.dir, runc)
		if err != nil {
			return err
		}
		if err := setUpCapWrapper(l, oom); err != nil {
			return err
		}
		d.dirs = []string{l.dockerRoot(), l.dockerExecRoot(), l.criDockerdRoot(), l.cniCache(), l.cniData()}
		d.files = map[string]string{
			l.dockerContainerdConfig(): dockerContainerdTOML(l),
			l.dockerConfig():           dockerDaemonJSON(l, o),
		}
		d.args = criDockerdArgs(l, o)
		d.companions = []companion{
			{name: "dockerd-containerd", bin: paths["containerd"], args: []string{"--config", l.dockerContainerdConfig()},
				// The engine's default runtime (the capability wrapper)
				// finds the oom clamp here; containerd passes its
				// environment to the shims, and they to the runtime.
				env:   []string{"ECTEST_REAL_RUNC=" + oom},
				ready: func(ctx context.Context) error { return dialUnix(ctx, l.socket()) }},
			{name: "dockerd", bin: paths["dockerd"], args: []string{"--config-file", l.dockerConfig()},
				ready: func(ctx context.Context) error { return dockerPing(ctx, l.dockerSocket()) }},
		}
		return nil
	}
	return d, nil
}

// setUpCapWrapper links the engine's default OCI runtime, the kind hosts'
// capability wrapper (host.RuncWrapperMain), in the run directory, to the
// running binary, and checks that it runs next (the oom clamp, and so
// runc).
func setUpCapWrapper(l layout, next string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.Symlink(self, l.dockerCapWrapper()); err != nil {
		return err
	}
	cmd := exec.Command(l.dockerCapWrapper(), "--version")
	cmd.Env = append(os.Environ(), "ECTEST_REAL_RUNC="+next)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "runc version") {
		return fmt.Errorf("embedded runtime: %s (the running binary as %s) does not run runc: %v: %s", l.dockerCapWrapper(), host.WrapperRuntime, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func dialUnix(ctx context.Context, path string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return err
	}
	return c.Close()
}

// dockerPing asks the engine's API at socket for /_ping: it answers OK
// once the engine serves (its socket accepts connections earlier).
func dockerPing(ctx context.Context, socket string) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("docker /_ping: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
