package catalog

import (
	"strconv"
	"strings"
)

// Handler is an OCI runtime handler: a CRI runtime handler name and what
// containerd runs its sandboxes with (a shim, an OCI runtime binary, the
// shim's options).
type Handler struct {
	// Name is the CRI runtime handler (containerd's runtimes.<Name> table,
	// a RuntimeClass's handler).
	Name string
	// Binary is the OCI runtime program (runc, runsc, crun).
	Binary string
	// HostBinary: the OCI runtime is a host package's, found on PATH, never
	// one of the runtime's builds (Debian's crun).
	HostBinary bool
	// RuntimeType is containerd's runtime_type, which names the shim:
	// io.containerd.runc.v2 runs containerd-shim-runc-v2.
	RuntimeType string
	// StateDir is the OCI runtime's state directory in an embedded run's
	// directory (its --root).
	StateDir string
	// Options are the shim's options (runtimes.<Name>.options), in order.
	Options []Option
	// ShimConfig, when set, is a file of its own the shim reads (gVisor's
	// runsc.toml), next to containerd's configuration.
	ShimConfig *ShimConfig
}

// Option is one setting: Key = a literal TOML value, or a value of the
// place the handler runs in (From).
type Option struct {
	Key string
	// Literal is the TOML value as written: false, "io.containerd.runsc.v1.options".
	Literal string
	// From takes the value from Paths instead; an option whose path is
	// empty is left out.
	From Source
}

// Source is where an option's value comes from.
type Source int

// The sources of an option's value.
const (
	FromLiteral       Source = iota
	FromBinary               // Paths.Binary, a string
	FromRoot                 // Paths.Root, a string
	FromShimConfig           // Paths.ShimConfig, a string
	FromSystemdCgroup        // Paths.SystemdCgroup, a boolean
)

// ShimConfig is a shim's own configuration file.
type ShimConfig struct {
	// File is its name, in the directory of containerd's configuration.
	File    string
	Options []Option
}

// Paths are where a handler's files are in one place it runs in (an
// embedded run's directory, a kind node).
type Paths struct {
	// Binary is the OCI runtime the shim runs.
	Binary string
	// Root is the OCI runtime's state directory.
	Root string
	// ShimConfig is the path of the handler's ShimConfig file.
	ShimConfig string
	// SystemdCgroup: the runtime manages cgroups through systemd (kind's
	// nodes do; the embedded runtime does not).
	SystemdCgroup bool
}

// Handlers known to the catalog. A runtime reusing one of them needs no
// code: the embedded runtime and the node image configure them from here.
var (
	// Runc is the default handler: runc through containerd's runc shim.
	Runc = Handler{Name: "runc", Binary: "runc", RuntimeType: "io.containerd.runc.v2", StateDir: "runc", Options: runcOptions}
	// HostRunc is the host's runc (Debian's, on PATH) through the runc
	// shim: cri-dockerd's Docker engine runs it (through the wrappers of
	// runtimes/embedded), never a build of the runtime's.
	HostRunc = Handler{Name: "runc", Binary: "runc", HostBinary: true, RuntimeType: "io.containerd.runc.v2", StateDir: "runc", Options: runcOptions}
	// Crun is Debian's crun through the runc shim (the embedded runtime
	// runs it through its wrapper ectest-crun, see runtimes/embedded/crunwrapper).
	Crun = Handler{Name: "crun", Binary: "crun", HostBinary: true, RuntimeType: "io.containerd.runc.v2", StateDir: "crun", Options: runcOptions}
	// Runsc is gVisor: containerd runs its sandboxes through gVisor's
	// shim, which reads runsc.toml (runsc's binary and root).
	Runsc = Handler{Name: "runsc", Binary: "runsc", RuntimeType: "io.containerd.runsc.v1", StateDir: "runsc-root",
		Options:    []Option{{Key: "TypeUrl", Literal: `"io.containerd.runsc.v1.options"`}, {Key: "ConfigPath", From: FromShimConfig}},
		ShimConfig: &ShimConfig{File: "runsc.toml", Options: []Option{{Key: "binary_name", From: FromBinary}, {Key: "root", From: FromRoot}}}}
)

// runcOptions are the runc shim's: the OCI runtime binary, its state
// directory, and the cgroup driver.
var runcOptions = []Option{{Key: "BinaryName", From: FromBinary}, {Key: "Root", From: FromRoot}, {Key: "SystemdCgroup", From: FromSystemdCgroup}}

// value renders the option's value in p ("" to leave it out).
func (o Option) value(p Paths) string {
	str := func(s string) string {
		if s == "" {
			return ""
		}
		return strconv.Quote(s)
	}
	switch o.From {
	case FromBinary:
		return str(p.Binary)
	case FromRoot:
		return str(p.Root)
	case FromShimConfig:
		return str(p.ShimConfig)
	case FromSystemdCgroup:
		return strconv.FormatBool(p.SystemdCgroup)
	}
	return o.Literal
}

func writeOptions(b *strings.Builder, opts []Option, p Paths, indent string) {
	for _, o := range opts {
		if v := o.value(p); v != "" {
			b.WriteString(indent + o.Key + " = " + v + "\n")
		}
	}
}

// ContainerdRuntimesTable is the TOML table that holds containerd's
// runtime handlers in a configuration of format version (2 for containerd
// 1.x, 3 for 2.x).
func ContainerdRuntimesTable(version int) string {
	if version == 3 {
		return "plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes"
	}
	return `plugins."io.containerd.grpc.v1.cri".containerd.runtimes`
}

// ContainerdTOML is the handler's table in a containerd configuration of
// format version (2 or 3), each line indented by indent, with the paths of
// the place it runs in.
func (h Handler) ContainerdTOML(version int, p Paths, indent string) string {
	table := ContainerdRuntimesTable(version) + "." + h.Name
	var b strings.Builder
	b.WriteString(indent + "[" + table + "]\n")
	b.WriteString(indent + "  runtime_type = " + strconv.Quote(h.RuntimeType) + "\n")
	if len(h.Options) > 0 {
		b.WriteString(indent + "  [" + table + ".options]\n")
		writeOptions(&b, h.Options, p, indent+"    ")
	}
	return b.String()
}

// ShimConfigTOML is the content of the handler's ShimConfig file ("" when
// it has none).
func (h Handler) ShimConfigTOML(p Paths) string {
	if h.ShimConfig == nil {
		return ""
	}
	var b strings.Builder
	writeOptions(&b, h.ShimConfig.Options, p, "")
	return b.String()
}
