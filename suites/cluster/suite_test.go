// The cluster conformance suite: ephemeral containers through the Kubernetes
// API and a real kubelet, on the suite's offline kind cluster or any cluster
// given by -kubeconfig. This file is the suite's only entry point; the other
// files register specs.
package cluster_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/environment"
	"github.com/ectest/ectest/framework/kube"
	"github.com/ectest/ectest/framework/report"
	"github.com/ectest/ectest/kind"
	"github.com/ectest/ectest/kind/nodeimage"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// cfg is filled from flags and validated in TestMain; nothing writes it afterwards.
var cfg framework.Config

func init() { environment.RegisterFlags(flag.CommandLine, &cfg, framework.SuiteCluster) }

func TestMain(m *testing.M) {
	environment.Main(m, &cfg, environment.CheckBusybox, func(c *framework.Config) error {
		t, err := kind.ParseTopology(c.Topology)
		if err != nil {
			return fmt.Errorf("-topology: %w", err)
		}
		if t != kind.TopologySingle && c.KindNodeImage != "" {
			return fmt.Errorf("-topology=%s: its workers' node images are built here, each with its own kubelet; -kind-node-image does not apply", t)
		}
		if t != kind.TopologySingle {
			v := c.KubernetesVersion
			if v == "" {
				v = nodeimage.DefaultKubernetesVersion
			}
			cp, err := nodeimage.ParseVersion(v)
			if err != nil {
				return err
			}
			if _, err := t.Workers(cp); err != nil {
				return err
			}
		}
		if c.Kubeconfig == "" {
			return nil // the suite's own kind cluster, made in BeforeSuite
		}
		if _, err := kube.Probe(c.Kubeconfig, framework.DefaultTimeouts.RuntimeCall); err != nil {
			return err
		}
		return kube.ProbeRuntimeClass(c.Kubeconfig, c.RuntimeClass, framework.DefaultTimeouts.RuntimeCall)
	})
}

func TestCluster(t *testing.T) { framework.RunSuite(t, "ectest cluster conformance") }

var (
	handle  *environment.ClusterHandle
	env     *environment.ClusterEnvironment
	session *kube.Session
)

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	h, err := environment.UpCluster(ctx, &cfg, cfg.RunIDOrNew(), framework.Logf)
	if err != nil {
		Fail("cluster environment: " + err.Error())
	}
	handle = h
	return h.Env.Marshal()
}, func(data []byte) {
	var err error
	env, err = environment.UnmarshalCluster(data)
	Expect(err).NotTo(HaveOccurred())
	session, err = env.Session()
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(framework.DefaultTimeouts.ClusterSetup))

var _ = SynchronizedAfterSuite(func(ctx SpecContext) {
	if session != nil {
		Expect(session.CloseObservers(ctx)).To(Succeed(), "removing the node observers")
	}
}, func(ctx SpecContext) {
	if handle == nil {
		return
	}
	// Every process is done: the namespaces their specs emptied go now,
	// all at once (and those of a process that died).
	deleteErr := handle.DeleteNamespaces(ctx)
	leaks, leakErr := handle.Leaks(ctx, framework.Logf)
	failed := CurrentSpecReport().Failed() || len(leaks) > 0
	downErr := handle.Down(context.Background(), failed)
	Expect(deleteErr).NotTo(HaveOccurred(), "deleting the run's namespaces")
	Expect(leakErr).NotTo(HaveOccurred())
	Expect(leaks).To(BeEmpty(), "objects of this run left in the cluster after every spec's cleanup")
	Expect(downErr).NotTo(HaveOccurred(), "tearing the cluster environment down")
}, NodeTimeout(framework.DefaultTimeouts.DrainLimit+framework.DefaultTimeouts.Cleanup*2))

var _ = ReportAfterSuite("ectest reports", func(r Report) {
	var subject *report.Subject
	if env != nil {
		subject = &report.Subject{Runtime: env.Runtime, Profile: env.Profile.Name, Declared: env.Profile.Capabilities, KubeletLayers: env.KubeletLayers()}
	}
	Expect(report.AfterSuite(cfg.ReportDir, r, subject, capability.LayerCluster, cfg.Expect)).To(Succeed())
})

// A spec that failed while the suite's environment was broken (the API
// server or the registry gone) is a run error, whatever assertion failed
// first.
var _ = AfterEach(func() {
	if session != nil {
		session.Checker.CheckAfterFailure()
	}
})

// newFramework creates the spec's namespace (its pods deleted when the spec
// ends, the namespace at the end of the run)
// and skips, with the reason, when the profile declares a capability the
// spec exercises not applicable.
func newFramework(ctx context.Context, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	return newFrameworkWithLabels(ctx, nil, exercises...)
}

// newPrivilegedFramework is newFramework with the namespace at the
// privileged Pod Security level, for specs whose pods need host namespaces
// or added capabilities: on a cluster given by -kubeconfig whose default
// level is stricter, they would otherwise be refused by admission.
func newPrivilegedFramework(ctx context.Context, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	return newFrameworkWithLabels(ctx, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}, exercises...)
}

// newFrameworkWithLabels is newFramework with labels on the namespace
// (a Pod Security level, say). On a server whose discovery does not offer
// the 1.22+ pods/ephemeralcontainers API every such spec skips, saying why
// (SKEW-2: a client detects it; no verdict on what the server does not
// serve).
func newFrameworkWithLabels(ctx context.Context, labels map[string]string, exercises ...capability.Name) *kube.Framework {
	GinkgoHelper()
	if why := env.EphemeralAPI.Unsupported(); why != "" {
		Skip(fmt.Sprintf("server %s: %s", env.ServerVersion, why))
	}
	for _, n := range exercises {
		session.Checker.RequireApplicable(n)
	}
	return kube.New(ctx, session, labels, exercises...)
}
