package cri_test

import (
	"fmt"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/framework/environment"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// requireWindowsNode skips, saying so, on a node that is not Windows: the
// specs below check what a Windows run uses (WIN-3, WIN-5), which a Linux
// node does not have.
func requireWindowsNode() {
	GinkgoHelper()
	if !session.Windows() {
		Skip(fmt.Sprintf("about Windows nodes; this node runs %s (%s)", session.OS, env.Runtime.OSEvidence))
	}
}

var _ = Describe("What a Windows run uses", framework.Label(framework.LabelCRI, framework.LabelWindows), func() {
	// WIN-3. The image judged is the one the runtime reports for a debug
	// container it runs (its ImageRef), by that image's own config as the
	// runtime reports it (containerd's verbose ImageStatus: os,
	// os.version), against the node's OS build, by hcsshim's rule
	// (images.WindowsCompatible). An image the node cannot run is the run's
	// images file's fault, never the runtime's: an environment error.
	It("the debug image is a Windows image of an OS build the node can run, by hcsshim's compatibility rule [WIN-3]", func(ctx SpecContext) {
		requireWindowsNode()
		f := newFramework()
		node := env.Runtime.WindowsBuild
		imagesFile, err := environment.ImagesFile(&cfg)
		if err != nil {
			f.Checker.Fail("the images file: " + err.Error())
		}
		release, releaseBuild := imagesFile.WindowsRelease(node)
		sb := f.RunSandbox(ctx, cri.SandboxOptions{})
		dbg := f.StartDebug(ctx, sb, cri.DebugOptions{Name: "debug"})
		st, err := f.Status(ctx, dbg)
		if err != nil {
			f.Checker.Fail("ContainerStatus of the debug container: " + cri.StatusText(err))
		}
		ref := st.GetImageRef()
		if ref == "" {
			ref = st.GetImage().GetImage()
		}
		Expect(ref).NotTo(BeEmpty(), "the runtime reports no image for the running debug container %s", dbg.ID)
		is, err := f.Image.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}, Verbose: true})
		if err != nil {
			f.Checker.Fail(fmt.Sprintf("ImageStatus of the debug container's image %s: %s", ref, cri.StatusText(err)))
		}
		Expect(is.GetImage()).NotTo(BeNil(), "the runtime runs the debug container from %s, yet ImageStatus does not know that image", ref)
		platform, ok := cri.ImagePlatform(is.GetInfo())
		evidence := fmt.Sprintf("node OS build %d; the images file's release for it %q (build %d); debug image asked for %s, the runtime reports %s (ImageRef %s); its config: %+v (reported: %v)",
			node, release, releaseBuild, f.Images[images.Debug], st.GetImage().GetImage(), st.GetImageRef(), platform, ok)
		AddReportEntry("debug image", evidence, ReportEntryVisibilityAlways)
		if !ok {
			Skip("the runtime's verbose ImageStatus carries no image config (containerd's imageSpec): the image's own OS build cannot be read; " + evidence)
		}
		known, compatible, why := images.WindowsImageMatch(node, platform.OS, platform.OSVersion)
		switch {
		case !known:
			Skip(why + "; " + evidence)
		case !compatible:
			Fail(fmt.Sprintf("%sthe debug image cannot run on this node (WIN-3): %s. Give -images-file a windows set, under the node's release, of images built for it\n  %s", capability.EnvironmentErrorPrefix, why, evidence))
		}
		AddReportEntry("WIN-3", why, ReportEntryVisibilityAlways)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	// WIN-5, as the run reaches the runtime: through a named pipe, which
	// must answer Version as a CRI v1 runtime.
	It("a Windows run's CRI endpoint is a named pipe, and the runtime answers Version on it [WIN-5]", func(ctx SpecContext) {
		requireWindowsNode()
		ep, err := cri.ParseEndpoint(env.RuntimeEndpoint)
		Expect(err).NotTo(HaveOccurred())
		if ep.Scheme != "npipe" {
			Skip(fmt.Sprintf("this Windows run reaches its runtime through %s, not a named pipe: dialing one needs a Windows host (the Windows self-test reaches its 'Windows' runtime through the CRI proxy's unix socket; framework/cri's npipe test runs on Windows only)", env.RuntimeEndpoint))
		}
		v, err := session.Runtime.Runtime.Version(ctx, &runtimeapi.VersionRequest{Version: "v1"})
		Expect(err).NotTo(HaveOccurred(), "Version on the named pipe %s: %s", ep.Raw, cri.StatusText(err))
		AddReportEntry("Version on "+ep.Raw, fmt.Sprintf("%s %s, CRI %s", v.GetRuntimeName(), v.GetRuntimeVersion(), v.GetRuntimeApiVersion()), ReportEntryVisibilityAlways)
		Expect(v.GetRuntimeApiVersion()).To(Equal("v1"), "the runtime on %s answers Version, but not as a CRI v1 runtime: %+v", ep.Raw, v)
		Expect(v.GetRuntimeName()).NotTo(BeEmpty(), "the runtime on %s answers Version without a name: %+v", ep.Raw, v)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))

	// WIN-5, as the runtime says: containerd's verbose Status carries its
	// own gRPC address, where it serves the CRI (containerdEndpoint), which
	// on Windows must be a named pipe, whichever way this run reaches it.
	It("the Windows runtime serves its CRI on a named pipe, as its own configuration reports [WIN-5]", func(ctx SpecContext) {
		requireWindowsNode()
		st, err := session.Runtime.Runtime.Status(ctx, &runtimeapi.StatusRequest{Verbose: true})
		Expect(err).NotTo(HaveOccurred(), "verbose Status: %s", cri.StatusText(err))
		served, ok := cri.ServedEndpoint(st.GetInfo())
		if !ok {
			Skip("the runtime's verbose Status names no address of its own (containerd's config containerdEndpoint): where it serves the CRI cannot be read")
		}
		AddReportEntry("the runtime's own address", fmt.Sprintf("%s (this run reaches it through %s)", served, env.RuntimeEndpoint), ReportEntryVisibilityAlways)
		Expect(cri.IsNamedPipe(served)).To(BeTrue(), "the runtime on this Windows node serves its CRI on %q, not a named pipe (WIN-5: \\\\.\\pipe\\<name>, npipe:////./pipe/<name>)", served)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})
