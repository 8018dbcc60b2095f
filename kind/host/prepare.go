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

	"github.com/ectest/ectest/internal/flock"
	"github.com/ectest/ectest/internal/hostdeps"
)

// Paths and settings Prepare manages.
const (
	WrapperPath    = "/usr/local/libexec/ectest/ectest-runc"
	WrapperRuntime = "ectest-runc"
	DaemonJSON     = "/etc/docker/daemon.json"
	dockerdLog     = "/var/log/ectest-dockerd.log"
	// The default bridge of an engine ectest owns is in 198.19.0.0/16, part
	// of the range reserved for network testing: never routed, never
	// anybody's private network. (The embedded CRI runtime uses 198.18.0.0/16.)
	bridgeIP = "198.19.255.1/24"
	// ConfigureEnv set to 1 lets Prepare change an engine ectest does not own.
	ConfigureEnv = "ECTEST_DOCKER_CONFIGURE"
)

// Options for Prepare.
type Options struct {
	Log func(format string, args ...any)
	// ConfigureDocker lets Prepare add its runtime to an engine it does not
	// own (as ConfigureEnv=1 does).
	ConfigureDocker bool
}

// Prepare makes a Docker engine answer, able to run kind's privileged
// nodes here. It configures or restarts an engine only when ectest owns it
// (it installed docker.io, or there was no daemon.json and no dockerd);
// another engine only gets WrapperRuntime as an extra runtime, reloaded,
// and only with consent (Options.ConfigureDocker, ConfigureEnv=1). Kind's
// nodes then use it through a docker script first on PATH (shim.go).
func Prepare(ctx context.Context, o Options) error {
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	missing, err := MissingHere()
	if err != nil {
		return err
	}
	runtime := ""
	if len(missing) > 0 {
		runtime = WrapperRuntime
	}
	consent := o.ConfigureDocker || os.Getenv(ConfigureEnv) == "1"
	if os.Geteuid() == 0 {
		// One ectest at a time reads and changes the engine and its record.
		dir, err := flock.Dir()
		if err != nil {
			return err
		}
		unlock, err := flock.Lock(filepath.Join(dir, "kind-host.lock"))
		if err != nil {
			return err
		}
		defer unlock()
	}
	st, err := loadState()
	if err != nil && !errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%s: %w", StateFile, err)
	}
	inf, infoErr := dockerInfo(ctx)
	if infoErr == nil && (runtime == "" || inf.Runtimes[runtime] != nil) {
		if err := ensureWrapper(&st, runtime, logf); err != nil {
			return err
		}
		return useShim(ctx, logf, runtime)
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && h != "unix:///var/run/docker.sock" {
		if infoErr != nil {
			return fmt.Errorf("DOCKER_HOST=%s does not answer (%v); ectest starts and configures only this host's engine", h, infoErr)
		}
		return refusal(missing, "the engine at DOCKER_HOST="+h, false)
	}
	if os.Geteuid() != 0 {
		if infoErr != nil {
			return fmt.Errorf("no Docker engine answers (%v), and only root can start one: run once as root, or start dockerd", infoErr)
		}
		return refusal(missing, DaemonJSON, false)
	}
	if infoErr == nil {
		// Running, without the runtime: add it and reload, never restart
		// an engine that is not ectest's.
		cfg := dockerdConfigFile(dockerdPid())
		if st.Owned == "" && !consent {
			return refusal(missing, cfg, true)
		}
		if err := ensureWrapper(&st, runtime, logf); err != nil {
			return err
		}
		if _, err := configure(&st, cfg, Wants{Runtime: true}, logf); err != nil {
			return err
		}
		if err := reloadDockerd(ctx); err != nil {
			return err
		}
		if err := waitRuntime(ctx, runtime, 10*time.Second); err != nil {
			if st.Owned == "" {
				return fmt.Errorf("dockerd did not take the runtime %s from %s on reload (%v): restart it yourself when its containers may stop", runtime, cfg, err)
			}
			logf("dockerd did not take the runtime on reload (%v); restarting the engine ectest owns", err)
			if err := stopDockerd(ctx, logf); err != nil {
				return err
			}
			if err := startDockerd(ctx, logf); err != nil {
				return err
			}
		}
		return useShim(ctx, logf, runtime)
	}
	// No engine answers: install one if there is none, then start it.
	if _, err := exec.LookPath("dockerd"); err != nil {
		if err := hostdeps.Ensure(ctx, logf, hostdeps.KindHost); err != nil {
			return err
		}
		if _, err := exec.LookPath("dockerd"); err != nil {
			return fmt.Errorf("no dockerd on PATH after installing %s: %w", strings.Join(hostdeps.Packages[hostdeps.KindHost], " "), err)
		}
		if st.Owned == "" {
			st.Owned = "ectest installed docker.io"
		}
	} else if _, exists, err := readConfig(DaemonJSON); err != nil {
		return err
	} else if !exists && st.Owned == "" {
		st.Owned = "no " + DaemonJSON + " and no running dockerd before ectest"
	}
	if st.Owned != "" || consent {
		if err := ensureWrapper(&st, runtime, logf); err != nil {
			return err
		}
		if _, err := configure(&st, DaemonJSON, Wants{Bridge: st.Owned != "", Runtime: runtime != ""}, logf); err != nil {
			return err
		}
	} else if runtime != "" && !configHasRuntime(DaemonJSON, runtime) {
		return refusal(missing, DaemonJSON, false)
	}
	if !st.Started {
		st.Started = true
		if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_forward"); err == nil {
			st.IPForward = strings.TrimSpace(string(b))
		}
	}
	if err := saveState(st); err != nil {
		return fmt.Errorf("%s: %w", StateFile, err)
	}
	if err := startDockerd(ctx, logf); err != nil {
		return err
	}
	if runtime != "" {
		if err := waitRuntime(ctx, runtime, 10*time.Second); err != nil {
			return fmt.Errorf("dockerd started without the runtime %s (%v): see %s", runtime, err, DaemonJSON)
		}
	}
	return useShim(ctx, logf, runtime)
}

