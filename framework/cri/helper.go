package cri

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/helper"
	"github.com/onsi/ginkgo/v2"
)

// HelperResult is the answer of the suite's helper program.
type HelperResult = helper.Result

// RequireDebugHelper skips the spec when the debug image is not the one the
// suite built: a debug image of an -images-file has no /ectest-helper.
func (f *Framework) RequireDebugHelper() {
	ginkgo.GinkgoHelper()
	if !images.Built(f.Images[images.Debug], images.Debug, f.Registry) {
		ginkgo.Skip(fmt.Sprintf("the debug image %s is not the suite's own, so it has no %s (ptrace attach, SysV shared memory lookups) to observe with", f.Images[images.Debug], helper.Path))
	}
}

// Helper runs the suite's helper program (fixtures/programs/helper) in c
// with ExecSync: mode with one numeric argument (a PID, a key). The answer
// is the kernel's (ok, or an errno); err is a failed exec or an answer
// that is no helper result, with what the exec printed.
func (f *Framework) Helper(ctx context.Context, c *Container, mode string, arg int) (HelperResult, ExecResult, error) {
	r, err := f.Exec(ctx, c, helper.Path, mode, strconv.Itoa(arg))
	if err != nil {
		return HelperResult{}, r, err
	}
	res, err := helper.ParseResult(r.Stdout)
	if err != nil {
		return res, r, fmt.Errorf("in %s: %w\n%s", c.Name, err, r)
	}
	return res, r, nil
}

// HostProcessesWith lists the processes on this machine whose command line
// contains s (a spec's token), as "PID: argv"; ok is false when the
// runtime is not on this machine (a unix socket endpoint), where this
// cannot be decided. A sandboxed runtime (gVisor) runs container processes
// in its own kernel, where the host does not see them.
func HostProcessesWith(endpoint, s string) (procs []string, ok bool) {
	if !strings.HasPrefix(endpoint, "unix://") {
		return nil, false
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if filepath.Base(d) == strconv.Itoa(os.Getpid()) {
			continue
		}
		procs = append(procs, filepath.Base(d)+": "+strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")))
	}
	return procs, true
}
