package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
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
	// ModuleDir is this repository's root, to build the wrapper from.
	ModuleDir string
	Log       func(format string, args ...any)
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
	if info, err := dockerInfo(ctx); err == nil && (!needWrapper || info.DefaultRuntime == WrapperRuntime) {
		return nil
	}
	if err := ensurePackages(ctx, logf, "docker.io"); err != nil {
		return err
	}
	if needWrapper {
		logf("the capability bounding set lacks %s: privileged containers would fail; installing %s as dockerd's default OCI runtime", strings.Join(missing, ", "), WrapperPath)
		if err := os.MkdirAll(filepath.Dir(WrapperPath), 0o755); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, "go", "build", "-o", WrapperPath, "./kind/host/ectest-runc")
		cmd.Dir = o.ModuleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v: %s", WrapperPath, err, out)
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

// ensurePackages installs Debian packages that are missing.
func ensurePackages(ctx context.Context, logf func(string, ...any), pkgs ...string) error {
	var missing []string
	for _, p := range pkgs {
		out, _ := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Status}", p).Output()
		if !strings.Contains(string(out), "install ok installed") {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	logf("apt-get install %s", strings.Join(missing, " "))
	if out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %v: %s", err, out)
	}
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get install %s: %v: %s", strings.Join(missing, " "), err, tail(string(out)))
	}
	return nil
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

func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n")
}
