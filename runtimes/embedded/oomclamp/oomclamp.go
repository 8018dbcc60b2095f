// Package oomclamp is ectest-runc-oomclamp, the OCI runtime binary the
// embedded runtime cri-o gives its runc handler: on hosts whose capability
// bounding set lacks CAP_SYS_RESOURCE (these VMs'), no process may lower
// its oom_score_adj, and CRI-O v1.36.3 asks for -998 for every infra
// container (server/sandbox_run_linux.go
// setupSandboxInfraContainerResources, PodInfraOOMAdj), so runc fails
// every sandbox that has one ("nsexec: failed to update
// /proc/self/oom_score_adj: Permission denied"). CRI-O has no setting like
// containerd's restrict_oom_score_adj; the wrapper does what that setting
// does: for create and run it raises the bundle's process.oomScoreAdj to
// its own (inherited from conmon) when it asks for less, and changes
// nothing else but the capabilities no process here can hold, which it
// removes from every set (config.json for create and run, the --process file
// for exec: a privileged container asks for all of them, see Main); then it
// execs the real runc, named by the file Real(argv[0]).
// Where CAP_SYS_RESOURCE is in the bounding set it changes nothing.
//
// It is one of the programs every ectest binary carries
// (fixtures/programs): the embedded runtime links Name, in its run
// directory, to the running suite binary.
package oomclamp

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/ectest/ectest/kind/host"
)

// Name is the program's name (argv[0]'s base name).
const Name = "ectest-runc-oomclamp"

// Real is the file, next to the wrapper, naming the real runc.
func Real(wrapper string) string { return wrapper + ".real" }

// Main is the wrapper's main.
func Main(args []string) int {
	real, err := os.ReadFile(Real(os.Args[0]))
	if err != nil {
		return fail(err)
	}
	if path, bundle, ok := host.RuncFiles(args); ok {
		missing, err := host.MissingHere()
		if err != nil {
			return fail(err)
		}
		// A privileged container gets every capability CRI-O knows
		// (unlike containerd, which grants its own), and runc cannot give
		// one the bounding set lacks ("unable to apply caps"): drop those,
		// from config.json (create, run) and exec's --process file, as
		// kind/host's wrapper does for dockerd.
		if len(missing) > 0 {
			drop := map[string]bool{}
			for _, c := range missing {
				drop[c] = true
			}
			if err := host.RewriteFile(path, bundle, drop); err != nil {
				return fail(err)
			}
		}
		if bundle && slices.Contains(missing, "CAP_SYS_RESOURCE") {
			own, err := ownOOMScoreAdj()
			if err != nil {
				return fail(err)
			}
			if err := Clamp(path, own); err != nil {
				return fail(err)
			}
		}
	}
	bin := strings.TrimSpace(string(real))
	return fail(syscall.Exec(bin, append([]string{bin}, args...), os.Environ()))
}

func ownOOMScoreAdj() (int, error) {
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Clamp raises the bundle configuration's process.oomScoreAdj to min
// when it is lower; a configuration without one is left as it is.
func Clamp(path string, min int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var process map[string]json.RawMessage
	if raw, ok := doc["process"]; !ok || json.Unmarshal(raw, &process) != nil {
		return nil
	}
	raw, ok := process["oomScoreAdj"]
	if !ok {
		return nil
	}
	var adj int
	if err := json.Unmarshal(raw, &adj); err != nil {
		return fmt.Errorf("%s: process.oomScoreAdj: %w", path, err)
	}
	if adj >= min {
		return nil
	}
	process["oomScoreAdj"], _ = json.Marshal(min)
	if doc["process"], err = json.Marshal(process); err != nil {
		return err
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, Name+":", err)
	return 1
}
