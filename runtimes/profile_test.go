package runtimes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
)

func full(os string, override map[string]string) string {
	var b strings.Builder
	b.WriteString("name: test\nos: " + os + "\ncapabilities:\n")
	for _, d := range capability.All() {
		s := "supported"
		if o, ok := override[string(d.Name)]; ok {
			s = o
		}
		if s != "" {
			b.WriteString("  " + string(d.Name) + ": " + s + "\n")
		}
	}
	return b.String()
}

func TestParse(t *testing.T) {
	if _, err := Parse([]byte(full("linux", nil)), "t"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ yaml, want string }{
		"unknown capability": {full("linux", nil) + "  pid-targett: supported\n", `unknown capability "pid-targett"`},
		"bad support":        {full("linux", map[string]string{"pid-target": "sometimes"}), `invalid support "sometimes"`},
		"missing capability": {full("linux", map[string]string{"logs": ""}), "does not declare logs"},
		"bad os":             {full("plan9", nil), "os must be linux or windows"},
		"no name":            {"os: linux\ncapabilities: {}\n", "no name"},
		"unknown field":      {full("linux", nil) + "colour: blue\n", "malformed"},
		"not yaml":           {"name: [", "malformed"},
	}
	for name, c := range cases {
		if _, err := Parse([]byte(c.yaml), "t"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}

func TestBuiltinProfiles(t *testing.T) {
	all, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Profile{}
	for _, p := range all {
		byName[p.Name] = p
	}
	for _, rel := range []string{"ltsc2019", "ltsc2022", "ltsc2025"} {
		win := byName["containerd-windows-"+rel]
		if win == nil || win.OS != "windows" || win.Match.WindowsRelease != rel || win.Capabilities[capability.NetPod] != capability.Supported || win.Capabilities[capability.PIDTarget] != capability.NotApplicable {
			t.Errorf("the Windows profile for %s must be network-only: %+v", rel, win)
		}
	}
	if p, err := Detect("containerd", "linux", "default"); err != nil || p.Name != "containerd-runc" {
		t.Errorf("Detect(containerd, linux) = %v, %v", p, err)
	}
	if _, err := Detect("containerd", "windows", ""); err == nil || !strings.Contains(err.Error(), "-windows-build") {
		t.Errorf("Detect(containerd, windows) without a build = %v: the profile depends on the build", err)
	}
	if p, err := Detect("containerd", "linux", "runsc"); err != nil || p.Name != "containerd-gvisor" {
		t.Errorf("Detect(containerd, linux, runsc) = %v, %v: a gVisor handler must not get the runc profile", p, err)
	}
	if p, err := Detect("containerd", "linux", "runc"); err != nil || p.Name != "containerd-runc" {
		t.Errorf("Detect(containerd, linux, runc) = %v, %v", p, err)
	}
	if p, err := Detect("cri-o", "linux", ""); err != nil || p.Name != "cri-o" {
		t.Errorf("Detect(cri-o) = %v, %v", p, err)
	}
	if p, err := Detect("docker", "linux", ""); err != nil || p.Name != "cri-dockerd" {
		t.Errorf("Detect(docker) = %v, %v", p, err)
	}
	if _, err := Detect("unheard-of", "linux", ""); err == nil || !strings.Contains(err.Error(), "give -profile") {
		t.Errorf("Detect(unknown) = %v", err)
	}
}

func TestLoad(t *testing.T) {
	if p, err := Load(Auto); p != nil || err != nil {
		t.Errorf("Load(auto) = %v, %v", p, err)
	}
	if p, err := Load("cri-o"); err != nil || p.Name != "cri-o" {
		t.Errorf("Load(cri-o) = %v, %v", p, err)
	}
	path := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(path, []byte(full("linux", map[string]string{"proc-root-fs": "unsupported"})), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Load(path); err != nil || p.Capabilities[capability.ProcRootFS] != capability.Unsupported {
		t.Errorf("Load(file) = %v, %v", p, err)
	}
	if _, err := Load("nope"); err == nil || !strings.Contains(err.Error(), "builtin:") {
		t.Errorf("Load(nope) = %v", err)
	}
}

// A profile cannot excuse what no runtime for its OS may lack: the
// namespace modes the CRI says runtimes must support and the required
// capabilities; and on Linux nothing is not-applicable.
func TestProfilesCannotExcuseMandatoryCapabilities(t *testing.T) {
	for _, c := range []struct {
		os, capability, support, want string
	}{
		{"linux", "pid-target", "unsupported", "pid-target is declared unsupported, but on linux every runtime must support it"},
		{"linux", "pid-node", "not-applicable", "pid-node is declared not-applicable, but on linux every runtime must support it"},
		{"linux", "ipc-pod", "unsupported", "ipc-pod is declared unsupported"},
		{"linux", "target-id-validation", "not-applicable", "it is required of every runtime"},
		{"linux", "exec", "unsupported", "it is required of every runtime"},
		{"linux", "proc-root-fs", "not-applicable", "every namespace kind exists on linux"},
		{"windows", "net-pod", "not-applicable", "net-pod is declared not-applicable, but on windows every runtime must support it"},
		{"windows", "unknown-namespace-mode-error", "not-applicable", "it is required of every runtime"},
		{"windows", "pid-target", "supported", "windows has no such thing"},
		{"windows", "ipc-pod", "unsupported", "declare it not-applicable"},
		{"windows", "target-id-validation", "supported", "windows has no such thing"},
	} {
		decl := map[string]string{c.capability: c.support}
		if c.os == "windows" {
			for _, n := range []string{"pid-container", "pid-pod", "pid-node", "pid-target", "pid-target-pod", "target-id-validation", "ipc-pod", "proc-root-fs", "ptrace-rules", "story-ops"} {
				if n != c.capability {
					decl[n] = "not-applicable"
				}
			}
		}
		_, err := Parse([]byte(full(c.os, decl)), "test")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %s: got %v, want an error containing %q", c.os, c.capability, c.support, err, c.want)
		}
	}
	// What the OS cannot have may be declared so.
	ok := map[string]string{"proc-root-fs": "unsupported", "ptrace-rules": "unsupported", "story-ops": "unsupported"}
	if _, err := Parse([]byte(full("linux", ok)), "test"); err != nil {
		t.Errorf("optional capabilities declared unsupported on linux: %v", err)
	}
}

// Windows profiles are per release, picked by the node's OS build the way
// image compatibility works: a release's own build and the builds after it
// up to the next release get that release's profile.
func TestDetectWindowsByBuild(t *testing.T) {
	for _, c := range []struct {
		build      uint16
		want, note string
	}{
		{17763, "containerd-windows-ltsc2019", ""},
		{20348, "containerd-windows-ltsc2022", ""},
		{26100, "containerd-windows-ltsc2025", ""},
		{19041, "containerd-windows-ltsc2019", "between Windows releases"}, // Windows Server 2004, between 2019 and 2022
		{22631, "containerd-windows-ltsc2022", "between Windows releases"}, // Windows 11 23H2, between 2022 and 2025
		{30000, "containerd-windows-ltsc2025", "newer than every Windows release"},
		{14393, "", "oldest release with a profile is build 17763"}, // Windows Server 2016
		{0, "", "OS build is unknown"},
	} {
		p, note, err := DetectBuild("containerd", "windows", c.build, "")
		switch {
		case c.want == "" && (err == nil || !strings.Contains(err.Error(), c.note)):
			t.Errorf("build %d: %v, %v; want an error containing %q", c.build, p, err, c.note)
		case c.want != "" && (err != nil || p.Name != c.want || !strings.Contains(note, c.note) || (c.note == "") != (note == "")):
			t.Errorf("build %d: %v (note %q), %v; want %s with a note containing %q", c.build, p, note, err, c.want, c.note)
		}
	}
	if _, _, err := DetectBuild("cri-o", "windows", 20348, ""); err == nil || !strings.Contains(err.Error(), "give -profile") {
		t.Errorf("no Windows profile for cri-o: %v", err)
	}
	if p, _, err := DetectBuild("containerd", "linux", 20348, ""); err != nil || p.Name != "containerd-runc" {
		t.Errorf("a build does not matter on linux: %v, %v", p, err)
	}
	// Everything Windows has no such thing of (the catalog's AbsentOn) is
	// declared not applicable, so that only the release is wrong.
	absent := map[string]string{}
	for _, d := range capability.All() {
		if d.AbsentOnOS("windows") {
			absent[string(d.Name)] = "not-applicable"
		}
	}
	bad := strings.Replace(full("windows", absent), "os: windows\n", "os: windows\nmatch:\n  runtimeName: containerd\n  windowsRelease: ltsc2030\n", 1)
	if _, err := Parse([]byte(bad), "t"); err == nil || !strings.Contains(err.Error(), `unknown Windows release "ltsc2030"`) {
		t.Errorf("unknown release: %v", err)
	}
}
