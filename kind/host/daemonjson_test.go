//go:build linux

package host

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

const userConfig = `{"bip": "10.99.0.1/24", "default-address-pools": [{"base": "10.200.0.0/16", "size": 24}],
 "log-driver": "json-file", "max-concurrent-downloads": 12345678901234567,
 "runtimes": {"other": {"path": "/x", "runtimeArgs": ["--a"]}}}`

func TestMergeKeepsWhatTheUserSet(t *testing.T) {
	out, added, err := MergeDaemonConfig([]byte(userConfig), Wants{Bridge: true, Runtime: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(added, []string{addedRuntime}) {
		t.Errorf("added %v, want only the runtime (bip is the user's)", added)
	}
	got, want := decode(t, out), decode(t, []byte(userConfig))
	rt := got["runtimes"].(map[string]any)
	if !reflect.DeepEqual(rt[WrapperRuntime], map[string]any{"path": WrapperPath}) {
		t.Errorf("runtime not added: %s", out)
	}
	delete(rt, WrapperRuntime)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("user values changed:\n got %v\nwant %v", got, want)
	}
	if strings.Contains(string(out), "default-runtime") {
		t.Errorf("the default runtime was set: %s", out)
	}
	if !strings.Contains(string(out), "12345678901234567") {
		t.Errorf("a large number lost precision: %s", out)
	}
	// A "bridge" of the user's excludes bip too.
	if _, added, _ := MergeDaemonConfig([]byte(`{"bridge":"br0"}`), Wants{Bridge: true}); len(added) != 0 {
		t.Errorf("bip added beside the user's bridge: %v", added)
	}
	if _, _, err := MergeDaemonConfig([]byte("{"), Wants{Runtime: true}); err == nil {
		t.Error("malformed daemon.json accepted")
	}
	if _, _, err := MergeDaemonConfig([]byte(`{"runtimes": 3}`), Wants{Runtime: true}); err == nil {
		t.Error("malformed runtimes accepted")
	}
}

func TestMergeIsIdempotentAndUndone(t *testing.T) {
	for _, start := range []string{"", userConfig, `{"runtimes": {}}`} {
		w := Wants{Bridge: true, Runtime: true}
		once, added, err := MergeDaemonConfig([]byte(start), w)
		if err != nil {
			t.Fatal(err)
		}
		twice, again, err := MergeDaemonConfig(once, w)
		if err != nil || string(twice) != string(once) || len(again) != 0 {
			t.Errorf("%q: second merge changed it (%v, %v):\n%s\n%s", start, again, err, once, twice)
		}
		back, empty, err := UnmergeDaemonConfig(once, added)
		if err != nil {
			t.Fatal(err)
		}
		if start == "" {
			if !empty {
				t.Errorf("undo of a new file left %s", back)
			}
			continue
		}
		if !reflect.DeepEqual(decode(t, back), decode(t, []byte(start))) {
			t.Errorf("undo did not give back %s: %s", start, back)
		}
	}
	// A value the user changed since is theirs: undo keeps it.
	once, added, _ := MergeDaemonConfig(nil, Wants{Bridge: true, Runtime: true})
	edited := strings.Replace(string(once), bridgeIP, "10.1.2.1/24", 1)
	back, _, _ := UnmergeDaemonConfig([]byte(edited), added)
	if !strings.Contains(string(back), "10.1.2.1/24") || strings.Contains(string(back), WrapperRuntime) {
		t.Errorf("undo: %s", back)
	}
}

func TestWriteConfigIsAtomicAndKeepsModeAndLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	if err := os.WriteFile(target, []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "daemon.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(target) // a reader of the old file
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var before syscall.Stat_t
	if err := syscall.Stat(target, &before); err != nil {
		t.Fatal(err)
	}
	if err := writeConfig(link, []byte(`{"a":2}`)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	var after syscall.Stat_t
	if err := syscall.Stat(target, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino == before.Ino {
		t.Error("written in place, not renamed into place")
	}
	if os.FileMode(after.Mode).Perm() != 0o600 {
		t.Errorf("mode %o, want the file's 0600", after.Mode)
	}
	b, _ := os.ReadFile(link)
	o := make([]byte, 16)
	n, _ := old.Read(o)
	if string(b) != `{"a":2}` || string(o[:n]) != `{"a":1}` {
		t.Errorf("new %q, the old reader's %q", b, o[:n])
	}
	es, _ := os.ReadDir(dir)
	if len(es) != 2 {
		t.Errorf("temporary files left: %v", es)
	}
}

func TestStateIsRootOnly(t *testing.T) {
	old := StateFile
	defer func() { StateFile = old }()
	StateFile = filepath.Join(t.TempDir(), "lib", "host", "docker.json")
	if s, err := loadState(); err != nil || !reflect.DeepEqual(s, State{}) {
		t.Fatalf("no file: %+v %v", s, err)
	}
	want := State{Owned: "x", ConfigFile: "/c", Added: []string{addedRuntime}, Started: true, IPForward: "0"}
	if err := saveState(want); err != nil {
		t.Fatal(err)
	}
	got, err := loadState()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v %v", got, err)
	}
	for path, mode := range map[string]os.FileMode{StateFile: 0o600, filepath.Dir(StateFile): 0o700} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v, want %o", path, fi.Mode(), err, mode)
		}
	}
}

