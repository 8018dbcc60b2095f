package framework

import (
	"strings"
	"testing"
)

// Every report names the suite that judged: a release's version and commit
// as stamped at link time, else the source revision.
func TestBuildNamesVersionAndCommit(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v0.3.0", "0123456789abcdef0123456789abcdef01234567"
	b := Build()
	if b.Version != "v0.3.0" || b.Commit != Commit {
		t.Errorf("Build() = %+v", b)
	}
	if got := b.String(); got != "v0.3.0 (commit 0123456789ab)" {
		t.Errorf("String() = %q", got)
	}
	if l := VersionLine(); !strings.HasPrefix(l, "ectest v0.3.0 (CRI API runtime.v1; commit "+Commit) {
		t.Errorf("VersionLine() = %q", l)
	}
	Version, Commit = "", ""
	if b := Build(); !strings.HasPrefix(b.Version, "devel") {
		t.Errorf("a development build's version %q, want devel...", b.Version)
	}
}
