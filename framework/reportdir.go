package framework

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
)

// MinReportDirFree is the free space a run needs in its report folder
// before the first spec: about ten times a whole CRI run's report set
// (1.5 MiB with the embedded runtime's log, -parallel=4).
const MinReportDirFree = 16 << 20

// ReportDirLock is the file in the report folder a run holds locked
// (flock) while it runs, its PID inside; removed at the run's end.
const ReportDirLock = ".ectest-run.lock"

// reportDirHeldEnv names the report folder this process's parent holds
// locked (-parallel's spec processes and dry run do not lock it again).
const reportDirHeldEnv = "ECTEST_REPORT_DIR_HELD"

// envError is a check's failure that is the environment's, not the
// input's: Exit ends with 3 (the run could not be done), not 2.
type envError struct{ error }

func (e envError) Unwrap() error { return e.error }

// checkReportDir says whether dir can take a report set: a folder, or one
// that can be made, this process can write, with at least min bytes free.
func checkReportDir(dir string, min uint64) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("-report-dir %s: %v", dir, err)
	}
	// The folder, or its nearest ancestor that exists.
	p := abs
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("-report-dir %s: %s is not a directory", dir, p)
			}
			break
		}
		if filepath.Dir(p) == p {
			return fmt.Errorf("-report-dir %s: %v", dir, err)
		}
		p = filepath.Dir(p)
	}
	if p == abs {
		f, err := os.CreateTemp(abs, ".ectest-probe-*")
		if err != nil {
			return fmt.Errorf("-report-dir %s is not writable: %v", dir, cause(err))
		}
		f.Close()
		os.Remove(f.Name())
	} else if err := writableDir(p); err != nil {
		return fmt.Errorf("-report-dir %s cannot be made: %s is not writable: %v", dir, p, err)
	}
	if free, ok := freeBytes(p); ok && free < min {
		return envError{fmt.Errorf("-report-dir %s: %s free on its file system, a run needs %s for its reports", dir, mib(free), mib(min))}
	}
	return nil
}

// cause is a path error's cause alone (the path is named already).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// holdReportDir locks the report folder for the run, refusing with one
// line and exit 3 when another run holds it, and returns the release. A
// -parallel run's driver holds it for all its processes; under a bare
// ginkgo -p, process 1 does. A dry run only checks that it is free.
func holdReportDir(cfg *Config) (release func()) {
	suiteConfig, _ := ginkgo.GinkgoConfiguration()
	dir, err := filepath.Abs(cfg.ReportDir)
	if err != nil || os.Getenv(reportDirHeldEnv) == dir || suiteConfig.ParallelTotal > 1 && suiteConfig.ParallelProcess != 1 {
		return func() {}
	}
	release, err = lockReportDir(dir)
	if err != nil {
		Exit(envError{err})
	}
	if suiteConfig.DryRun {
		release()
		return func() {}
	}
	os.Setenv(reportDirHeldEnv, dir)
	return release
}

// heldError says which run holds a report folder.
type heldError struct {
	dir, pid string
	since    time.Time
}

func (e heldError) Error() string {
	pid := "PID " + e.pid
	if e.pid == "" {
		pid = "its PID not yet written"
	}
	if !e.since.IsZero() {
		pid += ", since " + e.since.Format("15:04:05")
	}
	return fmt.Sprintf("-report-dir %s is in use by another run (%s; lock %s): two runs would overwrite each other's reports; wait for it to end or give this run a folder of its own",
		e.dir, pid, ReportDirLock)
}

// readHolder reads the PID a lock file holds, waiting briefly for a run
// that has just taken it to write it.
func readHolder(f *os.File) string {
	for i := 0; i < 10; i++ {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		if pid := strings.TrimSpace(string(b[:n])); pid != "" {
			if _, err := strconv.Atoi(pid); err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ""
}
