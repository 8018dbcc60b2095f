package cluster_test

import (
	"fmt"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/report"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gmeasure"
	corev1 "k8s.io/api/core/v1"
)

const clusterBenchmarkSamples = 20

var _ = Describe("Ephemeral container latency on a cluster", framework.Label(framework.LabelCluster, framework.LabelBenchmark), func() {
	It("measures subresource update to Running for an ephemeral container, with its image present and with a pull, against pod create to Running", func(ctx SpecContext) {
		f := newFramework(ctx)
		e := gmeasure.NewExperiment("cluster ephemeral container latency")
		AddReportEntry(e.Name, e)
		running := func(name string) func(*corev1.Pod) bool {
			return func(p *corev1.Pod) bool {
				s := kube.EphemeralStatus(p, name)
				return s != nil && s.State.Running != nil
			}
		}
		for i := 0; i < clusterBenchmarkSamples; i++ {
			p := targetPod(f)
			p.Name = fmt.Sprintf("bench-%d", i)
			start := time.Now()
			_, err := f.CreatePod(ctx, p)
			Expect(err).NotTo(HaveOccurred())
			f.WaitPod(ctx, p.Name, "running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
			e.RecordDuration("regular pod: create to Running (image present)", time.Since(start))

			start = time.Now()
			_, err = f.AddEphemeral(ctx, f.Client, p.Name, f.DebugContainer("present", "target"))
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			f.WaitPod(ctx, p.Name, "running the ephemeral container", running("present"))
			e.RecordDuration("ephemeral container: subresource update to Running (image present)", time.Since(start))

			ref, err := images.Variant(ctx, f.Images[images.Debug], fmt.Sprintf("bench-%s-%d", f.Token, i), fmt.Sprintf("%s-%d", f.Token, i))
			Expect(err).NotTo(HaveOccurred())
			ec := f.DebugContainer("pulled", "target")
			ec.Image = ref
			start = time.Now()
			_, err = f.AddEphemeral(ctx, f.Client, p.Name, ec)
			Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
			f.WaitPod(ctx, p.Name, "running the ephemeral container", running("pulled"))
			e.RecordDuration("ephemeral container: subresource update to Running (image pulled)", time.Since(start))
		}
		stats, err := report.WriteBenchmark(env.ReportDir, fmt.Sprintf("benchmark-cluster-%d.json", GinkgoParallelProcess()), e,
			map[string]string{"server": env.ServerVersion, "runtime": env.Runtime.Name + " " + env.Runtime.Version})
		Expect(err).NotTo(HaveOccurred())
		for _, s := range stats {
			AddReportEntry(s.Name, fmt.Sprintf("n=%d p50=%v p95=%v", s.Samples, s.P50, s.P95), ReportEntryVisibilityAlways)
		}
	}, SpecTimeout(framework.DefaultTimeouts.Benchmark))
})
