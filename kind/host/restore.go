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

// Restore undoes what StateFile records Prepare did: it takes ectest's
// keys out of daemon.json (only while they hold ectest's values), stops
// the dockerd ectest started when no container runs on it (reloads it
// otherwise), puts net.ipv4.ip_forward back, and removes the wrapper, the
// docker script and the state. It refuses while a container uses the
// wrapper runtime (delete kind clusters first).
func Restore(ctx context.Context, logf func(string, ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if os.Geteuid() != 0 {
		return errors.New("host-restore needs root")
	}
	st, err := loadState()
	if err != nil {
		return fmt.Errorf("%s: %w", StateFile, err)
	}
	if dir, err := ShimDir(); err == nil {
		_ = os.RemoveAll(dir)
	}
	if _, err := os.Stat(StateFile); errors.Is(err, os.ErrNotExist) {
		logf("nothing recorded in %s: ectest changed no Docker engine here (changes made before it kept that record: docs/host.md)", StateFile)
		return nil
	}
	_, infoErr := dockerInfo(ctx)
	running := infoErr == nil
	if running {
		users, err := containersWithRuntime(ctx, WrapperRuntime)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return fmt.Errorf("containers %s use the runtime %s: delete them first (ectest-kind down -name NAME for a kind cluster)", strings.Join(users, ", "), WrapperRuntime)
		}
	}
	n, stop := 0, false
	if running {
		if n, err = runningContainers(ctx); err != nil {
			return err
		}
		stop = st.Started && n == 0
	}
	if st.ConfigFile != "" && len(st.Added) > 0 {
		data, exists, err := readConfig(st.ConfigFile)
		if err != nil {
			return err
		}
		if exists {
			out, empty, err := UnmergeDaemonConfig(data, st.Added)
			if err != nil {
				return fmt.Errorf("%s: %w", st.ConfigFile, err)
			}
			if running && !stop && hasKey(data, "runtimes") && !hasKey(out, "runtimes") {
				// Docker 20.10 reloads runtimes only from a file that has
				// the key: reload with it empty once, then take it out.
				if err := writeConfig(st.ConfigFile, withEmptyRuntimes(out)); err != nil {
					return err
				}
				if err := reloadDockerd(ctx); err != nil {
					return err
				}
				_ = waitNoRuntime(ctx, WrapperRuntime)
			}
			switch {
			case empty && !st.ConfigExisted:
				if err := os.Remove(st.ConfigFile); err != nil {
					return err
				}
				logf("removed %s (ectest wrote it; nothing else was in it)", st.ConfigFile)
			case string(out) != string(data):
				if err := writeConfig(st.ConfigFile, out); err != nil {
					return err
				}
				logf("took %s back out of %s", strings.Join(st.Added, ", "), st.ConfigFile)
			}
		}
	}
	switch {
	case stop:
		if err := stopDockerd(ctx, logf); err != nil {
			return err
		}
		running = false
		logf("stopped dockerd, which ectest had started")
	case running:
		if err := reloadDockerd(ctx); err != nil {
			return err
		}
		logf("dockerd reloaded, left running (%d containers run on it)", n)
	}
	if st.Started && st.IPForward == "0" && !running {
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("0\n"), 0o644); err != nil {
			return fmt.Errorf("net.ipv4.ip_forward back to 0: %w", err)
		}
		logf("net.ipv4.ip_forward back to 0, as before dockerd started")
	}
	if st.Wrapper {
		if err := os.Remove(WrapperPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		_ = os.Remove(filepath.Dir(WrapperPath))
		logf("removed %s", WrapperPath)
	}
	if st.Started {
		_ = os.Remove(dockerdLog)
	}
	if err := os.Remove(StateFile); err != nil {
		return err
	}
	_ = os.Remove(filepath.Dir(StateFile))
	_ = os.Remove(filepath.Dir(filepath.Dir(StateFile))) // /var/lib/ectest, when empty
	if strings.HasPrefix(st.Owned, "ectest installed") {
		logf("docker.io stays installed: apt-get remove docker.io to remove it")
	}
	return nil
}

func hasKey(cfg []byte, key string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(cfg, &m) == nil && m[key] != nil
}

// withEmptyRuntimes is cfg with "runtimes": {}.
func withEmptyRuntimes(cfg []byte) []byte {
	m := map[string]json.RawMessage{}
	_ = json.Unmarshal(cfg, &m)
	m["runtimes"] = json.RawMessage("{}")
	out, _ := json.MarshalIndent(m, "", "  ")
	return append(out, '\n')
}

func waitNoRuntime(ctx context.Context, runtime string) error {
	for i := 0; i < 40; i++ {
		if inf, err := dockerInfo(ctx); err == nil && inf.Runtimes[runtime] == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("dockerd still lists the runtime %s", runtime)
}

// containersWithRuntime names the containers, in any state, that run on runtime.
func containersWithRuntime(ctx context.Context, runtime string) ([]string, error) {
	ids, err := exec.CommandContext(ctx, "docker", "ps", "-aq").Output()
	if err != nil {
		return nil, fmt.Errorf("docker ps: %w", err)
	}
	if len(strings.Fields(string(ids))) == 0 {
		return nil, nil
	}
	args := append([]string{"inspect", "--format", "{{.Name}} {{.HostConfig.Runtime}}"}, strings.Fields(string(ids))...)
	out, err := exec.CommandContext(ctx, "docker", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("docker inspect: %w", err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == runtime {
			names = append(names, strings.TrimPrefix(f[0], "/"))
		}
	}
	return names, nil
}

func runningContainers(ctx context.Context) (int, error) {
	out, err := exec.CommandContext(ctx, "docker", "ps", "-q").Output()
	if err != nil {
		return 0, fmt.Errorf("docker ps: %w", err)
	}
	return len(strings.Fields(string(out))), nil
}
