package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBoundingSetDetection(t *testing.T) {
	bnd, err := ParseStatusCaps("Name:\tx\nCapEff:\t000001fffeffffff\nCapBnd:\t000001fffeffffff\n")
	if err != nil || bnd != 0x1fffeffffff {
		t.Fatalf("ParseStatusCaps = %x, %v", bnd, err)
	}
	if got := Missing(bnd, 40); !reflect.DeepEqual(got, []string{"CAP_SYS_RESOURCE"}) {
		t.Errorf("Missing = %v, want [CAP_SYS_RESOURCE] (bit 24)", got)
	}
	if got := Missing(0x1ffffffffff, 40); len(got) != 0 {
		t.Errorf("full set: missing %v", got)
	}
	if got := Missing(0x1ffffffffff, 42); !reflect.DeepEqual(got, []string{"CAP_41", "CAP_42"}) {
		t.Errorf("newer kernel: %v", got)
	}
	if _, err := ParseStatusCaps("Name:\tx\n"); err == nil {
		t.Error("no CapBnd accepted")
	}
}

func TestRuncFiles(t *testing.T) {
	cases := []struct {
		args   []string
		path   string
		bundle bool
		ok     bool
	}{
		{[]string{"--root", "/run/docker/runtime-runc/moby", "--log", "/x/log.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/b/init.pid", "id"}, "/b/config.json", true, true},
		{[]string{"--root", "/r", "create", "--bundle=/b2", "id"}, "/b2/config.json", true, true},
		{[]string{"--root", "/r", "exec", "--process", "/tmp/p.json", "--detach", "--pid-file", "/p", "id"}, "/tmp/p.json", false, true},
		{[]string{"--root", "/r", "exec", "-p", "/tmp/q.json", "id"}, "/tmp/q.json", false, true},
		{[]string{"--root", "/r", "start", "id"}, "", false, false},
		{[]string{"--root", "/r", "delete", "--force", "id"}, "", false, false},
	}
	for _, c := range cases {
		path, bundle, ok := RuncFiles(c.args)
		if path != c.path || bundle != c.bundle || ok != c.ok {
			t.Errorf("RuncFiles(%v) = %q %v %v", c.args, path, bundle, ok)
		}
	}
}

func TestRewriteDropsCapabilitiesFromBothPaths(t *testing.T) {
	dir := t.TempDir()
	caps := `{"bounding":["CAP_CHOWN","CAP_SYS_RESOURCE"],"effective":["CAP_SYS_RESOURCE","CAP_KILL"],"permitted":["CAP_SYS_RESOURCE"]}`
	cfg := filepath.Join(dir, "config.json")
	proc := filepath.Join(dir, "process.json")
	if err := os.WriteFile(cfg, []byte(`{"ociVersion":"1.0.2","process":{"args":["sh"],"capabilities":`+caps+`},"root":{"path":"rootfs"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proc, []byte(`{"args":["ls"],"capabilities":`+caps+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	drop := map[string]bool{"CAP_SYS_RESOURCE": true}
	if err := RewriteFile(cfg, true, drop); err != nil {
		t.Fatal(err)
	}
	if err := RewriteFile(proc, false, drop); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cfg, proc} {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "CAP_SYS_RESOURCE") || !strings.Contains(string(b), "CAP_CHOWN") || !strings.Contains(string(b), "CAP_KILL") {
			t.Errorf("%s: %s", f, b)
		}
	}
	var doc map[string]any
	b, _ := os.ReadFile(cfg)
	_ = json.Unmarshal(b, &doc)
	if doc["ociVersion"] != "1.0.2" || doc["root"] == nil {
		t.Errorf("other fields lost: %s", b)
	}
}
