package framework

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/kind/nodeimage"
	"github.com/ectest/ectest/runtimes"
)

// Config is everything a run is told. It is filled from flags, validated
// once before any spec runs, and never written afterwards.
type Config struct {
	// RuntimeEndpoint is the CRI runtime under test (unix:// or npipe://).
	// Empty: start the embedded containerd.
	RuntimeEndpoint string
	// ImageEndpoint is the CRI image service (RuntimeEndpoint if empty).
	ImageEndpoint string
	// RuntimeHandler is the RuntimeClass handler for sandboxes.
	RuntimeHandler string
	// Profile is a builtin profile name, a profile file, or "auto".
	Profile string
	// ImagesFile overrides the suite's images (see fixtures/images.File).
	ImagesFile string
	// WindowsBuild is the Windows node's OS build (a release name such as
	// ltsc2022, or a build number); empty reads this machine's on Windows.
	WindowsBuild string
	// ReportDir receives JUnit, JSON, matrix and benchmark reports.
	ReportDir string
	// RegistryAddr is where the in-process loopback registry listens.
	RegistryAddr string
	// Embedded runtime settings (used only without RuntimeEndpoint).
	// Runtime names the embedded runtime (see runtimes/embedded.Flavors).
	Runtime    string
	Containerd string
	CNIBinDir  string
	Busybox    string

	// Cluster suites: an existing cluster, or the kind cluster to make (or
	// reuse) by name.
	Kubeconfig        string
	ClusterName       string
	KindNodeImage     string
	KubernetesVersion string
	// Topology is the kind cluster's (kind.Topologies: single, skew,
	// skew-pair; "" is single); the cluster suite checks the name.
	Topology    string
	KeepCluster bool
	// NodeRuntime names the offline-built node image's container runtime
	// (kind/nodeimage.NodeRuntimes; the default if empty).
	NodeRuntime string
	// RuntimeClass is the RuntimeClass of every pod the cluster suite's
	// specs create ("" for the cluster's default handler).
	RuntimeClass string

	// Filled by Validate.
	LoadedProfile *runtimes.Profile `json:"-"`
	LoadedImages  *images.File      `json:"-"`
}

// RegisterFlags binds the configuration to a flag set. Names follow critest
// where they overlap.
func RegisterFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.RuntimeEndpoint, "runtime-endpoint", "", "CRI runtime endpoint (unix:///path or npipe:////./pipe/name); empty starts the embedded containerd")
	fs.StringVar(&c.ImageEndpoint, "image-endpoint", "", "CRI image endpoint (default: the runtime endpoint)")
	fs.StringVar(&c.RuntimeHandler, "runtime-handler", "", "runtime handler (RuntimeClass) for sandboxes")
	fs.StringVar(&c.Profile, "profile", runtimes.Auto, "runtime profile: a builtin name, a profile file, auto (pick from the CRI Version and runtime handler), or probe (declare nothing: run every capability's specs, judge only what every runtime must support, and write observed-profile.yaml; exit 4 when done)")
	fs.StringVar(&c.ImagesFile, "images-file", "", "YAML file overriding the test images per OS (see README)")
	fs.StringVar(&c.WindowsBuild, "windows-build", "", "Windows nodes: the node's OS build (ltsc2019, ltsc2022, ltsc2025 or a build number) that picks the images file's set; default: this machine's")
	fs.StringVar(&c.ReportDir, "report-dir", defaultReportDir(), "directory for junit_01.xml, ginkgo-report.json, matrix.json, matrix.md")
	fs.StringVar(&c.RegistryAddr, "registry-addr", "127.0.0.1:0", "loopback address of the in-process test registry")
	fs.StringVar(&c.Runtime, "runtime", DefaultRuntime, "embedded runtime to start without -runtime-endpoint (containerd-1.6, containerd-1.7, containerd-2, containerd-2-crun, containerd-2-gvisor; see runtimes/embedded)")
	fs.StringVar(&c.Containerd, "embedded-containerd", DefaultContainerd, "containerd binary for the embedded runtime")
	fs.StringVar(&c.CNIBinDir, "embedded-cni-bin-dir", DefaultCNIBinDir(), "CNI plugin directory for the embedded runtime")
	fs.StringVar(&c.Busybox, "busybox", images.DefaultBusybox, "static busybox for the debug image the suite builds (at the default path, Debian's busybox-static is installed when missing)")
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "cluster suites: use this existing cluster and create nothing")
	fs.StringVar(&c.KindNodeImage, "kind-node-image", "", "cluster suites: kind node image to use (e.g. a stock kindest/node) instead of building one offline")
	fs.StringVar(&c.KubernetesVersion, "kubernetes-version", "", "cluster suites: Kubernetes version of the offline-built node image (default: the newest pinned release)")
	fs.StringVar(&c.Topology, "topology", "", "cluster suites: the kind cluster's nodes: single (default), skew (a control plane of N and one worker per kubelet release of versions.yaml's skewKubelets, N..N-3, for the skew specs), or skew-pair (one worker of N-1); each has its own default cluster name")
	fs.BoolVar(&c.KeepCluster, "keep-cluster", false, "cluster suites: leave the kind cluster running at the end")
	fs.StringVar(&c.ClusterName, "cluster-name", "", "cluster suites: name of the kind cluster to make, or to reuse when it runs (default ectest)")
	fs.StringVar(&c.NodeRuntime, "node-runtime", "", "cluster suites: container runtime of the offline-built node image ("+nodeRuntimeNames()+"; default "+nodeimage.DefaultNodeRuntime+")")
	fs.StringVar(&c.RuntimeClass, "runtime-class", "", "cluster suites: RuntimeClass of the pods the specs create (e.g. "+nodeimage.GVisorRuntimeClass+" on a -node-runtime=containerd-2-gvisor cluster); default: the cluster's default handler")
}

