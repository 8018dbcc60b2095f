package expected

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
)

func TestBuiltinFilesParseAndMatch(t *testing.T) {
	files := BuiltinFiles()
	if len(files) < 5 {
		t.Fatalf("%d builtin files", len(files))
	}
	for _, c := range []struct {
		rt   capability.RuntimeInfo
		want string
	}{
		{capability.RuntimeInfo{Name: "containerd", Version: "2.4.2+unknown"}, "builtin:containerd-2.yaml"},
		{capability.RuntimeInfo{Name: "containerd", Version: "v2.4.2"}, "builtin:containerd-2.yaml"}, // a release's own stamp
		{capability.RuntimeInfo{Name: "containerd", Version: "2.4.2+unknown", Handler: "runsc"}, "builtin:containerd-2-gvisor.yaml"},
		{capability.RuntimeInfo{Name: "containerd", Version: "1.6.20~ds1"}, "builtin:containerd-1.6.yaml"},
		{capability.RuntimeInfo{Name: "cri-o", Version: "1.34.0"}, ""},
		{capability.RuntimeInfo{Name: "cri-o", Version: "1.36.3", Handler: "default"}, "builtin:cri-o.yaml"},
		{capability.RuntimeInfo{Name: "docker", Version: "20.10.24+dfsg1", Handler: "default"}, "builtin:cri-dockerd.yaml"},
		{capability.RuntimeInfo{Name: "docker", Version: "29.4.1", Handler: "default"}, ""},
	} {
		got := ""
		if f := For(files, c.rt); f != nil {
			got = f.Path
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.rt, got, c.want)
		}
	}
	if d := For(files, capability.RuntimeInfo{Name: "containerd", Version: "2.4.2"}).Deviations(); strings.Join(names(d), ",") != "removed-stays-gone,target-id-validation,unknown-namespace-mode-error" {
		t.Errorf("deviations: %v", d)
	}
}

func names(ns []capability.Name) []string {
	var out []string
	for _, n := range ns {
		out = append(out, string(n))
	}
	return out
}

func TestParseRefuses(t *testing.T) {
	for body, want := range map[string]string{
		"runtimeName: x\nverdicts:\n  pid-target:\n    verdict: nonconformant\n    reason: r\n":                 "needs the upstream code or issue",
		"runtimeName: x\nverdicts:\n  pid-targt:\n    verdict: nonconformant\n    reason: r\n    upstream: u\n": "pid-targt",
		"runtimeName: x\nbogus: 1\n": "bogus",
		"verdicts: {}\n":             "runtimeName is empty",
	} {
		if _, err := Parse("f.yaml", []byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	body := "runtimeName: cri-o\nversionPrefix: \"1.\"\nverdicts:\n  pid-target:\n    verdict: nonconformant\n    reason: r\n    upstream: cri-o/cri-o#1\n"
	if err := os.WriteFile(filepath.Join(dir, "crio.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, what := range []string{dir, filepath.Join(dir, "crio.yaml")} {
		files, err := Load(what)
		if err != nil || len(files) != 1 || For(files, capability.RuntimeInfo{Name: "cri-o", Version: "1.34.2"}) == nil {
			t.Errorf("Load(%s): %v %v", what, files, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing file loaded")
	}
	if files, err := Load(Builtin); err != nil || len(files) == 0 {
		t.Errorf("builtin: %v", err)
	}
}
