package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Enter runs fn on an OS thread that has joined p's namespace of kind k
// (read from proc's Root): a SysV segment made there, or a socket opened
// there, is the node's even when the reading process is in namespaces of
// its own. The thread is never returned to the Go scheduler: it ends with
// fn's goroutine, so no other goroutine ever runs in that namespace.
func (proc Proc) Enter(p Process, k Kind, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		f, err := os.Open(filepath.Join(proc.Root, strconv.Itoa(p.PID), "ns", string(k)))
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), 0); err != nil {
			done <- fmt.Errorf("setns into PID %d's %s namespace: %w", p.PID, k, err)
			return
		}
		done <- fn()
	}()
	return <-done
}
