package host

import (
	"syscall"
	"testing"
)

func TestInheritedFilesDoNotReachDockerd(t *testing.T) {
	// A descriptor opened without close-on-exec, as flock(1) passes its
	// lock's to the command it runs.
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	flags := func() uintptr {
		r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		return r
	}
	if flags()&syscall.FD_CLOEXEC != 0 {
		t.Fatal("the test descriptor should start inheritable")
	}
	keepInheritedFilesFromChildren()
	if flags()&syscall.FD_CLOEXEC == 0 {
		t.Error("an inherited descriptor would reach dockerd, which outlives the command holding it")
	}
}
