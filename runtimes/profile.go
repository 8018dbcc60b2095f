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
	return &p, nil
}

// checkDeclarations refuses a profile that would excuse what no runtime
// for its OS may lack: a capability mandatory there declared anything but
// supported, or, on Linux, any capability declared not-applicable (every
// namespace kind exists there; a runtime that lacks one declares it
// unsupported and must then refuse it with an error).
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
// no profile names gets the runtime's profile without a handler.
func Detect(runtimeName, os, handler string) (*Profile, error) {
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	if handler == "default" {
		handler = ""
	}
	// A profile for the very handler first, then the runtime's general one
	// (an explicit runc handler, say).
	for _, wantHandler := range []string{handler, ""} {
		for _, p := range all {
			if p.OS == os && p.Match.RuntimeName != "" && strings.EqualFold(p.Match.RuntimeName, runtimeName) && p.Match.RuntimeHandler == wantHandler {
				return p, nil
			}
		}
	}
	what := fmt.Sprintf("runtime %q on %s", runtimeName, os)
	if handler != "" {
		what += fmt.Sprintf(" with handler %q", handler)
	}
	return nil, fmt.Errorf("no builtin profile for %s (builtin: %s); give -profile with a name or a file", what, strings.Join(names(all), ", "))
}

func names(ps []*Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
