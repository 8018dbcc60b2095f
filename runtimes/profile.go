package runtimes

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"sigs.k8s.io/yaml"
)

//go:embed profiles/*.yaml
var builtin embed.FS

// Profile is a runtime's declaration of its capabilities.
type Profile struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// OS is the node OS the runtime runs containers for: linux or windows.
	OS string `json:"os"`
	// Match selects the profile for -profile=auto from the CRI Version answer.
	Match Match `json:"match,omitempty"`
	// Capabilities declares every capability (see capability.All).
	Capabilities map[capability.Name]capability.Support `json:"capabilities"`
}

// Match is compared with the CRI VersionResponse and the runtime handler
// sandboxes run with.
type Match struct {
	RuntimeName string `json:"runtimeName,omitempty"`
	// RuntimeHandler, when set, must be the run's handler (runsc for
	// gVisor); a profile without one matches the default handler only.
	RuntimeHandler string `json:"runtimeHandler,omitempty"`
	// WindowsRelease (windows profiles: ltsc2019, ltsc2022, ltsc2025) is
	// the Windows Server release the profile was written for; it serves
	// nodes from that release's OS build up to the next release's (see
	// Detect).
	WindowsRelease string `json:"windowsRelease,omitempty"`
}

// Parse reads a profile and checks that it declares every known capability,
// with known names and support values only.
func Parse(data []byte, source string) (*Profile, error) {
	var raw struct {
		Profile      `json:",inline"`
		Capabilities map[string]string `json:"capabilities"`
	}
	if err := yaml.UnmarshalStrict(data, &raw); err != nil {
		return nil, fmt.Errorf("profile %s: malformed: %v", source, err)
	}
	p := raw.Profile
	if p.Name == "" {
		return nil, fmt.Errorf("profile %s: no name", source)
	}
	if p.OS != "linux" && p.OS != "windows" {
		return nil, fmt.Errorf("profile %s: os must be linux or windows, not %q", source, p.OS)
	}
	p.Capabilities = map[capability.Name]capability.Support{}
	for n, s := range raw.Capabilities {
		if _, err := capability.Lookup(n); err != nil {
			return nil, fmt.Errorf("profile %s: %v", source, err)
		}
		sup, err := capability.ParseSupport(s)
		if err != nil {
			return nil, fmt.Errorf("profile %s: capability %s: %v", source, n, err)
		}
		p.Capabilities[capability.Name(n)] = sup
	}
	var missing []string
	for _, d := range capability.All() {
		if _, ok := p.Capabilities[d.Name]; !ok {
			missing = append(missing, string(d.Name))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("profile %s: does not declare %s", source, strings.Join(missing, ", "))
	}
	if err := checkDeclarations(&p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", source, err)
	}
	if r := p.Match.WindowsRelease; r != "" {
		if p.OS != "windows" {
			return nil, fmt.Errorf("profile %s: match.windowsRelease is for windows profiles", source)
		}
		if _, err := WindowsReleaseBuild(r); err != nil {
			return nil, fmt.Errorf("profile %s: match.windowsRelease: %w", source, err)
		}
	}
	return &p, nil
}

// checkDeclarations refuses a profile that would excuse what no runtime
// for its OS may lack: a capability mandatory there declared anything but
// supported, or, on Linux, any capability declared not-applicable (every
// namespace kind exists there; a runtime that lacks one declares it
// unsupported and must then refuse it with an error). It also refuses a
// profile claiming what its OS has no such thing for (capability.AbsentOn:
// on Windows, PID and IPC namespaces, target_id and what depends on them):
// those are declared not-applicable, and what the runtime does instead is
// recorded as "not supported on this OS".
func checkDeclarations(p *Profile) error {
	var bad []string
	for _, d := range capability.All() {
		sup := p.Capabilities[d.Name]
		switch {
		case d.MandatoryOnOS(p.OS) && sup != capability.Supported:
			why := "every runtime must support it"
			if d.Required {
				why = "it is required of every runtime"
			}
			bad = append(bad, fmt.Sprintf("%s is declared %s, but on %s %s (%s)", d.Name, sup, p.OS, why, strings.Join(d.Requirements, ", ")))
		case d.AbsentOnOS(p.OS) && sup != capability.NotApplicable:
			bad = append(bad, fmt.Sprintf("%s is declared %s, but %s has no such thing (WIN-1: only the network is shared between containers there): declare it not-applicable", d.Name, sup, p.OS))
		case p.OS == "linux" && sup == capability.NotApplicable:
			bad = append(bad, fmt.Sprintf("%s is declared not-applicable, but every namespace kind exists on linux: declare it unsupported (the runtime must then refuse it with an error)", d.Name))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// Builtin returns the profiles shipped with the suite, sorted by name.
func Builtin() ([]*Profile, error) {
	entries, err := builtin.ReadDir("profiles")
	if err != nil {
		return nil, err
	}
	var out []*Profile
	for _, e := range entries {
		data, err := builtin.ReadFile(path.Join("profiles", e.Name()))
		if err != nil {
			return nil, err
		}
		p, err := Parse(data, "builtin "+e.Name())
		if err != nil {
			return nil, err
		}
		if p.Name == Auto || p.Name == Probe {
			return nil, fmt.Errorf("builtin %s: the name %q is a -profile keyword", e.Name(), p.Name)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Auto is the -profile value that picks a profile from the CRI Version.
const Auto = "auto"

// Load resolves -profile when it is a builtin name or a file. For "auto"
// and "probe" it returns nil: the profile is made once the runtime answers
// (see Resolve).
func Load(spec string) (*Profile, error) {
	if spec == "" || spec == Auto || spec == Probe {
		return nil, nil
	}
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	for _, p := range all {
		if p.Name == spec {
			return p, nil
		}
	}
	if strings.ContainsAny(spec, "/.") {
		data, err := os.ReadFile(spec)
		if err != nil {
			return nil, fmt.Errorf("profile: %v", err)
		}
		return Parse(data, spec)
	}
	return nil, fmt.Errorf("unknown profile %q (builtin: %s; or give a file path, auto, or probe)", spec, strings.Join(names(all), ", "))
}

// Detect picks the builtin profile whose match fits the runtime name, OS
// and runtime handler ("" or "default" for the default handler); a handler
// no profile names gets the runtime's profile without a handler. Windows
// profiles are per release: see DetectBuild, which Detect calls with an
// unknown build.
func Detect(runtimeName, os, handler string) (*Profile, error) {
	p, _, err := DetectBuild(runtimeName, os, 0, handler)
	return p, err
}

// DetectBuild is Detect for a node of a known OS build (Windows; 0 when
// unknown). Among the windows profiles of the runtime it picks the one of
// the newest release whose build is not above the node's: a node of a
// release's build, or of a build between two releases (an Annual Channel
// or a Windows client build), gets the release it follows; a build newer
// than every release known here gets the newest, and note says so. A node
// older than every release (Windows Server 2016, build 14393, which
// containerd does not support) gets none.
func DetectBuild(runtimeName, os string, build uint16, handler string) (p *Profile, note string, err error) {
	all, err := Builtin()
	if err != nil {
		return nil, "", err
	}
	if handler == "default" {
		handler = ""
	}
	what := fmt.Sprintf("runtime %q on %s", runtimeName, os)
	if handler != "" {
		what += fmt.Sprintf(" with handler %q", handler)
	}
	// A profile for the very handler first, then the runtime's general one
	// (an explicit runc handler, say).
	for _, wantHandler := range []string{handler, ""} {
		var candidates []*Profile
		for _, p := range all {
			if p.OS == os && p.Match.RuntimeName != "" && strings.EqualFold(p.Match.RuntimeName, runtimeName) && p.Match.RuntimeHandler == wantHandler {
				candidates = append(candidates, p)
			}
		}
		if len(candidates) == 0 {
			continue
		}
		if os != "windows" {
			return candidates[0], "", nil
		}
		if build == 0 {
			return nil, "", fmt.Errorf("the Windows node's OS build is unknown, and the builtin profiles for %s are per release (%s): give -windows-build, or -profile", what, strings.Join(names(candidates), ", "))
		}
		var best *Profile
		var bestBuild, newest uint16
		for _, c := range candidates {
			b, _ := WindowsReleaseBuild(c.Match.WindowsRelease)
			newest = max(newest, b)
			if b <= build && b > bestBuild {
				best, bestBuild = c, b
			}
		}
		if best == nil {
			return nil, "", fmt.Errorf("no builtin profile for %s with OS build %d: the oldest release with a profile is build %d (%s); give -profile", what, build, oldest(candidates), strings.Join(names(candidates), ", "))
		}
		switch {
		case build == bestBuild:
		case bestBuild == newest:
			note = fmt.Sprintf("OS build %d is newer than every Windows release known here; profile %s (build %d) applies until one is added", build, best.Name, bestBuild)
		default:
			note = fmt.Sprintf("OS build %d lies between Windows releases; profile %s of the release before it (build %d) applies", build, best.Name, bestBuild)
		}
		return best, note, nil
	}
	return nil, "", fmt.Errorf("no builtin profile for %s (builtin: %s); give -profile with a name or a file", what, strings.Join(names(all), ", "))
}

func oldest(ps []*Profile) uint16 {
	var out uint16
	for _, p := range ps {
		if b, _ := WindowsReleaseBuild(p.Match.WindowsRelease); out == 0 || b < out {
			out = b
		}
	}
	return out
}

func names(ps []*Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
