package kind

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// OCIFault makes the node's containerd run the OCI runtime wrapper
// (fixtures/ocifault, a SELF-TEST tool) as its runc, with one fault: the
// second fault injector, below the CRI. Binary dispatches the wrapper by
// argv[0] (ectest-mutation; never a suite binary). It is copied, with the
// wrapper's configuration and fault, into the cluster's state directory,
// which the node mounts at NodeOCIFaultDir, and the node's containerd is
// patched at creation to run it for the runc handler, so one node image
// serves every fault. A cluster with an OCI fault also runs the CRI proxy
// (Options.CRIProxy, forwarding unchanged), whose runtime version marker
// makes every report made on the cluster say SELF-TEST.
type OCIFault struct {
	Fault  string
	Binary string
	// Busybox is a statically linked busybox of this host's, staged
	// beside the wrapper as "busybox" for the faults that run a program
	// of their own inside a container (oci-target-behind-init): a node
	// image has none. "": none staged.
	Busybox string
}

// The wrapper's files, as fixtures/ocifault reads them next to its argv[0]
// (ocifault.Name, ConfigFile, FaultFile and Config; kind does not import
// the fixture, which suites must not carry: a test checks they agree).
const (
	// NodeOCIFaultDir is where the node mounts the wrapper's directory.
	NodeOCIFaultDir    = "/opt/ectest/ocifault"
	ociFaultProgram    = "ectest-ocifault"
	ociFaultConfigFile = ociFaultProgram + ".json"
	ociFaultFaultFile  = ociFaultProgram + ".fault"
	// ociFaultRunc is the real runc, looked up on the PATH of the node's
	// containerd (kind's node images keep it in /usr/local/sbin, Debian's
	// package in /usr/sbin).
	ociFaultRunc = "runc"
)

// ociFaultConfig is the wrapper's configuration (ocifault.Config).
type ociFaultConfig struct {
	Runc     string `json:"runc"`
	StateDir string `json:"stateDir"`
}

// stageOCIFault copies the wrapper's program into dir with its
// configuration (paths inside the node) and fault; the node mounts dir,
// writable (the wrapper keeps the processes it froze in state/), at
// NodeOCIFaultDir.
func stageOCIFault(dir string, f OCIFault) (string, error) {
	if f.Fault == "" || f.Binary == "" {
		return "", errors.New("the OCI runtime wrapper needs a fault and the binary that runs it")
	}
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o755); err != nil {
		return "", err
	}
	data, err := os.ReadFile(f.Binary)
	if err != nil {
		return "", fmt.Errorf("the OCI runtime wrapper's program: %w", err)
	}
	prog := filepath.Join(dir, ociFaultProgram)
	_ = os.Remove(prog)
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		return "", err
	}
	if f.Busybox != "" {
		bb, err := os.ReadFile(f.Busybox)
		if err != nil {
			return "", fmt.Errorf("the busybox staged for the OCI runtime wrapper: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "busybox"), bb, 0o755); err != nil {
			return "", err
		}
	}
	cfg, _ := json.Marshal(ociFaultConfig{Runc: ociFaultRunc, StateDir: NodeOCIFaultDir + "/state"})
	if err := os.WriteFile(filepath.Join(dir, ociFaultConfigFile), cfg, 0o644); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, ociFaultFaultFile), []byte(f.Fault+"\n"), 0o644)
}

// ociFaultContainerdPatch points the runc handler of the node's containerd
// at the wrapper. The node images' containerd configuration is format
// version 2 (which containerd 2 migrates when it loads it), so the patch
// is too; kind merges it into /etc/containerd/config.toml and restarts
// containerd before kubeadm runs, keeping the handler's other options
// (SystemdCgroup).
func ociFaultContainerdPatch() string {
	return `[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  BinaryName = "` + NodeOCIFaultDir + "/" + ociFaultProgram + `"
`
}

// checkOCIFault makes sure the node's containerd took the patch: its
// configuration, as it loads it (containerd config dump: containerd 2
// migrates format 2 there), names the wrapper as a runtime's binary. A
// patch in a format the node's containerd does not read would otherwise
// leave a cluster without the fault, silently.
func (c *Cluster) checkOCIFault() error {
	nodes, err := c.provider.ListNodes(c.Name)
	if err != nil {
		return err
	}
	wrapper := NodeOCIFaultDir + "/" + ociFaultProgram
	for _, n := range nodes {
		var out strings.Builder
		cmd := n.Command("containerd", "config", "dump")
		cmd.SetStdout(&out)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("node %s: containerd config dump: %w", n, err)
		}
		found := false
		for _, l := range strings.Split(out.String(), "\n") {
			l = strings.TrimSpace(l)
			found = found || (strings.HasPrefix(l, "BinaryName") && strings.Contains(l, wrapper))
		}
		if !found {
			return fmt.Errorf("node %s: containerd does not run the OCI runtime wrapper %s as runc's binary (the containerdConfigPatches entry was not taken)", n, wrapper)
		}
	}
	return nil
}
