package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ectest/ectest/internal/hostdeps"
)

// Paths and settings Prepare manages.
const (
	WrapperPath    = "/usr/local/libexec/ectest/ectest-runc"
	WrapperRuntime = "ectest-runc"
	DaemonJSON     = "/etc/docker/daemon.json"
	dockerdLog     = "/var/log/ectest-dockerd.log"
	// Docker networks (kind's among them) get addresses from 198.19.0.0/16,
	// part of the range reserved for network testing: never routed, never
	// anybody's private network. (The embedded CRI runtime uses 198.18.0.0/16.)
	addressPool = "198.19.0.0/16"
	bridgeIP    = "198.19.255.1/24"
)

// Options for Prepare.
type Options struct {
	Log func(format string, args ...any)
}

// Prepare makes a Docker engine answer, configured for kind on this host.
// It changes nothing when the engine already answers with what this host
// needs, and says what it changes.
func Prepare(ctx context.Context, o Options) error {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	missing, err := MissingHere()
	if err != nil {
		return err
	}
	needWrapper := len(missing) > 0
	_, wrapperErr := os.Stat(WrapperPath)
	if info, err := dockerInfo(ctx); err == nil && (!needWrapper || (info.DefaultRuntime == WrapperRuntime && wrapperErr == nil)) {
		return nil
	}
	if err := hostdeps.Ensure(ctx, logf, hostdeps.KindHost); err != nil {
		return err
	}
	if needWrapper && wrapperErr != nil {
		logf("the capability bounding set lacks %s: privileged containers would fail; installing %s as dockerd's default OCI runtime", strings.Join(missing, ", "), WrapperPath)
		if err := installSelf(WrapperPath); err != nil {
			return fmt.Errorf("install %s: %w", WrapperPath, err)
		}
	}
	changed, err := writeDaemonJSON(needWrapper)
	if err != nil {
		return err
	}
	if changed {
		logf("wrote %s (address pool %s, default runtime %s)", DaemonJSON, addressPool, map[bool]string{true: WrapperRuntime, false: "runc"}[needWrapper])
	}
	return startDockerd(ctx, logf, changed)
}

type info struct {
	DefaultRuntime string
	ServerVersion  string
}

func dockerInfo(ctx context.Context) (info, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{json .}}").Output()
	if err != nil {
		return info{}, fmt.Errorf("docker info: %w", err)
	}
	var i info
	if err := json.Unmarshal(out, &i); err != nil {
		return info{}, err
	}
	if i.ServerVersion == "" {
		return info{}, errors.New("docker info: no engine answered")
	}
	return i, nil
}

// DaemonConfig merges what this host needs into an existing daemon.json.
func DaemonConfig(existing []byte, wrapper bool) ([]byte, error) {
	cfg := map[string]any{}
	if len(existing) > 0 {
		if err := json.Unmarshal(existing, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", DaemonJSON, err)
		}
	}
	cfg["default-address-pools"] = []any{map[string]any{"base": addressPool, "size": 24}}
	cfg["bip"] = bridgeIP
	if wrapper {
		runtimes, _ := cfg["runtimes"].(map[string]any)
		if runtimes == nil {
			runtimes = map[string]any{}
		}
		runtimes[WrapperRuntime] = map[string]any{"path": WrapperPath}
		cfg["runtimes"] = runtimes
		cfg["default-runtime"] = WrapperRuntime
	}
	return json.MarshalIndent(cfg, "", "  ")
}

func writeDaemonJSON(wrapper bool) (bool, error) {
	existing, err := os.ReadFile(DaemonJSON)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	out, err := DaemonConfig(existing, wrapper)
	if err != nil {
		return false, err
	}
	if string(out) == string(existing) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(DaemonJSON), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(DaemonJSON, out, 0o644)
}

func isSystemd() bool {
	b, err := os.ReadFile("/proc/1/comm")
	return err == nil && strings.TrimSpace(string(b)) == "systemd"
}

// installSelf copies the running binary (which carries the wrapper, see
// RuncWrapperMain) to path, atomically: a running dockerd may be using the
// old file.
func installSelf(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".partial"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
