package host

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// capNames are the Linux capability names by number (capability(7)).
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// CapName names capability number n.
func CapName(n int) string {
	if n >= 0 && n < len(capNames) {
		return capNames[n]
	}
	return fmt.Sprintf("CAP_%d", n)
}

// ParseStatusCaps reads the CapBnd mask from /proc/<pid>/status content.
func ParseStatusCaps(status string) (uint64, error) {
	s := bufio.NewScanner(strings.NewReader(status))
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapBnd line in process status")
}

// Missing lists the capabilities 0..lastCap absent from the bounding set.
func Missing(bounding uint64, lastCap int) []string {
	var out []string
	for n := 0; n <= lastCap && n < 64; n++ {
		if bounding&(1<<uint(n)) == 0 {
			out = append(out, CapName(n))
		}
	}
	return out
}

// MissingHere reads this process's bounding set and the kernel's last
// capability and returns what a privileged container could not get here.
func MissingHere() ([]string, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	bnd, err := ParseStatusCaps(string(status))
	if err != nil {
		return nil, err
	}
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	return Missing(bnd, last), nil
}
