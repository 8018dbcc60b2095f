package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/ectest/ectest/internal/progress"
)

// startDockerd (re)starts the engine: through systemd where it runs the
// machine, by hand otherwise (these VMs' PID 1 is not systemd).
func startDockerd(ctx context.Context, logf func(string, ...any), restart bool) (err error) {
	if isSystemd() {
		verb := "start"
		if restart {
			verb = "restart"
		}
		if out, err := exec.CommandContext(ctx, "systemctl", verb, "docker").CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl %s docker: %v: %s", verb, err, out)
		}
	} else {
		if b, err := os.ReadFile("/var/run/docker.pid"); err == nil {
			var pid int
			if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 && isDockerd(pid) {
				logf("stopping dockerd (pid %d) to apply its configuration", pid)
				_ = syscall.Kill(pid, syscall.SIGTERM)
				for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
					time.Sleep(50 * time.Millisecond) // no event to wait on for another process's exit
				}
			}
		}
		step := progress.Start(logf, fmt.Sprintf("starting dockerd (log: %s)", dockerdLog))
		defer step.End(&err) // the named result: the block's err below is another
		logFile, err := os.OpenFile(dockerdLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer logFile.Close()
		// dockerd outlives this process: it must not inherit the files this
		// process inherited (a `flock LOCK cmd` lock's descriptor, say, which
		// dockerd would then hold, and the lock with it, until it stops).
		keepInheritedFilesFromChildren()
		cmd := exec.Command("dockerd")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start dockerd: %w", err)
		}
		go func() { _ = cmd.Wait() }()
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := dockerInfo(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dockerd did not answer within 60s (%v); see %s", err, dockerdLog)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// isDockerd guards against a stale pid file naming another process.
func isDockerd(pid int) bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && string(comm) == "dockerd\n"
}

// keepInheritedFilesFromChildren marks every descriptor above stderr
// close-on-exec. Go opens its own files that way, but descriptors this
// process inherited (flock(1) passes its lock's) stay open across exec and
// would reach every child, a daemon too.
func keepInheritedFilesFromChildren() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
