// Package buildinfo names the source a binary was built from: the version
// and commit every binary of the project prints for -version.
package buildinfo

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

// Version and Commit are stamped at link time (hack/lib.sh's
// version_ldflags: -X github.com/ectest/ectest/internal/buildinfo.Version=...);
// empty in a plain go build.
var Version, Commit string

// Get is the stamped version and commit; unstamped, the revision the go
// command recorded (version devel-<revision>[-dirty]), else "devel" and
// an empty commit (a go test -c binary records none).
func Get(version, commit string) (string, string) {
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
	if commit == "" {
		commit = rev
	}
	if version == "" && rev != "" {
		version = "devel-" + rev[:min(12, len(rev))]
		if modified == "true" {
			version += "-dirty"
		}
	}
	if version == "" {
		version = "devel"
	}
	return version, commit
}

// Line is what a command prints for -version: its name, version, commit,
// and the Go release and platform, on one line.
func Line(name string) string {
	v, c := Get(Version, Commit)
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("%s %s (commit %s, %s %s/%s)", name, v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Flag registers -version on fs; after fs is parsed, the returned func
// prints Line(name) and exits 0 when it was given.
func Flag(fs *flag.FlagSet, name string) func() {
	v := fs.Bool("version", false, "print the version and commit and exit")
	return func() {
		if *v {
			fmt.Println(Line(name))
			os.Exit(0)
		}
	}
}

// Arg is -version for a command that has no flag set of its own: given as
// the only argument, it prints Line(name) and exits 0.
func Arg(name string) {
	if len(os.Args) == 2 && (os.Args[1] == "-version" || os.Args[1] == "--version") {
		fmt.Println(Line(name))
		os.Exit(0)
	}
}
