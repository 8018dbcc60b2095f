package embedded

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// A child started with Pdeathsig survives the death of the suite's other
// threads: goroutines that lock a thread and end without unlocking it (the
// oracle's setns) make the Go runtime end that thread, and a Pdeathsig
// child forked from it would be killed (golang/go#27505).
func TestPdeathsigChildOutlivesDyingThreads(t *testing.T) {
	// One P: the thread that started the child is the one the next
	// goroutines run on, unless it stays locked.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	exited, err := startOnLockedThread(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); <-exited }()
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // never unlocked: this thread ends with the goroutine
		}()
		wg.Wait()
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the child died with a thread of its parent: %v", err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the child exited: %v", err)
	default:
	}
}
