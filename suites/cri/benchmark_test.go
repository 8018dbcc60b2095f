package cri_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/report"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gmeasure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

const benchmarkSamples = 20

var _ = Describe("Debug container latency", framework.Label(framework.LabelCRI, framework.LabelBenchmark, framework.LabelLinuxOnly), func() {
	It("measures create+start of a PID TARGET debug container against a regular container in the same sandbox, and the time to its first successful exec", func(ctx SpecContext) {
		f := newFramework()
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		target := f.StartTarget(ctx, sb, cri.TargetOptions{Name: "target"})
		e := gmeasure.NewExperiment("CRI debug container latency")
		AddReportEntry(e.Name, e)

		for i := 0; i < benchmarkSamples; i++ {
			for _, kind := range []struct {
				measurement string
				opts        cri.DebugOptions
			}{
				{"regular container create+start", cri.DebugOptions{Name: fmt.Sprintf("regular-%d", i)}},
				{"debug container (PID TARGET) create+start", cri.DebugOptions{Name: fmt.Sprintf("debug-%d", i), PID: cri.Mode(runtimeapi.NamespaceMode_TARGET), TargetID: target.ID}},
			} {
				start := time.Now()
				c := f.StartDebug(ctx, sb, kind.opts)
				e.RecordDuration(kind.measurement, time.Since(start))
				if kind.opts.TargetID != "" {
					firstExec(ctx, f, c)
					e.RecordDuration("debug container CreateContainer to first successful ExecSync", time.Since(start))
				}
				Expect(f.StopContainer(ctx, c)).To(Succeed())
				Expect(f.RemoveContainer(ctx, c)).To(Succeed())
			}
		}
		stats, err := report.WriteBenchmark(env.ReportDir, fmt.Sprintf("benchmark-cri-%d.json", GinkgoParallelProcess()), e,
			map[string]string{"runtime": env.Runtime.Name + " " + env.Runtime.Version, "profile": env.Profile.Name})
		Expect(err).NotTo(HaveOccurred())
		for _, s := range stats {
			fmt.Fprintf(GinkgoWriter, "%-64s n=%d p50=%v p95=%v\n", s.Name, s.Samples, s.P50, s.P95)
			AddReportEntry(s.Name, fmt.Sprintf("n=%d p50=%v p95=%v", s.Samples, s.P50, s.P95), ReportEntryVisibilityAlways)
		}
	}, SpecTimeout(framework.DefaultTimeouts.Benchmark))
})

// firstExec polls ExecSync until it succeeds: the measured moment is when a
// debugger could first run a command.
func firstExec(ctx context.Context, f *cri.Framework, c *cri.Container) {
	GinkgoHelper()
	Eventually(ctx, func() (int32, error) {
		r, err := f.Exec(ctx, c, "true")
		return r.ExitCode, err
	}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(10 * time.Millisecond).Should(BeZero())
}
