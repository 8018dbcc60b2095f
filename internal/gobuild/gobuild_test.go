package gobuild

import (
	"strings"
	"testing"
)

func TestThrowawayGoModKeepsSiblingsAndExcludes(t *testing.T) {
	mod := `module github.com/containerd/containerd

require github.com/x/y v1.0.0

replace github.com/containerd/containerd/api => ./api

exclude (
	github.com/bad/mod v0.1.0
	github.com/bad/other v0.2.0 // broken
)

exclude github.com/single/mod v1.2.3
`
	got := ThrowawayGoMod("github.com/containerd/containerd", "v1.7.36", mod)
	for _, want := range []string{"\tgithub.com/containerd/containerd v1.7.36\n", "\tgithub.com/containerd/containerd/api v1.7.36\n",
		"\tgithub.com/bad/mod v0.1.0\n", "\tgithub.com/bad/other v0.2.0\n", "\tgithub.com/single/mod v1.2.3\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

func TestKeyChangesWithTagsAndCGOOnly(t *testing.T) {
	p := Program{Module: "m", Package: "m/cmd/x", Version: "v1", Binary: "x", Recipe: "1"}
	q := p
	q.Tags, q.CGO = []string{"seccomp"}, true
	if p.Key() == q.Key() || !strings.HasPrefix(p.Key(), "x-v1-") {
		t.Errorf("keys %s %s", p.Key(), q.Key())
	}
}

func TestLocalReplacements(t *testing.T) {
	got := LocalReplacements("module go.etcd.io/etcd/server/v3\nreplace (\n\tgo.etcd.io/etcd/api/v3 => ../api\n\tgo.etcd.io/etcd/pkg/v3 => ../pkg\n\tgithub.com/x/y => github.com/x/y v1.2.3\n)\nreplace go.etcd.io/etcd => ./FORBIDDEN_DEPENDENCY\nreplace go.etcd.io/etcd/client/v3 => ../client/v3\n")
	if strings.Join(got, ",") != "go.etcd.io/etcd/api/v3,go.etcd.io/etcd/pkg/v3,go.etcd.io/etcd/client/v3" {
		t.Errorf("LocalReplacements = %v", got)
	}
}

// etcd 3.5's server module replaces its siblings with directories of the
// repository, and one of them, client/v2, is tagged v2.305.x in the same
// release: the throwaway module must require that, not v3.5.x, which go
// rejects for a /v2 path ("should be v2, not v3"; seen building v1.33's etcd).
func TestSiblingOfAnotherMajorVersion(t *testing.T) {
	gomod := `module go.etcd.io/etcd/server/v3

require (
	go.etcd.io/etcd/api/v3 v3.5.24
	go.etcd.io/etcd/client/v2 v2.305.24 // the v2 client
	go.etcd.io/etcd/client/v3 v3.5.24
)

require github.com/other/thing v1.2.3

replace (
	go.etcd.io/etcd/api/v3 => ../api
	go.etcd.io/etcd/client/v2 => ../client/v2
	go.etcd.io/etcd/client/v3 => ../client/v3
)
`
	got := ThrowawayGoMod("go.etcd.io/etcd/server/v3", "v3.5.24", gomod)
	for _, want := range []string{"go.etcd.io/etcd/api/v3 v3.5.24", "go.etcd.io/etcd/client/v2 v2.305.24", "go.etcd.io/etcd/client/v3 v3.5.24"} {
		if !strings.Contains(got, want) {
			t.Errorf("throwaway go.mod lacks %q:\n%s", want, got)
		}
	}
	if r := Requires(gomod); r["github.com/other/thing"] != "v1.2.3" || r["go.etcd.io/etcd/client/v2"] != "v2.305.24" {
		t.Errorf("Requires: %v", r)
	}
	for _, c := range []struct{ sib, version, want string }{
		{"github.com/containerd/containerd/api", "v1.7.36", "v1.7.36"},
		{"github.com/containerd/containerd/v2/api", "v2.4.2", "v2.4.2"},
		{"example.com/lib", "v0.3.0", "v0.3.0"},
		{"example.com/lib/v2", "v3.1.0", "v3.1.0"}, // not required: the release's version, as before
	} {
		if got := SiblingVersion(c.sib, c.version, nil); got != c.want {
			t.Errorf("SiblingVersion(%s, %s) = %s, want %s", c.sib, c.version, got, c.want)
		}
	}
}

// cri-dockerd's go.mod pins its Kubernetes libraries with replace
// directives naming module versions; a throwaway module must carry them
// (and only them: a directory replace is not a module to fetch).
func TestReplaceBlock(t *testing.T) {
	gomod := `module github.com/Mirantis/cri-dockerd

require k8s.io/api v0.27.8

replace (
	k8s.io/api => k8s.io/api v0.29.10
	k8s.io/cri-api/v1alpha2 => k8s.io/cri-api v0.25.16
	example.com/local => ./local
)

replace google.golang.org/grpc/naming v0.1.0 => google.golang.org/grpc v1.29.0
`
	got := ReplaceBlock(gomod)
	want := "\nreplace (\n\tk8s.io/api => k8s.io/api v0.29.10\n\tk8s.io/cri-api/v1alpha2 => k8s.io/cri-api v0.25.16\n\tgoogle.golang.org/grpc/naming v0.1.0 => google.golang.org/grpc v1.29.0\n)\n"
	if got != want {
		t.Errorf("ReplaceBlock =\n%s\nwant\n%s", got, want)
	}
	if ReplaceBlock("module m\n") != "" {
		t.Error("a go.mod without replaces gives a block")
	}
	p := Program{Module: "m", Package: "m", Version: "v1", Binary: "x", Recipe: "1"}
	q := p
	q.Replaces = true
	if p.Key() == q.Key() {
		t.Error("Replaces does not enter the key")
	}
}