func TestRefusalIsOneLine(t *testing.T) {
	err := refusal([]string{"CAP_SYS_RESOURCE"}, DaemonJSON, true)
	if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), ConfigureEnv+"=1") {
		t.Errorf("%v", err)
	}
}

func TestConfigFileArg(t *testing.T) {
	for args, want := range map[string]string{
		"dockerd":                             DaemonJSON,
		"dockerd --config-file /e/d.json":     "/e/d.json",
		"dockerd -D --config-file=/e/d2.json": "/e/d2.json",
	} {
		if got := configFileArg(strings.Fields(args)); got != want {
			t.Errorf("%s: %s", args, got)
		}
	}
}

func TestShimAddsRuntimeAndSubnetToKindsCommandsOnly(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "real-docker")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(dir, "docker")
	if err := os.WriteFile(shim, []byte(ShimScript(fake, WrapperRuntime, "198.19.0.0/24")), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "docker-plain")
	if err := os.WriteFile(plain, []byte(ShimScript(fake, "", "")), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bin, args, want string }{
		{shim, "run --name n --privileged img", "run --runtime=ectest-runc --name n --privileged img"},
		{shim, "network create -d=bridge -o x=y --ipv6 --subnet fc00::/64 kind", "network create --subnet=198.19.0.0/24 --gateway=198.19.0.1 -d=bridge -o x=y --ipv6 --subnet fc00::/64 kind"},
		{shim, "network create other", "network create other"},
		{shim, "network inspect kind", "network inspect kind"},
		{shim, "info --format {{json .}}", "info --format {{json .}}"},
		{plain, "run --name n img", "run --name n img"},
		{plain, "network create kind", "network create kind"},
	} {
		out, err := exec.Command(c.bin, strings.Fields(c.args)...).Output()
		if err != nil || strings.TrimSpace(string(out)) != c.want {
			t.Errorf("%s %s: %q %v, want %q", filepath.Base(c.bin), c.args, out, err, c.want)
		}
	}
}

func TestFreeSubnet(t *testing.T) {
	mk := func(s string) *net.IPNet { _, n, _ := net.ParseCIDR(s); return n }
	if got, _ := FreeSubnet(kindSubnets, []*net.IPNet{mk("172.17.0.0/16"), mk("198.19.0.1/24"), mk("198.19.1.0/25")}); got != "198.19.2.0/24" {
		t.Errorf("got %s", got)
	}
	if got, _ := FreeSubnet(kindSubnets, nil); got != "198.19.0.0/24" {
		t.Errorf("got %s", got)
	}
	if _, err := FreeSubnet(kindSubnets, []*net.IPNet{mk("198.16.0.0/14")}); err == nil {
		t.Error("no free subnet, none refused")
	}
	got := parseSubnets("bridge 172.17.0.0/16\nkind 198.19.0.0/24 fc00:f853:ccd:e793::/64\nnone\n")
	if len(got["kind"]) != 2 || len(got["bridge"]) != 1 || len(got["none"]) != 0 {
		t.Errorf("parseSubnets: %v", got)
	}
}

func TestPathWithoutTheShim(t *testing.T) {
	if got := pathWithout("/run/ectest/kind-docker:/usr/bin:/run/ectest/kind-docker/:/bin", "/run/ectest/kind-docker"); got != "/usr/bin:/bin" {
		t.Errorf("got %q", got)
	}
}

func TestRestoreReloadsWithEmptyRuntimes(t *testing.T) {
	// Docker 20.10 reloads runtimes only from a file that has the key.
	out := withEmptyRuntimes([]byte(`{"bip": "10.1.0.1/24"}`))
	if !hasKey(out, "runtimes") || !hasKey(out, "bip") || strings.Contains(string(out), WrapperRuntime) {
		t.Errorf("%s", out)
	}
}
