// The CRI conformance suite: debug containers and namespace targeting driven
// straight through a CRI endpoint (the embedded containerd by default).
// This file is the suite's only entry point; the other files register specs.
package cri_test

import (
	"context"
	"flag"
	"testing"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/environment"
	"github.com/ectest/ectest/framework/report"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// cfg is filled from flags and validated in TestMain, before any spec is
// registered to run; nothing writes it afterwards.
var cfg framework.Config

func init() { environment.RegisterFlags(flag.CommandLine, &cfg, framework.SuiteCRI) }

func TestMain(m *testing.M) {
	environment.Main(m, &cfg, environment.CheckRuntime, environment.CheckBusybox, func(c *framework.Config) error {
		for _, ep := range []string{c.RuntimeEndpoint, c.ImageEndpoint} {
			if ep == "" {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), framework.DefaultTimeouts.RuntimeCall)
			_, err := cri.Probe(ctx, ep)
			cancel()
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func TestCRI(t *testing.T) { framework.RunSuite(t, "ectest CRI conformance") }

var (
	// handle is process 1's: it owns the registry and the embedded runtime.
	handle *environment.Handle
	// env and session are every process's.
	env     *environment.Environment
	session *cri.Session
)

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	h, err := environment.Up(ctx, &cfg, cfg.RunIDOrNew(), framework.Logf)
	if err != nil {
		Fail("environment: " + err.Error())
	}
	handle = h
	return h.Env.Marshal()
}, func(data []byte) {
	var err error
	env, err = environment.Unmarshal(data)
	Expect(err).NotTo(HaveOccurred())
	session, err = env.Session()
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(framework.DefaultTimeouts.SuiteSetup))

var _ = SynchronizedAfterSuite(func() {
	if session != nil {
		// The sandboxes specs handed on go before the run's leak check.
		removeErr := session.RemoveReusableSandboxes()
		session.Close()
		Expect(removeErr).NotTo(HaveOccurred(), "removing the process's reusable sandboxes")
	}
}, func(ctx SpecContext) {
	if handle == nil {
		return
	}
	leaks, leakErr := handle.Leaks(ctx)
	var removeErr error
	if len(leaks) > 0 {
		removeErr = handle.RemoveLeft(ctx) // still the run's error below, but nothing stays
	}
	downErr := handle.Down(ctx)
	Expect(leakErr).NotTo(HaveOccurred())
	Expect(removeErr).NotTo(HaveOccurred(), "removing what this run left")
	Expect(leaks).To(BeEmpty(), "resources of this run left in the runtime after every spec's cleanup")
	Expect(downErr).NotTo(HaveOccurred(), "tearing the environment down")
}, NodeTimeout(framework.DefaultTimeouts.Cleanup*2))

var _ = ReportAfterSuite("ectest reports", func(r Report) {
	var subject *report.Subject
	if env != nil {
		subject = &report.Subject{Runtime: env.Runtime, Profile: env.Profile.Name, Declared: env.Profile.Capabilities}
	}
	Expect(report.AfterSuite(cfg.ReportDir, r, subject, capability.LayerCRI, cfg.Expect)).To(Succeed())
})

// A spec that failed while the runtime (or the registry) was gone is a run
// error, whatever assertion failed first.
var _ = AfterEach(func() {
	if session != nil {
		session.Checker.CheckAfterFailure()
	}
})

// newFramework is a spec's framework, bound to this process's session. The
// spec skips, with the reason, if the profile declares a capability it
// exercises not applicable; it fails at once as a run error while the
// suite's environment is broken (the runtime went away): a run whose
// runtime died ends within its timeouts instead of each spec waiting out
// its own.
func newFramework(exercises ...capability.Name) *cri.Framework {
	GinkgoHelper()
	for _, n := range exercises {
		session.Checker.RequireApplicable(n)
	}
	f := cri.New(session, exercises...)
	if err := session.Checker.Environment(); err != nil {
		// Each capability the spec exercises is recorded as not judged.
		f.Checker.FailEnvironment(err, "starting the spec")
	}
	return f
}
