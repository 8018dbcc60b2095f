package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ectest/ectest/internal/atomicfile"
)

// Wants are the daemon.json settings ectest may add.
type Wants struct {
	// Bridge: the default bridge in the network-test range (bip), only on
	// an engine ectest owns.
	Bridge bool
	// Runtime: WrapperRuntime as an additional named runtime.
	Runtime bool
}

// Keys recorded in State.Added for what MergeDaemonConfig added.
const (
	addedBip      = "bip"
	addedRuntimes = "runtimes"                   // the whole key was absent
	addedRuntime  = "runtimes." + WrapperRuntime // the entry only
)

// MergeDaemonConfig adds what w asks for to a daemon.json, never changing
// a value already there. It returns existing itself when nothing is added.
func MergeDaemonConfig(existing []byte, w Wants) (out []byte, added []string, err error) {
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := json.Unmarshal(existing, &cfg); err != nil {
			return nil, nil, err
		}
	}
	if w.Bridge && cfg["bip"] == nil && cfg["bridge"] == nil {
		cfg["bip"] = mustJSON(bridgeIP)
		added = append(added, addedBip)
	}
	if w.Runtime {
		runtimes := map[string]json.RawMessage{}
		if raw, ok := cfg["runtimes"]; ok {
			if err := json.Unmarshal(raw, &runtimes); err != nil {
				return nil, nil, fmt.Errorf("runtimes: %w", err)
			}
		} else {
			added = append(added, addedRuntimes)
		}
		if runtimes[WrapperRuntime] == nil {
			runtimes[WrapperRuntime] = wrapperEntry()
			cfg["runtimes"] = mustJSON(runtimes)
			added = append(added, addedRuntime)
		}
	}
	if len(added) == 0 {
		return existing, nil, nil
	}
	out, err = json.MarshalIndent(cfg, "", "  ")
	return append(out, '\n'), added, err
}

// UnmergeDaemonConfig takes out what MergeDaemonConfig added (added), each
// only while it still holds ectest's value. empty says nothing is left.
func UnmergeDaemonConfig(existing []byte, added []string) (out []byte, empty bool, err error) {
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(existing)) > 0 {
		if err := json.Unmarshal(existing, &cfg); err != nil {
			return nil, false, err
		}
	}
	changed := false
	for _, a := range added {
		switch a {
		case addedBip:
			var v string
			if json.Unmarshal(cfg["bip"], &v) == nil && v == bridgeIP {
				delete(cfg, "bip")
				changed = true
			}
		case addedRuntime:
			runtimes := map[string]json.RawMessage{}
			if json.Unmarshal(cfg["runtimes"], &runtimes) != nil || !jsonEqual(runtimes[WrapperRuntime], wrapperEntry()) {
				continue
			}
			delete(runtimes, WrapperRuntime)
			changed = true
			if len(runtimes) == 0 && contains(added, addedRuntimes) {
				delete(cfg, "runtimes")
			} else {
				cfg["runtimes"] = mustJSON(runtimes)
			}
		}
	}
	if !changed {
		return existing, len(cfg) == 0, nil
	}
	out, err = json.MarshalIndent(cfg, "", "  ")
	return append(out, '\n'), len(cfg) == 0, err
}

func wrapperEntry() json.RawMessage { return mustJSON(map[string]string{"path": WrapperPath}) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && string(mustJSON(x)) == string(mustJSON(y))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeConfig replaces path's content atomically, keeping its mode, and
// writes through a link to its target rather than replacing the link.
func writeConfig(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode) // the umask may have narrowed it
}

// readConfig returns path's content; exists is false when there is none.
func readConfig(path string) (data []byte, exists bool, err error) {
	data, err = os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}
