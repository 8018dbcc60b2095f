package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// NodeOS is the OS a CRI runtime runs containers for, and what said so.
type NodeOS struct {
	OS       string `json:"os"`
	Evidence string `json:"evidence"`
}

// DetectOS tells which OS the runtime at endpoint runs containers for. A
// named pipe (npipe://) is a Windows endpoint (WIN-5). Otherwise the
// runtime's own answers decide: containerd's verbose Status carries its
// CRI configuration as JSON under the info key "config", whose directories
// are Windows paths on Windows (containerdRootDir
// "C:\ProgramData\containerd\root", rootDir, stateDir) and absolute Unix
// paths on Linux. A runtime that says neither runs containers for the
// suite's own OS: a CRI endpoint is local to the node.
func DetectOS(ctx context.Context, endpoint string) (NodeOS, error) {
	ep, err := ParseEndpoint(endpoint)
	if err != nil {
		return NodeOS{}, err
	}
	if ep.Scheme == "npipe" {
		return NodeOS{OS: "windows", Evidence: "the CRI endpoint is a named pipe (" + ep.Raw + ")"}, nil
	}
	conn, err := Dial(endpoint)
	if err != nil {
		return NodeOS{}, err
	}
	defer conn.Close()
	fallback := NodeOS{OS: runtime.GOOS}
	st, err := conn.Runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: true})
	if err != nil {
		fallback.Evidence = fmt.Sprintf("verbose Status failed (%s); the suite's own OS, %s, since a CRI endpoint is local to its node", StatusText(err), runtime.GOOS)
		return fallback, nil
	}
	if n, ok := OSFromStatusInfo(st.GetInfo()); ok {
		return n, nil
	}
	fallback.Evidence = fmt.Sprintf("neither the endpoint nor the verbose Status answer names an OS; the suite's own OS, %s, since a CRI endpoint is local to its node", runtime.GOOS)
	return fallback, nil
}

var (
	windowsPath = regexp.MustCompile(`^([A-Za-z]:\\|\\\\)`)
	unixPath    = regexp.MustCompile(`^/`)
)

// configDirs are the keys of containerd's CRI configuration (as its verbose
// Status reports it, containerd 1.6 to 2.x) that hold host paths.
var configDirs = []string{"containerdRootDir", "rootDir", "stateDir", "containerdEndpoint"}

// OSFromStatusInfo reads the OS from a verbose Status answer's info: the
// host paths in containerd's "config" JSON. ok is false when the info says
// nothing either way.
func OSFromStatusInfo(info map[string]string) (n NodeOS, ok bool) {
	raw, found := info["config"]
	if !found {
		return NodeOS{}, false
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return NodeOS{}, false
	}
	var win, unix []string
	for _, k := range configDirs {
		v, _ := cfg[k].(string)
		switch {
		case windowsPath.MatchString(v):
			win = append(win, fmt.Sprintf("%s %q", k, v))
		case unixPath.MatchString(v):
			unix = append(unix, fmt.Sprintf("%s %q", k, v))
		}
	}
	sort.Strings(win)
	sort.Strings(unix)
	switch {
	case len(win) > 0 && len(unix) == 0:
		return NodeOS{OS: "windows", Evidence: fmt.Sprintf("the runtime's verbose Status reports Windows paths in its config: %v", win)}, true
	case len(unix) > 0 && len(win) == 0:
		return NodeOS{OS: "linux", Evidence: fmt.Sprintf("the runtime's verbose Status reports Unix paths in its config: %v", unix)}, true
	}
	return NodeOS{}, false
}

// ServedEndpoint is the address the runtime says it serves its API on, from
// a verbose Status answer's info: containerd's CRI "config" JSON carries its
// own gRPC address as containerdEndpoint (\\.\pipe\containerd-containerd by
// default on Windows). ok is false when the answer names none.
func ServedEndpoint(info map[string]string) (address string, ok bool) {
	var cfg map[string]any
	if err := json.Unmarshal([]byte(info["config"]), &cfg); err != nil {
		return "", false
	}
	address, _ = cfg["containerdEndpoint"].(string)
	return address, address != ""
}

// IsNamedPipe reports whether address names a Windows named pipe: a path
// \\.\pipe\<name> (or \\<server>\pipe\<name>), in either slash, or an
// npipe:// endpoint (WIN-5).
func IsNamedPipe(address string) bool {
	if ep, err := ParseEndpoint(address); err == nil && ep.Scheme == "npipe" {
		return true
	}
	return namedPipePath.MatchString(strings.ReplaceAll(address, "/", `\`))
}

var namedPipePath = regexp.MustCompile(`(?i)^\\\\[^\\]+\\pipe\\[^\\]+`)

// ImagePlatform reads an image's platform from a verbose ImageStatus
// answer's info: containerd reports the image's config as "imageSpec"
// inside the JSON under "info" (os, os.version, architecture). ok is false
// when the answer carries no config.
func ImagePlatform(info map[string]string) (p ImagePlatformInfo, ok bool) {
	var v struct {
		ImageSpec *ImagePlatformInfo `json:"imageSpec"`
	}
	if err := json.Unmarshal([]byte(info["info"]), &v); err != nil || v.ImageSpec == nil {
		return ImagePlatformInfo{}, false
	}
	return *v.ImageSpec, true
}

// ImagePlatformInfo is the platform part of an OCI image config.
type ImagePlatformInfo struct {
	OS           string `json:"os"`
	OSVersion    string `json:"os.version,omitempty"`
	Architecture string `json:"architecture"`
}
