package kube

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/kind/nodeimage"
)

// Every API-server release the matrix runs must have been read: its tag in
// the table, exactly.
func TestReleasesCoverVersionsYAML(t *testing.T) {
	known, err := nodeimage.KnownReleases()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range append(known.APIServers, known.Newest) {
		r, exact := ReleaseFor(v)
		if !exact {
			t.Errorf("versions.yaml names %s, but the release table (framework/kube/releases.go) read %s: read %s's code and add it", v, r.Tag, v)
		}
	}
}

func TestCite(t *testing.T) {
	for _, tc := range []struct{ server, module, want string }{
		{"v1.35.8", "", "k8s.io/kubernetes@v1.35.8 pkg/x.go"},
		{"v1.35.8", "k8s.io/pod-security-admission", "k8s.io/pod-security-admission@v0.35.8 pkg/x.go"},
		{"v1.35.2+abc", "", "k8s.io/kubernetes@v1.35.8 pkg/x.go (read at v1.35.8; the server runs v1.35.2+abc, whose code was not read)"},
		{"v1.40.0", "", "k8s.io/kubernetes@v1.37.1 pkg/x.go (read at v1.37.1; the server runs v1.40.0, whose code was not read)"},
		{"v1.29.1", "", "k8s.io/kubernetes@v1.33.13 pkg/x.go (read at v1.33.13; the server runs v1.29.1, whose code was not read)"},
	} {
		if got := Cite(tc.server, tc.module, "pkg/x.go"); got != tc.want {
			t.Errorf("Cite(%s, %q) = %q, want %q", tc.server, tc.module, got, tc.want)
		}
	}
	if tags := KnownReleaseTags(); !strings.HasPrefix(strings.Join(tags, " "), "v1.33.13 v1.34.10") {
		t.Errorf("KnownReleaseTags = %v", tags)
	}
}
