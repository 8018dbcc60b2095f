package framework

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/internal/buildinfo"
)

// Version is the release this binary was built as, stamped at link time
// into internal/buildinfo (hack/lib.sh's version_ldflags; make release);
// empty in a development build, which names its source revision instead.
var Version = buildinfo.Version

// Commit is the source commit this binary was built from, stamped the same
// way (make release and the make targets do); a go build in a checkout
// records it too.
var Commit = buildinfo.Commit

// Build is what every report names as the suite that judged: Version (a
// development build: devel-<revision>[-dirty], or devel) and Commit (or
// the revision the go command recorded).
func Build() capability.Build {
	v, c := buildinfo.Get(Version, Commit)
	return capability.Build{Version: v, Commit: c}
}

// VersionLine says what this binary is: ectest's version (or source
// revision), the CRI API and Ginkgo it was built with, and the Go release
// and platform (what -version prints, as critest's -version does).
func VersionLine() string {
	b, deps := Build(), map[string]string{}
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
	commit := b.Commit
	if commit == "" {
		commit = "unknown" // a go test -c binary records no revision
	}
	parts = append([]string{"commit " + commit}, parts...)
	return fmt.Sprintf("ectest %s (CRI API runtime.v1; %s)", b.Version, strings.Join(parts, ", "))
}
