package cri

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ectest/ectest/framework/oracle"
)

// capBits are the Linux capabilities by name (without "CAP_") and bit.
var capBits = map[string]uint{
	"CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4, "KILL": 5,
	"SETGID": 6, "SETUID": 7, "SETPCAP": 8, "LINUX_IMMUTABLE": 9, "NET_BIND_SERVICE": 10,
	"NET_BROADCAST": 11, "NET_ADMIN": 12, "NET_RAW": 13, "IPC_LOCK": 14, "IPC_OWNER": 15,
	"SYS_MODULE": 16, "SYS_RAWIO": 17, "SYS_CHROOT": 18, "SYS_PTRACE": 19, "SYS_PACCT": 20,
	"SYS_ADMIN": 21, "SYS_BOOT": 22, "SYS_NICE": 23, "SYS_RESOURCE": 24, "SYS_TIME": 25,
	"SYS_TTY_CONFIG": 26, "MKNOD": 27, "LEASE": 28, "AUDIT_WRITE": 29, "AUDIT_CONTROL": 30,
	"SETFCAP": 31, "MAC_OVERRIDE": 32, "MAC_ADMIN": 33, "SYSLOG": 34, "WAKE_ALARM": 35,
	"BLOCK_SUSPEND": 36, "AUDIT_READ": 37, "PERFMON": 38, "BPF": 39, "CHECKPOINT_RESTORE": 40,
}

// CapMask is the set of named capabilities ("SYS_PTRACE" or
// "CAP_SYS_PTRACE") as a /proc status mask; an error names an unknown one.
func CapMask(names []string) (uint64, error) {
	var m uint64
	for _, n := range names {
		bit, ok := capBits[strings.TrimPrefix(strings.ToUpper(n), "CAP_")]
		if !ok {
			return 0, fmt.Errorf("unknown capability %q", n)
		}
		m |= 1 << bit
	}
	return m, nil
}

// CapNames are the capabilities of a mask, by name, in bit order.
func CapNames(m uint64) []string {
	var out []string
	for n, bit := range capBits {
		if m&(1<<bit) != 0 {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return capBits[out[i]] < capBits[out[j]] })
	for bit := uint(41); bit < 64; bit++ {
		if m&(1<<bit) != 0 {
			out = append(out, fmt.Sprintf("bit %d", bit))
		}
	}
	return out
}

// ParseCapMask reads a /proc status capability line's value (hex).
func ParseCapMask(s string) (uint64, error) {
	return strconv.ParseUint(strings.TrimSpace(s), 16, 64)
}

// Credentials are what a container's security context asks for: its
// user, group and supplementary groups, capabilities added to and dropped
// from the runtime's default set, and no_new_privs.
type Credentials struct {
	UID, GID   int64
	Groups     []int64
	Add, Drop  []string
	NoNewPrivs bool
}

// String is the request, for evidence.
func (c Credentials) String() string {
	return fmt.Sprintf("uid %d gid %d groups %v, capabilities added %v and dropped %v, no_new_privs %v", c.UID, c.GID, c.Groups, c.Add, c.Drop, c.NoNewPrivs)
}

// Judge lists where p holds other than c asks, given the runtime's default
// capability set (the bounding set of a container that asked for none):
// its uid and gid lines (real, effective, saved, filesystem) are the ones
// asked; its supplementary groups are those asked (its own gid may be
// among them); its bounding set is the default with the added and without
// the dropped ones, and its effective and permitted sets are that for
// root and empty for any other user (the kernel clears them at execve,
// without ambient or file capabilities); no inheritable or ambient
// capability; no_new_privs as asked. A line the process's kernel does not
// show (a sandbox's own kernel, read from inside) is not judged.
func (c Credentials) Judge(p oracle.Process, defaults uint64) []string {
	var out []string
	id := func(what, got string, want int64) {
		w := strings.TrimSpace(strings.Repeat(strconv.FormatInt(want, 10)+" ", 4))
		if got != w {
			out = append(out, fmt.Sprintf("%s %q, not %q", what, got, w))
		}
	}
	id("uid", p.UID, c.UID)
	id("gid", p.GID, c.GID)
	got := map[string]bool{}
	for _, g := range strings.Fields(p.Groups) {
		got[g] = true
	}
	delete(got, strconv.FormatInt(c.GID, 10))
	var missing []string
	for _, g := range c.Groups {
		s := strconv.FormatInt(g, 10)
		if !got[s] && g != c.GID {
			missing = append(missing, s)
		}
		delete(got, s)
	}
	var extra []string
	for g := range got {
		extra = append(extra, g)
	}
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		out = append(out, fmt.Sprintf("supplementary groups %q: missing %v, not asked %v", p.Groups, missing, extra))
	}
	add, err := CapMask(c.Add)
	if err != nil {
		return append(out, err.Error())
	}
	drop, err := CapMask(c.Drop)
	if err != nil {
		return append(out, err.Error())
	}
	bnd := (defaults | add) &^ drop
	var effective uint64
	if c.UID == 0 {
		effective = bnd
	}
	set := func(what, hex string, want uint64) {
		if hex == "" {
			return // a kernel of its own that does not show this set
		}
		m, err := ParseCapMask(hex)
		if err != nil {
			out = append(out, fmt.Sprintf("%s %q unreadable: %v", what, hex, err))
			return
		}
		if m == want {
			return
		}
		var d []string
		if more := m &^ want; more != 0 {
			d = append(d, fmt.Sprintf("holds %s, not asked", strings.Join(CapNames(more), ",")))
		}
		if less := want &^ m; less != 0 {
			d = append(d, fmt.Sprintf("lacks %s", strings.Join(CapNames(less), ",")))
		}
		out = append(out, fmt.Sprintf("%s %s: %s", what, hex, strings.Join(d, "; ")))
	}
	set("CapBnd", p.CapBnd, bnd)
	set("CapEff", p.CapEff, effective)
	set("CapPrm", p.CapPrm, effective)
	set("CapInh", p.CapInh, 0)
	set("CapAmb", p.CapAmb, 0)
	nnp := map[bool]string{true: "1", false: "0"}[c.NoNewPrivs]
	if p.NoNewPrivs != "" && p.NoNewPrivs != nnp {
		out = append(out, fmt.Sprintf("no_new_privs %q, not %q", p.NoNewPrivs, nnp))
	}
	return out
}
