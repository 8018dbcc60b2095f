package crunwrapper

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// crun 1.8 refuses an ociVersion without "1.0"; the wrapper gives such a
// bundle one it accepts and leaves every other field alone.
func TestAcceptableVersion(t *testing.T) {
	for version, want := range map[string]string{"1.3.0": AcceptedVersion, "1.2.1": AcceptedVersion, "1.1.0": "1.1.0", "1.0.2-dev": "1.0.2-dev"} {
		path := filepath.Join(t.TempDir(), "config.json")
		in := map[string]any{"ociVersion": version, "process": map[string]any{"args": []any{"/pause"}}, "root": map[string]any{"path": "rootfs"}}
		b, _ := json.Marshal(in)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := AcceptableVersion(path); err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		b, _ = os.ReadFile(path)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if out["ociVersion"] != want {
			t.Errorf("%s became %v, want %s", version, out["ociVersion"], want)
		}
		in["ociVersion"] = want
		if !reflect.DeepEqual(in, out) {
			t.Errorf("%s: other fields changed: %v", version, out)
		}
	}
	if err := AcceptableVersion(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing bundle configuration passed")
	}
}

// A negative pids limit (CRI-O's default, unlimited) leaves the bundle;
// any other limit, and everything else, stays.
func TestUnlimitedPids(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"linux":{"resources":{"pids":{"limit":-1},"memory":{"limit":5}}}}`, `{"linux":{"resources":{"memory":{"limit":5}}}}`},
		{`{"linux":{"resources":{"pids":{"limit":100}}}}`, `{"linux":{"resources":{"pids":{"limit":100}}}}`},
		{`{"linux":{}}`, `{"linux":{}}`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(c.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := UnlimitedPids(path); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.in, got, c.want)
		}
	}
}
