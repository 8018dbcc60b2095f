//go:build linux

package pinns

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create and bind-mount namespaces")
	}
}

// pinDir is a fresh directory for -d; at the test's end it must hold no
// mount any more (the test's own cleanups unmount) and is removed.
func pinDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ectest-pinns-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if m := mountsUnder(t, dir); len(m) > 0 {
			t.Errorf("mounts left under %s: %q", dir, m)
			for _, p := range m {
				_ = unix.Unmount(p, unix.MNT_DETACH)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, f[4])
		}
	}
	return out
}

// pin runs pinns's Main with args and, at the test's end, unmounts what it
// pinned, as CRI-O's Namespace.Remove does.
func pin(t *testing.T, args ...string) Options {
	t.Helper()
	o, err := Parse(args)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range o.Pins {
			if err := unix.Unmount(o.Path(p.Type), unix.MNT_DETACH); err != nil {
				t.Errorf("unmounting %s: %v", o.Path(p.Type), err)
			}
			// The self-bind of <dir>/mntns goes with its last pinned file.
			if p.Type == Mnt && len(mountsUnder(t, o.Dir+"/mntns/")) == 0 {
				if err := unix.Unmount(o.Dir+"/mntns", unix.MNT_DETACH); err != nil {
					t.Errorf("unmounting %s/mntns: %v", o.Dir, err)
				}
			}
		}
	})
	var stderr bytes.Buffer
	if code := Main(args, &stderr); code != 0 {
		t.Fatalf("pinns %q: exit %d: %s", args, code, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("pinns %q wrote %q", args, stderr.String())
	}
	return o
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// checkNew fails unless path is a namespace of kind typ that is not the
// test process's own one of that kind.
func checkNew(path string, typ NSType) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	kind, err := unix.IoctlRetInt(int(f.Fd()), unix.NS_GET_NSTYPE)
	if err != nil {
		return fmt.Errorf("%s is not a namespace: %w", path, err)
	}
	if uintptr(kind) != cloneFlag[typ] {
		return fmt.Errorf("%s is a namespace of kind %#x, not %s", path, kind, typ)
	}
	var pinned, host unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &pinned); err != nil {
		return err
	}
	if err := unix.Stat("/proc/self/ns/"+string(typ), &host); err != nil {
		return err
	}
	if pinned.Ino == host.Ino && pinned.Dev == host.Dev {
		return fmt.Errorf("%s is the host's %s namespace", path, typ)
	}
	return nil
}

var kindArgs = map[NSType][]string{
	UTS:    {"--uts"},
	IPC:    {"--ipc"},
	Net:    {"--net"},
	Cgroup: {"--cgroup"},
	Mnt:    {"--mnt"},
	User:   {"--user", "--uid-mapping=0-100000-65536@", "--gid-mapping=0-100000-65536@"},
}

// Each kind on its own: the file is a namespace of that kind, not the
// host's, and another run's is another one.
func TestPinsANewNamespaceOfEachKind(t *testing.T) {
	needRoot(t)
	for _, typ := range bindOrder {
		t.Run(string(typ), func(t *testing.T) {
			dir := pinDir(t)
			a := pin(t, append([]string{"-d", dir, "-f", "a"}, kindArgs[typ]...)...)
			b := pin(t, append([]string{"-d", dir, "-f", "b"}, kindArgs[typ]...)...)
			for _, o := range []Options{a, b} {
				if err := checkNew(o.Path(typ), typ); err != nil {
					t.Error(err)
				}
			}
			if inode(t, a.Path(typ)) == inode(t, b.Path(typ)) {
				t.Errorf("two runs pinned the same %s namespace", typ)
			}
		})
	}
}

// "=host" pins the caller's namespace: checkNew must catch exactly that,
// so the test above would fail if pinns bound the host's namespaces.
func TestHostPinsTheCallersNamespace(t *testing.T) {
	needRoot(t)
	dir := pinDir(t)
	o := pin(t, "-d", dir, "-f", "h", "--ipc=host", "--net=host", "--uts")
	for _, typ := range []NSType{IPC, Net} {
		if inode(t, o.Path(typ)) != inode(t, "/proc/self/ns/"+string(typ)) {
			t.Errorf("--%s=host did not pin the host's namespace", typ)
		}
		if err := checkNew(o.Path(typ), typ); err == nil || !strings.Contains(err.Error(), "host's") {
			t.Errorf("checkNew(%s) = %v, want the host's namespace found", o.Path(typ), err)
		}
	}
	if err := checkNew(o.Path(UTS), UTS); err != nil {
		t.Error(err)
	}
}

