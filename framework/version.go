package framework

import (
	"fmt"

	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ectest/ectest/framework/capability"
)

// Version is the release this binary was built as, set at link time by
// release builds (-ldflags "-X github.com/ectest/ectest/framework.Version=v0.3.0");
// empty in a development build, which names its source revision instead.
var Version = ""

// Commit is the source commit this binary was built from, set at link time
// (-ldflags "-X github.com/ectest/ectest/framework.Commit=<sha>"; make
// release and the make targets do); a go build in a checkout stamps it too.
var Commit = ""

// Build is what every report names as the suite that judged: Version (a
// development build: devel-<revision>[-dirty], or devel) and Commit (or
// the revision the go command stamped).
func Build() capability.Build {
	b := capability.Build{Version: Version, Commit: Commit}
	var rev, modified string
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if b.Commit == "" {
		b.Commit = rev
	}
	if b.Version == "" && rev != "" {
		b.Version = "devel-" + rev[:min(12, len(rev))]
		if modified == "true" {
			b.Version += "-dirty"
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	return b
}

// VersionLine says what this binary is: ectest's version (or source
// revision), the CRI API and Ginkgo it was built with, and the Go release
// and platform (what -version prints, as critest's -version does).
func VersionLine() string {
	v, deps := Build().Version, map[string]string{}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			deps[d.Path] = d.Version
		}
	}
	var parts []string
	for _, d := range []struct{ name, path string }{{"cri-api", "k8s.io/cri-api"}, {"client-go", "k8s.io/client-go"}, {"ginkgo", "github.com/onsi/ginkgo/v2"}} {
		if dv := deps[d.path]; dv != "" {
			parts = append(parts, d.name+" "+dv)
		}
	}
	// A test binary carries no module list: its dependencies' versions are
	// in go.mod of the source it was built from (the revision above).
	parts = append(parts, fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH))
	if Commit != "" {
		parts = append([]string{"commit " + Commit}, parts...)
	}
	return fmt.Sprintf("ectest %s (CRI API runtime.v1; %s)", v, strings.Join(parts, ", "))
}
