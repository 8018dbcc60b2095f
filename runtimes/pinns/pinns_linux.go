//go:build linux

package pinns

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ChildArg, as the first argument, makes a binary that calls ChildMain
// first the child that holds the new namespaces (see Run).
const ChildArg = "__ectest_pinns_child__"

var cloneFlag = map[NSType]uintptr{
	User:   unix.CLONE_NEWUSER,
	UTS:    unix.CLONE_NEWUTS,
	IPC:    unix.CLONE_NEWIPC,
	Net:    unix.CLONE_NEWNET,
	Cgroup: unix.CLONE_NEWCGROUP,
	Mnt:    unix.CLONE_NEWNS,
}

// Run pins the namespaces o asks for. The running binary must call
// ChildMain first in its main (or TestMain): Run re-executes it
// (/proc/self/exe) as the child that is cloned into the new namespaces,
// writes the sysctls there and waits; Run bind-mounts the child's
// /proc/<pid>/ns/<type> onto each file, then kills it.
func Run(o Options) (err error) {
	if err := dirExistsOrCreate(o.Dir); err != nil {
		return err
	}
	child, err := startChild(o)
	if err != nil {
		return err
	}
	defer child.stop()

	var bound []string
	defer func() {
		if err != nil {
			for _, p := range bound {
				_ = unix.Unmount(p, unix.MNT_DETACH)
			}
		}
	}()
	for _, p := range o.Pins {
		root := o.Dir + "/" + string(p.Type) + "ns"
		if err := dirExistsOrCreate(root); err != nil {
			return err
		}
		if p.Type == Mnt {
			// A mount namespace can only be pinned under an unbindable
			// mount (pinns.c setup_unbindable_bindpath): bind the
			// directory onto itself (failing when it already is a mount
			// point is fine) and make it unbindable.
			_ = unix.Mount(root, root, "", unix.MS_BIND, "")
			if err := unix.Mount("", root, "", unix.MS_UNBINDABLE, ""); err != nil {
				return fmt.Errorf("making %s an unbindable mount point: %w", root, err)
			}
		}
		path := o.Path(p.Type)
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0)
		if err == nil {
			f.Close()
		} else if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating the namespace file: %w", err)
		}
		src := fmt.Sprintf("/proc/%d/ns/%s", child.cmd.Process.Pid, p.Type)
		if err := unix.Mount(src, path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mounting %s on %s: %w", src, path, err)
		}
		bound = append(bound, path)
	}
	return nil
}

// dirExistsOrCreate makes path (0755, its parent must exist) unless it is
// a directory already (pinns.c directory_exists_or_create).
func dirExistsOrCreate(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if err := os.Mkdir(path, 0o755); err != nil {
			return fmt.Errorf("making directory %s: %w", path, err)
		}
		return nil
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists but is not a directory", path)
	}
	return nil
}

type child struct {
	cmd    *exec.Cmd
	hold   io.WriteCloser
	stderr *bytes.Buffer
}

// startChild starts the child in its new namespaces and waits until it
// has written the sysctls.
func startChild(o Options) (*child, error) {
	var flags uintptr
	for _, p := range o.Pins {
		if p.New {
			flags |= cloneFlag[p.Type]
		}
	}
	args := []string{ChildArg}
	for _, s := range o.Sysctls {
		args = append(args, s.Key+"="+s.Value)
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Args[0] = os.Args[0]
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	if flags&unix.CLONE_NEWUSER != 0 {
		// The maps are written before the child runs anything; then it
		// becomes uid and gid 0 of its namespace (pinns.c: setresuid and
		// setresgid to 0, supplementary groups untouched), and, like
		// pinns, leaves setgroups allowed.
		attr.UidMappings = sysIDMaps(o.UIDMappings)
		attr.GidMappings = sysIDMaps(o.GIDMappings)
		attr.GidMappingsEnableSetgroups = true
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true}
	}
	cmd.SysProcAttr = attr
	hold, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	ready, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, hold: hold, stderr: new(bytes.Buffer)}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("creating namespaces: %w", err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(ready, b); err != nil || b[0] != '0' {
		c.stop()
		msg := strings.TrimSpace(c.stderr.String())
		if msg == "" {
			msg = fmt.Sprintf("the child exited (%v)", cmd.ProcessState)
		}
		return nil, fmt.Errorf("creating namespaces: %s", msg)
	}
	return c, nil
}

// stop kills the child and reaps it (pinns.c: "Avoid creating a zombie").
func (c *child) stop() {
	_ = c.cmd.Process.Kill()
	_ = c.hold.Close()
	_ = c.cmd.Wait()
}

func sysIDMaps(m []IDMap) []syscall.SysProcIDMap {
	out := make([]syscall.SysProcIDMap, len(m))
	for i, e := range m {
		out[i] = syscall.SysProcIDMap{ContainerID: e.ContainerID, HostID: e.HostID, Size: e.Size}
	}
	return out
}

// ChildMain returns at once unless the first argument is ChildArg; then
// the process is Run's child, already in its new namespaces: it writes
// each key=value argument to /proc/sys, says so on stdout, and waits for
// its end (SIGKILL, or stdin's end when Run's process is gone). Call it
// first in the main (or TestMain) of any binary that calls Run.
func ChildMain() {
	if len(os.Args) < 2 || os.Args[1] != ChildArg {
		return
	}
	for _, kv := range os.Args[2:] {
		if err := writeSysctl(kv); err != nil {
			fmt.Fprintf(os.Stderr, "sysctl %s: %v\n", kv, err)
			os.Exit(1)
		}
	}
	if _, err := os.Stdout.Write([]byte("0")); err != nil {
		os.Exit(1)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// writeSysctl writes the value, as it is, to the key's file under
// /proc/sys: one write, no truncation, no newline (sysctl.c).
func writeSysctl(kv string) error {
	s, err := ParseSysctl(kv)
	if err != nil {
		return err
	}
	path, err := ProcSysPath(s.Key)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(s.Value))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
