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
