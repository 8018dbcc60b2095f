package host

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/ectest/ectest/internal/flock"
)

// StateFile records what ectest did to the Docker engine, for Prepare (may
// it configure the engine?) and Restore (what to undo). Root-only.
var StateFile = "/var/lib/ectest/host/docker.json"

// State is StateFile's content.
type State struct {
	// Owned says why the engine is ectest's to configure ("" when it is
	// not): ectest installed docker.io, or found no daemon.json and no
	// running dockerd.
	Owned string `json:"owned,omitempty"`
	// ConfigFile is the daemon.json ectest changed; ConfigExisted says it
	// existed before; Added lists what ectest added (MergeDaemonConfig).
	ConfigFile    string   `json:"configFile,omitempty"`
	ConfigExisted bool     `json:"configExisted,omitempty"`
	Added         []string `json:"added,omitempty"`
	// Started: ectest started dockerd; IPForward is
	// net.ipv4.ip_forward before that ("0" or "1"), which dockerd sets to 1.
	Started   bool   `json:"started,omitempty"`
	IPForward string `json:"ipForward,omitempty"`
	// Wrapper: ectest installed WrapperPath.
	Wrapper bool `json:"wrapper,omitempty"`
}

func loadState() (State, error) {
	var s State
	b, err := os.ReadFile(StateFile)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func saveState(s State) error {
	if err := flock.PrivateDir(filepath.Dir(StateFile)); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(StateFile, append(b, '\n'), 0o600)
}

// addRecorded appends to s.Added what is not there yet.
func (s *State) addRecorded(added []string) {
	for _, a := range added {
		if !contains(s.Added, a) {
			s.Added = append(s.Added, a)
		}
	}
}
