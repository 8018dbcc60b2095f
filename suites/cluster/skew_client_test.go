package cluster_test

import (
	"errors"
	"fmt"

	"github.com/ectest/ectest/fixtures/apiproxy"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
)

// throughDouble is a client of the real API server, or (personality not
// empty) of a TEST DOUBLE of fixtures/apiproxy in front of it, started for
// the spec and stopped at its end, its log in the report; and how to name
// the server in evidence.
func throughDouble(f *kube.Framework, personality apiproxy.Personality) (kubernetes.Interface, string) {
	GinkgoHelper()
	// A spec's failure through a double is the suite's own (a run error),
	// through the real server a verdict: the label must say which (a panic,
	// an error of the run, when it does not).
	if labelled := framework.IsTestDouble(CurrentSpecReport().Labels()); labelled != (personality != "") {
		panic(fmt.Sprintf("suite bug: a spec through %q (\"\" is the real server) must carry the label %s exactly when it goes through a test double", personality, framework.LabelTestDouble))
	}
	if personality == "" {
		return f.Client, "the real API server " + env.ServerVersion
	}
	x, err := apiproxy.Start(f.Config, personality)
	if err != nil {
		f.Checker.Fail("start the test double: " + err.Error())
	}
	DeferCleanup(x.Close)
	DeferCleanup(func() { AddReportEntry("what the test double did", x.Log(), ReportEntryVisibilityAlways) })
	client, err := kubernetes.NewForConfig(x.Config())
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	return client, fmt.Sprintf("TEST DOUBLE %q (fixtures/apiproxy) in front of the real API server %s", personality, env.ServerVersion)
}

// SKEW-2 from the client's side: what the suite's client code
// (framework/kube, ephemeralapi.go) concludes about a server, against the
// real API server and against a TEST DOUBLE of older servers
// (fixtures/apiproxy, a loopback proxy in front of the same real server).
// The double is never judged: its entries check the suite's own detection,
// which must say "not served" or "pre-1.22 kind" there and "served" on the
// real server; the real server's entries judge what a client relies on.
var _ = Describe("A client of pods/ephemeralcontainers", framework.Label(framework.LabelCluster, framework.LabelSkew, framework.LabelAPIRelease), func() {
	// One entry per server: the real one, and the double in each personality.
	DescribeTable("tells from discovery and from the server's answers whether the 1.22+ subresource is served, as kubectl debug does, and reports a server without it as unsupported, never as nonconformant [SKEW-2]",
		func(ctx SpecContext, personality apiproxy.Personality) {
			// kube.New, not newFramework: this spec must run on every
			// server, including one that does not serve the subresource.
			f := kube.New(ctx, session, nil)
			pod, err := f.CreatePod(ctx, targetPod(f))
			Expect(err).NotTo(HaveOccurred())
			client, server := throughDouble(f, personality)
			api, err := kube.DiscoverEphemeralAPI(client.Discovery())
			Expect(err).NotTo(HaveOccurred(), "discovery of %s", server)
			AddReportEntry("discovery of "+server, api.String(), ReportEntryVisibilityAlways)
			unsupported := api.Unsupported()
			_, patchErr := f.PatchEphemeral(ctx, client, pod.Name, f.DebugContainer("by-patch", ""))
			AddReportEntry("PATCH through "+server, kube.Rejection(patchErr), ReportEntryVisibilityAlways)

			switch personality {
			case "":
				// The real server: what discovery says and what a write
				// does must agree, and a missing pod's 404 must name the
				// pod, or no client could tell it from "not served".
				_, goneErr := f.PatchEphemeral(ctx, client, "no-such-pod", f.DebugContainer("debugger", ""))
				AddReportEntry("PATCH of a missing pod on "+server, kube.Rejection(goneErr), ReportEntryVisibilityAlways)
				Expect(apierrors.IsNotFound(goneErr)).To(BeTrue(), "a missing pod must get 404 NotFound: %s", kube.Rejection(goneErr))
				Expect(goneErr).NotTo(MatchError(kube.ErrNotServed),
					"server %s: the 404 of a missing pod carries no details.name, so clients (kubectl debug among them) take it for \"ephemeral containers disabled\": %s", env.ServerVersion, kube.Rejection(goneErr))
				if unsupported != "" {
					Expect(errors.Is(patchErr, kube.ErrNotServed) || errors.Is(patchErr, kube.ErrLegacyKind)).To(BeTrue(),
						"discovery says %q, yet the write answered %s", unsupported, kube.Rejection(patchErr))
					Skip(fmt.Sprintf("server %s: %s; the client detected it from discovery and from the write's answer", env.ServerVersion, unsupported))
				}
				Expect(patchErr).NotTo(HaveOccurred(), "discovery lists %s, so a write must work: %s", api, kube.Rejection(patchErr))
				_, updateErr := f.AddEphemeral(ctx, client, pod.Name, f.DebugContainer("by-update", ""))
				Expect(updateErr).NotTo(HaveOccurred(), kube.Rejection(updateErr))
				expectEphemeralNames(ctx, f, pod.Name, "by-patch", "by-update")
			case apiproxy.NotServed:
				Expect(unsupported).To(ContainSubstring("does not list"), "the client must read the double's discovery as: not served")
				_, updateErr := f.AddEphemeral(ctx, client, pod.Name, f.DebugContainer("by-update", ""))
				AddReportEntry("PUT through "+server, kube.Rejection(updateErr), ReportEntryVisibilityAlways)
				// The 404 is the real server's own answer for a subresource
				// it does not serve (the double forwards the call there).
				for what, err := range map[string]error{"PATCH": patchErr, "PUT": updateErr} {
					Expect(err).To(MatchError(kube.ErrNotServed), "%s through the double: the client must read the real server's 404 for an unserved subresource as \"not served\": %s", what, kube.Rejection(err))
					Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the classified error keeps the server's status: %s", kube.Rejection(err))
				}
				expectEphemeralNames(ctx, f, pod.Name)
			case apiproxy.LegacyKind:
				// PUT of the legacy kind is not modelled by the double (the
				// answer of a pre-1.22 server to a Pod body was never read
				// in its code); PATCH is what kubectl debug sends.
				Expect(unsupported).To(ContainSubstring("before Kubernetes 1.22"), "the client must read the double's discovery as: the pre-1.22 kind")
				Expect(patchErr).To(MatchError(kube.ErrLegacyKind), "the double answered in the kind EphemeralContainers; the client must say so: %s", kube.Rejection(patchErr))
				expectEphemeralNames(ctx, f, pod.Name)
			}
		},
		Entry("the real API server", apiproxy.Personality(""), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("TEST DOUBLE: a server that does not serve the subresource", apiproxy.NotServed, framework.Label(framework.LabelTestDouble), SpecTimeout(framework.DefaultTimeouts.Spec)),
		Entry("TEST DOUBLE: a pre-1.22 server (kind EphemeralContainers)", apiproxy.LegacyKind, framework.Label(framework.LabelTestDouble), SpecTimeout(framework.DefaultTimeouts.Spec)),
	)
})