func nodeRuntimeNames() string {
	var names []string
	for _, rt := range nodeimage.NodeRuntimes {
		names = append(names, rt.Name)
	}
	return strings.Join(names, ", ")
}

// DefaultRuntime is the embedded runtime without -runtime (the names are
// runtimes/embedded.Flavors; the CRI suite checks the flag before running).
const DefaultRuntime = "containerd-2"

// DefaultContainerd is the embedded runtime's containerd: Debian's, from
// PATH, installed when missing.
const DefaultContainerd = "containerd"

func defaultReportDir() string {
	if a := os.Getenv("ARTIFACTS"); a != "" {
		return a
	}
	return "_artifacts"
}

// DefaultCNIBinDir is where the host keeps its CNI plugins (Debian: /usr/lib/cni).
func DefaultCNIBinDir() string {
	for _, d := range []string{"/usr/lib/cni", "/opt/cni/bin"} {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			return d
		}
	}
	return "/usr/lib/cni"
}

// Validate checks the configuration and loads the files it names. Checks
// that need the runtime (is the endpoint a socket, does it answer) are the
// CRI package's Preflight.
func (c *Config) Validate() error {
	var errs []error
	if c.ImageEndpoint != "" && c.RuntimeEndpoint == "" {
		errs = append(errs, errors.New("-image-endpoint needs -runtime-endpoint"))
	}
	if c.Runtime != DefaultRuntime && c.RuntimeEndpoint != "" {
		errs = append(errs, errors.New("-runtime names an embedded runtime; -runtime-endpoint names yours: give one"))
	}
	if c.RuntimeEndpoint == "" && runtime.GOOS != "linux" {
		errs = append(errs, errors.New("the embedded runtime exists only on Linux: give -runtime-endpoint"))
	}
	p, err := runtimes.Load(c.Profile)
	if err != nil {
		errs = append(errs, err)
	}
	c.LoadedProfile = p
	if c.ImagesFile != "" {
		f, err := images.LoadFile(c.ImagesFile)
		if err != nil {
			errs = append(errs, err)
		}
		c.LoadedImages = f
	}
	if c.WindowsBuild != "" {
		if _, err := images.WindowsBuild(c.WindowsBuild); err != nil {
			errs = append(errs, fmt.Errorf("-windows-build: %w", err))
		}
	}
	if _, _, err := net.SplitHostPort(c.RegistryAddr); err != nil {
		errs = append(errs, fmt.Errorf("-registry-addr %q: %v", c.RegistryAddr, err))
	}
	if c.ReportDir == "" {
		errs = append(errs, errors.New("-report-dir is empty"))
	}
	if c.Kubeconfig != "" {
		if _, err := os.Stat(c.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("-kubeconfig: %v", err))
		}
		if c.KindNodeImage != "" || c.KubernetesVersion != "" || c.KeepCluster || c.NodeRuntime != "" || c.ClusterName != "" || c.Topology != "" {
			errs = append(errs, errors.New("-kubeconfig names an existing cluster: -kind-node-image, -kubernetes-version, -node-runtime, -topology, -cluster-name and -keep-cluster do not apply"))
		}
	}
	if c.KindNodeImage != "" && c.NodeRuntime != "" {
		errs = append(errs, errors.New("-kind-node-image is used as given: -node-runtime (the runtime of a node image built here) does not apply"))
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
	if c.KubernetesVersion != "" {
		if _, err := nodeimage.ParseVersion(c.KubernetesVersion); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ImageEndpointOrDefault is the image service endpoint to dial.
func (c *Config) ImageEndpointOrDefault() string {
	if c.ImageEndpoint != "" {
		return c.ImageEndpoint
	}
	return c.RuntimeEndpoint
}

// Exit prints err as one line per problem, prefixed with "ectest:", and exits 2.
func Exit(err error) {
	fmt.Fprintln(os.Stderr, "ectest: "+oneLine(err))
	os.Exit(2)
}

func oneLine(err error) string {
	s := err.Error()
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' {
			out = append(out, ';', ' ')
			continue
		}
		out = append(out, r)
	}
	return string(out)
}

// NewRunID names one run: everything it creates carries it.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
