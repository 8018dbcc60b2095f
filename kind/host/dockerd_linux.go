package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ectest/ectest/internal/progress"
)

// oNoFollow refuses to open a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// dockerdPidFile is dockerd's default pid file, systemd's unit's too.
const dockerdPidFile = "/var/run/docker.pid"

// startDockerd starts the engine: through systemd where it runs the
// machine, by hand otherwise (these VMs' PID 1 is not systemd).
func startDockerd(ctx context.Context, logf func(string, ...any)) (err error) {
	if isSystemd() {
		if out, err := exec.CommandContext(ctx, "systemctl", "start", "docker").CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl start docker: %v: %s", err, out)
		}
	} else {
		step := progress.Start(logf, fmt.Sprintf("starting dockerd (log: %s)", dockerdLog))
		defer step.End(&err) // the named result: the block's err below is another
		logFile, err := os.OpenFile(dockerdLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
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

// stopDockerd stops the engine; containers without a restart policy stop
// with it (unless live-restore is on).
func stopDockerd(ctx context.Context, logf func(string, ...any)) error {
	if isSystemd() {
		if out, err := exec.CommandContext(ctx, "systemctl", "stop", "docker").CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl stop docker: %v: %s", err, out)
		}
		return nil
	}
	pid := dockerdPid()
	if pid == 0 {
		return nil
	}
	logf("stopping dockerd (pid %d)", pid)
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 600 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond) // no event to wait on for another process's exit
	}
	if syscall.Kill(pid, 0) == nil {
		return fmt.Errorf("dockerd (pid %d) did not stop within 30s", pid)
	}
	return nil
}

// reloadDockerd makes the running engine read its configuration again
// (SIGHUP: runtimes and default-runtime are among the keys Docker 20.10
// reloads; bip and address pools are not).
func reloadDockerd(ctx context.Context) error {
	if isSystemd() && exec.CommandContext(ctx, "systemctl", "is-active", "--quiet", "docker").Run() == nil {
		if out, err := exec.CommandContext(ctx, "systemctl", "reload", "docker").CombinedOutput(); err != nil {
			return fmt.Errorf("systemctl reload docker: %v: %s", err, out)
		}
		return nil
	}
	pid := dockerdPid()
	if pid == 0 {
		return fmt.Errorf("no dockerd pid in %s to send SIGHUP to", dockerdPidFile)
	}
	return syscall.Kill(pid, syscall.SIGHUP)
}

// dockerdPid is the system engine's pid (its pid file), 0 when none runs.
func dockerdPid() int {
	b, err := os.ReadFile(dockerdPidFile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 || !isDockerd(pid) {
		return 0
	}
	return pid
}

// dockerdConfigFile is the daemon.json of the engine with pid (its
// --config-file), DaemonJSON without one.
func dockerdConfigFile(pid int) string {
	if pid == 0 {
		return DaemonJSON
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return DaemonJSON
	}
	return configFileArg(strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"))
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
