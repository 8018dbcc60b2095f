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

			ref, err := images.Variant(ctx, f.Images[images.Debug], f.Registry, fmt.Sprintf("bench-%s-%d", f.Token, i), fmt.Sprintf("%s-%d", f.Token, i))
			Expect(err).NotTo(HaveOccurred())
			pulled := f.DebugContainer("pulled", "target")
			pulled.Image = ref
			// The first ephemeral container after the pod turned Running
			// waits longer (the kubelet is still syncing the new pod), so
			// the two kinds take turns going first, and the position is
			// measured on its own.
			order := []corev1.EphemeralContainer{f.DebugContainer("present", "target"), pulled}
			if i%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for pos, ec := range order {
				start = time.Now()
				_, err = f.AddEphemeral(ctx, f.Client, p.Name, ec)
				Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
				f.WaitPod(ctx, p.Name, "running the ephemeral container", running(ec.Name))
				d := time.Since(start)
				e.RecordDuration(map[string]string{
					"present": "ephemeral container: subresource update to Running (image present)",
					"pulled":  "ephemeral container: subresource update to Running (image pulled)",
				}[ec.Name], d)
				e.RecordDuration([]string{
					"any ephemeral container: the first after the pod turned Running",
					"any ephemeral container: the second, on a settled pod",
				}[pos], d)
			}
		}
		stats, err := report.WriteBenchmark(env.ReportDir, fmt.Sprintf("benchmark-cluster-%d.json", GinkgoParallelProcess()), e,
			map[string]string{"server": env.ServerVersion, "runtime": env.Runtime.Name + " " + env.Runtime.Version})
		Expect(err).NotTo(HaveOccurred())
		for _, s := range stats {
			AddReportEntry(s.Name, fmt.Sprintf("n=%d p50=%v p95=%v", s.Samples, s.P50, s.P95), ReportEntryVisibilityAlways)
		}
	}, SpecTimeout(framework.DefaultTimeouts.Benchmark))
})
