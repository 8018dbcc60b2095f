package cri

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/oracle"
)

func TestCapMaskAndNames(t *testing.T) {
	m, err := CapMask([]string{"CHOWN", "CAP_SYS_ADMIN"})
	if err != nil || m != 1|1<<21 {
		t.Fatalf("CapMask = %x, %v", m, err)
	}
	if got := strings.Join(CapNames(m), ","); got != "CHOWN,SYS_ADMIN" {
		t.Errorf("CapNames = %s", got)
	}
	if _, err := CapMask([]string{"NOPE"}); err == nil {
		t.Error("an unknown capability was accepted")
	}
}

func TestCredentialsJudge(t *testing.T) {
	const defaults = "00000000a80425fb" // containerd's default set
	def, _ := ParseCapMask(defaults)
	nonRoot := Credentials{UID: 1234, GID: 2345, Groups: []int64{3456, 4567}, Add: []string{"SYS_PTRACE"}, Drop: []string{"CHOWN"}, NoNewPrivs: true}
	bnd, _ := CapMask([]string{"SYS_PTRACE"})
	chown, _ := CapMask([]string{"CHOWN"})
	hex := func(m uint64) string { return fmt.Sprintf("%016x", m) }
	good := oracle.Process{UID: "1234 1234 1234 1234", GID: "2345 2345 2345 2345", Groups: "2345 3456 4567",
		CapBnd: hex((def | bnd) &^ chown), CapEff: "0000000000000000", CapPrm: "0000000000000000", CapInh: "0000000000000000", CapAmb: "0000000000000000", NoNewPrivs: "1"}
	if d := nonRoot.Judge(good, def); len(d) > 0 {
		t.Fatalf("as asked, judged %q", d)
	}
	bad := good
	bad.UID, bad.Groups, bad.CapEff, bad.NoNewPrivs = "0 0 0 0", "3456", good.CapBnd, "0"
	d := strings.Join(nonRoot.Judge(bad, def), "\n")
	for _, want := range []string{`uid "0 0 0 0", not "1234 1234 1234 1234"`, "missing [4567]", "CapEff 00000000a80c25fa: holds DAC_OVERRIDE,", "no_new_privs"} {
		if !strings.Contains(d, want) {
			t.Errorf("differences lack %q:\n%s", want, d)
		}
	}
	root := Credentials{}
	extra := oracle.Process{UID: "0 0 0 0", GID: "0 0 0 0", CapBnd: defaults, CapEff: hex(def | 1<<21), CapPrm: defaults, CapInh: "0", CapAmb: "0", NoNewPrivs: "0"}
	if d := strings.Join(root.Judge(extra, def), "\n"); !strings.Contains(d, "CapEff") || !strings.Contains(d, "holds SYS_ADMIN, not asked") {
		t.Errorf("an extra effective capability not seen: %s", d)
	}
}

func TestCgroupsOutside(t *testing.T) {
	p := oracle.Process{PID: 7, Cgroups: []string{"9:name=systemd:/elsewhere", "4:memory:/ectest/sb/c1", "8:pids:/ectest/sb2/c1", "0::/other"}}
	d, err := CgroupsOutside(p, "/ectest/sb")
	if err != nil || len(d) != 1 || !strings.Contains(d[0], `pids cgroup "/ectest/sb2/c1"`) {
		t.Fatalf("CgroupsOutside = %q, %v", d, err)
	}
	if _, err := CgroupsOutside(oracle.Process{}, "/ectest/sb"); err == nil {
		t.Error("cgroups not read, but judged")
	}
}
