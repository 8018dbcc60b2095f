package buildinfo

import (
	"strings"
	"testing"
)

func TestLineNamesVersionAndCommit(t *testing.T) {
	defer func(v, c string) { Version, Commit = v, c }(Version, Commit)
	Version, Commit = "v0.3.0", "0123456789abcdef0123456789abcdef01234567"
	if l := Line("ectest-report"); !strings.HasPrefix(l, "ectest-report v0.3.0 (commit "+Commit+", go") || strings.Contains(l, "\n") {
		t.Errorf("Line() = %q", l)
	}
	Version, Commit = "", ""
	if v, _ := Get("", ""); !strings.HasPrefix(v, "devel") {
		t.Errorf("an unstamped build's version %q, want devel...", v)
	}
	if l := Line("x"); !strings.Contains(l, "(commit ") {
		t.Errorf("an unstamped build's line %q names no commit", l)
	}
}
