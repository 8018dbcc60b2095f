package environment

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs"
	"github.com/ectest/ectest/fixtures/registry"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/kind/nodeimage"
	"github.com/ectest/ectest/runtimes"
	"github.com/ectest/ectest/runtimes/embedded"
	"github.com/ectest/ectest/runtimes/expected"
)

// Choices are the catalogs' names and defaults the suites' flags offer.
func Choices() framework.Choices {
	ch := framework.Choices{DefaultNodeRuntime: nodeimage.DefaultNodeRuntime, GVisorRuntimeClass: nodeimage.GVisorRuntimeClass, Busybox: images.DefaultBusybox}
	for _, f := range embedded.Flavors {
		ch.Runtimes = append(ch.Runtimes, f.Name)
	}
	for _, rt := range nodeimage.NodeRuntimes {
		ch.NodeRuntimes = append(ch.NodeRuntimes, rt.Name)
	}
	return ch
}

// RegisterFlags binds a suite's configuration to fs, with the catalogs'
// names in the help.
func RegisterFlags(fs *flag.FlagSet, c *framework.Config, suite framework.Suite) {
	framework.RegisterFlags(fs, c, Choices(), suite)
}

// Main is a suite's TestMain. A binary started as one of the suite's
// programs (the target or pause of the test images, fixtures/programs) runs
// that program; otherwise framework.Main parses the flags and runs
// CheckConfig, then the suite's own checks, before any spec.
func Main(m *testing.M, cfg *framework.Config, checks ...func(*framework.Config) error) {
	programs.Dispatch()
	first := []func(*framework.Config) error{CheckConfig}
	if cfg.Suite == framework.SuiteCluster {
		first = []func(*framework.Config) error{ResolveCluster, CheckConfig}
	}
	framework.Main(m, cfg, append(first, checks...)...)
}

// CheckConfig checks what the configuration names against the catalogs and
// files above the core: the profile, the images file, the Windows build,
// the node runtime and the RuntimeClass it offers, the Kubernetes version.
// Suites hand it to framework.Main.
func CheckConfig(c *framework.Config) error {
	var errs []error
	if _, err := runtimes.Load(c.Profile); err != nil {
		errs = append(errs, err)
	}
	if _, err := ImagesFile(c); err != nil {
		errs = append(errs, err)
	}
	if c.WindowsBuild != "" {
		if _, err := images.WindowsBuild(c.WindowsBuild); err != nil {
			errs = append(errs, fmt.Errorf("-windows-build: %w", err))
		}
	}
	if rt, err := nodeimage.LookupNodeRuntime(c.NodeRuntime); err != nil {
		errs = append(errs, fmt.Errorf("-node-runtime: %w", err))
	} else if c.RuntimeClass != "" && c.Kubeconfig == "" && c.KindNodeImage == "" && rt.Handler(c.RuntimeClass) == "" {
		// The suite's own cluster offers only its node runtime's classes; a
		// given cluster's are checked against the cluster itself.
		offers := "none"
		if len(rt.RuntimeClasses) > 0 {
			offers = strings.Join(rt.RuntimeClassNames(), ", ")
		}
		errs = append(errs, fmt.Errorf("-runtime-class %q: a kind cluster with the node runtime %s offers RuntimeClasses: %s (containerd-2-gvisor offers %s)", c.RuntimeClass, rt.Name, offers, nodeimage.GVisorRuntimeClass))
	}
	if err := checkVendorBusybox(c); err != nil {
		errs = append(errs, err)
	}
	if c.Expect != "" {
		if _, err := expected.Load(c.Expect); err != nil {
			errs = append(errs, err)
		}
	}
	if c.KubernetesVersion != "" {
		if _, err := nodeimage.ParseVersion(c.KubernetesVersion); err != nil {
			errs = append(errs, err)
		}
	}
	if host, _, err := net.SplitHostPort(c.RegistryAddr); err == nil && !registry.Allowed(host) {
		errs = append(errs, fmt.Errorf("-registry-addr %s: give a loopback address, one in 198.18.0.0/15, or an address of this machine's own interfaces where the nodes reach it (not every interface at once)", c.RegistryAddr))
	}
	return errors.Join(errs...)
}

// ImagesFile is the images file the configuration names (nil without one).
func ImagesFile(c *framework.Config) (*images.File, error) {
	if c.ImagesFile == "" {
		return nil, nil
	}
	return images.LoadFile(c.ImagesFile)
}

// inputs are the files the configuration names, loaded again where a run
// starts (CheckConfig has checked them).
type inputs struct {
	images  *images.File
	profile *runtimes.Profile
}

func loadInputs(c *framework.Config) (in inputs, err error) {
	if in.images, err = ImagesFile(c); err != nil {
		return in, err
	}
	in.profile, err = runtimes.Load(c.Profile)
	return in, err
}
