package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	utilexec "k8s.io/client-go/util/exec"
)

// serverMinor is the discovered API server's minor version: expectations
// that changed across releases are chosen from it, not hard-coded.
func serverMinor() int {
	v, err := version.ParseGeneric(env.ServerVersion)
	if err != nil {
		return 0
	}
	return int(v.Minor())
}

func execProbe() *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
}

func resourceQty(s string) resource.Quantity { return resource.MustParse(s) }

// run runs a command in a container through the API server for a check:
// the suite's own action, not what the spec observes. A command that ran
// returns its output and, when it exited non-zero, its exit error, for the
// check to judge (cat of a file the runtime should have denied fails
// there). An exec that could not run the command at all (the API server,
// the stream) fails the spec through Checker.Fail, which tells an error of
// the suite's environment apart: it is never the runtime's deviation.
// (RunEphemeral already checked that exec into the container works.)
func run(ctx context.Context, f *kube.Framework, pod, container string, stdin io.Reader, cmd ...string) (stdout, stderr string, exitErr error) {
	GinkgoHelper()
	stdout, stderr, err := f.Exec(ctx, pod, container, stdin, false, cmd...)
	var ee utilexec.ExitError
	if err != nil && !errors.As(err, &ee) {
		f.Checker.Fail(fmt.Sprintf("exec %q in %s/%s: %v\n%s%s", cmd, pod, container, err, stdout, stderr))
	}
	return stdout, stderr, err
}

// processes lists a container's processes for a check (see run): ps is
// the suite's own tool, so its failure is the suite's, never the runtime's.
func processes(ctx context.Context, f *kube.Framework, pod, container string) ([]cri.Process, string) {
	GinkgoHelper()
	procs, raw, err := f.Processes(ctx, pod, container)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("list the processes in %s/%s: %v", pod, container, err))
	}
	return procs, raw
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
