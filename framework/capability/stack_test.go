package capability

import (
	"strings"
	"testing"
)

// A runtime's note ends the stack every report shows (the embedded cri-o's
// pinns is the project's stand-in, and every report must say so).
func TestStackEndsWithNote(t *testing.T) {
	rt := RuntimeInfo{Flavor: "cri-o", OCIRuntime: "runc 1.5.2", Note: "pinns is ectest-pinns"}
	if got := rt.Stack(); !strings.HasSuffix(got, ", note: pinns is ectest-pinns") || !strings.HasPrefix(got, "embedded runtime cri-o") {
		t.Errorf("Stack() = %q", got)
	}
	if got := (RuntimeInfo{Flavor: "containerd-2"}).Stack(); strings.Contains(got, "note") {
		t.Errorf("Stack() without a note = %q", got)
	}
}
