package embedded

import (
	"slices"
	"testing"

	"github.com/ectest/ectest/internal/hostdeps"
)

// Only the flavor that is Debian's containerd asks for Debian's containerd
// and runc: installing them for a flavor that builds its own would put a
// second containerd on the host, its systemd service enabled.
func TestHostPurposes(t *testing.T) {
	want := map[string][]hostdeps.Purpose{
		"containerd-1.6":      {hostdeps.EmbeddedNetwork, hostdeps.DebianContainerd},
		"containerd-1.7":      {hostdeps.EmbeddedNetwork},
		"containerd-2":        {hostdeps.EmbeddedNetwork},
		"containerd-2-crun":   {hostdeps.EmbeddedNetwork, hostdeps.Crun},
		"containerd-2-gvisor": {hostdeps.EmbeddedNetwork},
		"cri-o":               {hostdeps.EmbeddedNetwork, hostdeps.Conmon},
		"cri-o-crun":          {hostdeps.EmbeddedNetwork, hostdeps.Conmon, hostdeps.Crun},
		"cri-dockerd":         {hostdeps.EmbeddedNetwork, hostdeps.DockerEngine},
	}
	for _, f := range Flavors {
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("flavor %s: no expectation here; add what it runs with", f.Name)
			continue
		}
		if got := f.HostPurposes(); !slices.Equal(got, w) {
			t.Errorf("flavor %s: HostPurposes = %v, want %v", f.Name, got, w)
		}
		for _, p := range f.HostPurposes() {
			if p == hostdeps.DebianContainerd && len(f.Programs) > 0 {
				t.Errorf("flavor %s builds its own containerd but asks for Debian's", f.Name)
			}
		}
	}
	if len(Flavors) != len(want) {
		t.Errorf("%d flavors, %d expectations", len(Flavors), len(want))
	}
}
