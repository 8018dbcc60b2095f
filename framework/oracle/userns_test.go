package oracle

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A process in a user namespace of its pod: the node's /proc shows its
// link and its maps (padded columns, as the kernel writes them) relative
// to the node's user namespace.
func TestUserNS(t *testing.T) {
	p := writeFake(t,
		fakeProcess{pid: 1, args: []string{"/sbin/init"}, nspid: []int{1}, pidNS: "pid:[100]"},
		fakeProcess{pid: 50, args: []string{"/pause"}, nspid: []int{50, 1}, pidNS: "pid:[300]"},
	)
	dir := filepath.Join(p.Root, "50")
	must(t, os.Remove(filepath.Join(dir, "ns", "user")))
	must(t, os.Symlink("user:[4026532999]", filepath.Join(dir, "ns", "user")))
	must(t, os.WriteFile(filepath.Join(dir, "uid_map"), []byte("         0     100000      65536\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "gid_map"), []byte("         0     100000      65536\n         65536  1 1\n"), 0o644))

	u, err := p.UserNS(50)
	must(t, err)
	want := UserNS{Link: "user:[4026532999]", UIDMap: "0 100000 65536", GIDMap: "0 100000 65536\n65536 1 1"}
	if u != want {
		t.Errorf("UserNS(50) = %+v, want %+v", u, want)
	}
	proc, err := p.Read(50)
	must(t, err)
	if proc.UserNS() != want {
		t.Errorf("Read(50).UserNS() = %+v, want %+v", proc.UserNS(), want)
	}
	// The host's: another link, the identity map; gid_map missing here.
	if _, err := p.UserNS(1); err == nil {
		t.Error("UserNS(1) without a gid_map: want an error")
	}
	if _, err := p.UserNS(77); !errors.Is(err, ErrGone) {
		t.Errorf("UserNS of no process: %v, want ErrGone", err)
	}
}

func TestInNamespace(t *testing.T) {
	p := writeFake(t,
		fakeProcess{pid: 1, args: []string{"/sbin/init"}, nspid: []int{1}, pidNS: "pid:[100]"},
		fakeProcess{pid: 50, args: []string{"/pause"}, nspid: []int{50, 1}, pidNS: "pid:[300]"},
		fakeProcess{pid: 60, args: []string{"/target", "ectest-target-x"}, nspid: []int{60, 1}, pidNS: "pid:[301]"},
	)
	found, err := p.InNamespace(PID, "pid:[300]")
	must(t, err)
	if len(found) != 1 || found[0].PID != 50 || found[0].Args != "/pause" {
		t.Errorf("InNamespace(pid:[300]) = %+v", found)
	}
	// writeFake gives every process net:[1]: all three share it.
	if all, err := p.InNamespace(Net, "net:[1]"); err != nil || len(all) != 3 {
		t.Errorf("InNamespace(net:[1]) = %d processes, %v", len(all), err)
	}
	if _, err := p.InNamespace(Net, ""); err == nil {
		t.Error("InNamespace without a link: want an error")
	}
}