// refusal is the one-line error for an engine ectest may not change.
func refusal(missing []string, cfg string, running bool) error {
	how := ""
	if running {
		how = " (dockerd reloads it on SIGHUP: running containers keep running)"
	}
	return fmt.Errorf("this host's capability bounding set lacks %s, so kind's privileged nodes need the OCI runtime %s, which this Docker engine (not set up by ectest) does not have; ectest changes it only when asked: rerun as root with %s=1 to add %s to %s as an extra runtime, the default runtime unchanged%s (docs/host.md), or add \"runtimes\": {%q: {\"path\": %q}} yourself",
		strings.Join(missing, ", "), WrapperRuntime, ConfigureEnv, WrapperRuntime, cfg, how, WrapperRuntime, WrapperPath)
}

// configure merges w into the daemon.json at path, recording what it added.
func configure(st *State, path string, w Wants, logf func(string, ...any)) (bool, error) {
	existing, exists, err := readConfig(path)
	if err != nil {
		return false, err
	}
	out, added, err := MergeDaemonConfig(existing, w)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if len(added) == 0 {
		return false, nil
	}
	if st.ConfigFile == "" {
		st.ConfigFile, st.ConfigExisted = path, exists
	}
	st.addRecorded(added)
	// Recorded before the write: an interrupted run still leaves its undo.
	if err := saveState(*st); err != nil {
		return false, fmt.Errorf("%s: %w", StateFile, err)
	}
	if err := writeConfig(path, out); err != nil {
		return false, err
	}
	logf("added %s to %s (kept every other setting; undo: docs/host.md)", strings.Join(added, ", "), path)
	return true, nil
}

// ensureWrapper installs the wrapper when runtime names it and it is missing.
func ensureWrapper(st *State, runtime string, logf func(string, ...any)) error {
	if runtime == "" {
		return nil
	}
	if _, err := os.Stat(WrapperPath); err == nil {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is missing and only root can install it", WrapperPath)
	}
	logf("installing %s, the OCI runtime %s that drops the capabilities this host's bounding set lacks", WrapperPath, WrapperRuntime)
	st.Wrapper = true
	if err := saveState(*st); err != nil {
		return fmt.Errorf("%s: %w", StateFile, err)
	}
	if err := installSelf(WrapperPath); err != nil {
		return fmt.Errorf("install %s: %w", WrapperPath, err)
	}
	return nil
}

func configHasRuntime(path, runtime string) bool {
	b, _, err := readConfig(path)
	if err != nil {
		return false
	}
	var cfg struct{ Runtimes map[string]json.RawMessage }
	return json.Unmarshal(b, &cfg) == nil && cfg.Runtimes[runtime] != nil
}

func waitRuntime(ctx context.Context, runtime string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		inf, err := dockerInfo(ctx)
		if err == nil && inf.Runtimes[runtime] != nil {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("docker info lists no runtime %s", runtime)
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// configFileArg is dockerd's --config-file in its arguments, else DaemonJSON.
func configFileArg(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--config-file="); ok {
			return v
		}
		if a == "--config-file" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return DaemonJSON
}

type info struct {
	DefaultRuntime string
	ServerVersion  string
	Runtimes       map[string]json.RawMessage
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
	_ = os.Remove(tmp)
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|oNoFollow, 0o755)
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