// readIn reads file from a thread that has joined the namespace pinned at
// nsPath; the thread is never unlocked, so it dies with its goroutine.
func readIn(t *testing.T, nsPath string, typ NSType, file string) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(nsPath)
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), int(cloneFlag[typ])); err != nil {
			ch <- result{err: fmt.Errorf("setns %s: %w", nsPath, err)}
			return
		}
		data, err := os.ReadFile(file)
		ch <- result{strings.TrimSpace(string(data)), err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.s
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// Sysctls land in the new namespaces, net.* in the network one and
// kernel.shm* in the IPC one, and the host's stay as they were.
func TestSysctlsAreWrittenInTheNewNamespaces(t *testing.T) {
	needRoot(t)
	const portKey, shmKey = "/proc/sys/net/ipv4/ip_unprivileged_port_start", "/proc/sys/kernel/shmmni"
	hostPort, hostShm := readFile(t, portKey), readFile(t, shmKey)
	port, shm := "123", "1234"
	if hostPort == port || hostShm == shm {
		t.Skip("the host already has the test's values")
	}
	dir := pinDir(t)
	o := pin(t, "-d", dir, "-f", "s", "-s", "net.ipv4.ip_unprivileged_port_start="+port,
		"-s", "kernel.shmmni="+shm, "--ipc", "--net", "--uts")
	if got := readIn(t, o.Path(Net), Net, portKey); got != port {
		t.Errorf("in the pinned network namespace %s = %q, want %q", portKey, got, port)
	}
	if got := readIn(t, o.Path(IPC), IPC, shmKey); got != shm {
		t.Errorf("in the pinned IPC namespace %s = %q, want %q", shmKey, got, shm)
	}
	if got := readFile(t, portKey); got != hostPort {
		t.Errorf("the host's %s changed to %q", portKey, got)
	}
	if got := readFile(t, shmKey); got != hostShm {
		t.Errorf("the host's %s changed to %q", shmKey, got)
	}
}

// A pod with a user namespace, as CRI-O asks for it (it makes the files
// first): the maps read back, setgroups is left allowed, the other new
// namespaces belong to the new user namespace, and a sysctl is written as
// its root.
func TestUserNamespaceAsCRIOAsksForIt(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("nsenter"); err != nil {
		t.Skip("no nsenter")
	}
	dir := pinDir(t)
	for _, typ := range []NSType{User, Net} { // nsmgr_linux.go chownDirToIDPair
		if err := os.MkdirAll(dir+"/"+string(typ)+"ns", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir+"/"+string(typ)+"ns/u", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir+"/"+string(typ)+"ns/u", 100000, 100000); err != nil {
			t.Fatal(err)
		}
	}
	o := pin(t, "-d", dir, "-f", "u", "-s", "net.ipv4.ping_group_range=0 1004",
		"--ipc", "--net", "--uts", "--user",
		"--uid-mapping=0-100000-65536@", "--gid-mapping=0-200000-1000@1000-300000-5@")
	for _, typ := range []NSType{User, UTS, IPC, Net} {
		if err := checkNew(o.Path(typ), typ); err != nil {
			t.Error(err)
		}
	}
	nsenter := func(file string) string {
		out, err := exec.Command("nsenter", "--user="+o.Path(User), "cat", file).CombinedOutput()
		if err != nil {
			t.Fatalf("nsenter cat %s: %v: %s", file, err, out)
		}
		return strings.Join(strings.Fields(string(out)), " ")
	}
	if got, want := nsenter("/proc/self/uid_map"), "0 100000 65536"; got != want {
		t.Errorf("uid_map %q, want %q", got, want)
	}
	if got, want := nsenter("/proc/self/gid_map"), "0 200000 1000 1000 300000 5"; got != want {
		t.Errorf("gid_map %q, want %q", got, want)
	}
	if got := nsenter("/proc/self/setgroups"); got != "allow" {
		t.Errorf("setgroups %q, want allow (pinns does not deny it)", got)
	}
	userIno := inode(t, o.Path(User))
	for _, typ := range []NSType{UTS, IPC, Net} {
		f, err := os.Open(o.Path(typ))
		if err != nil {
			t.Fatal(err)
		}
		owner, err := unix.IoctlRetInt(int(f.Fd()), unix.NS_GET_USERNS)
		f.Close()
		if err != nil {
			t.Fatalf("owner of %s: %v", o.Path(typ), err)
		}
		var st unix.Stat_t
		err = unix.Fstat(owner, &st)
		unix.Close(owner)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ino != userIno {
			t.Errorf("the pinned %s namespace is not owned by the pinned user namespace", typ)
		}
	}
	// Written by the namespace's root as its group IDs 0 to 1004 (both
	// ends must be mapped), read by host root as host group IDs.
	got := strings.Join(strings.Fields(readIn(t, o.Path(Net), Net, "/proc/sys/net/ipv4/ping_group_range")), " ")
	if want := "200000 300004"; got != want {
		t.Errorf("ping_group_range in the pinned network namespace, seen from the host: %q, want %q", got, want)
	}
}

// A sysctl that cannot be written fails the run with one line, exit 1,
// and leaves no mount.
func TestFailedSysctlLeavesNothingMounted(t *testing.T) {
	needRoot(t)
	dir := pinDir(t)
	var stderr bytes.Buffer
	args := []string{"-d", dir, "-f", "x", "-s", "net.ipv4.no_such_sysctl=1", "--ipc", "--net"}
	if code := Main(args, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out := stderr.String(); !strings.HasPrefix(out, "[pinns:e]: ") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "no_such_sysctl") {
		t.Errorf("stderr %q, want one [pinns:e] line naming the sysctl", out)
	}
	if m := mountsUnder(t, dir); len(m) > 0 {
		t.Errorf("mounts left: %q", m)
	}
}
