package framework

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// Config is everything a run is told: plain data, filled from flags,
// validated once before any spec runs, and never written afterwards. It
// knows no runtime, image or node-image catalog: checks against those
// (framework/environment.CheckConfig) are handed to Main by the suites, so
// the core imports nothing above it.
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
	// RunID names the run (the ectest.io/run label of everything it
	// creates); empty: a random one (RunIDOrNew).
	RunID string
	// RemoveLeftovers removes, before the first spec, what earlier runs of
	// the suite left in the runtime (found by their labels); without it
	// they are only reported.
	RemoveLeftovers bool
	// Embedded runtime settings (used only without RuntimeEndpoint).
	// Runtime names the embedded runtime (see runtimes/catalog).
	Runtime    string
	Containerd string
	CNIBinDir  string
	Busybox    string

	// Cluster suites: an existing cluster, or the kind cluster to make (or
	// reuse) by name.
	Kubeconfig string
	// Kind asks for the kind cluster even when $KUBECONFIG or an in-cluster
	// service account names a cluster (-kind).
	Kind bool
	// ClusterSource says where the cluster came from (set when the cluster
	// suite resolves it: -kubeconfig, $KUBECONFIG, in-cluster, kind).
	ClusterSource     string
	ClusterName       string
	KindNodeImage     string
	KubernetesVersion string
	// Topology is the kind cluster's (kind.Topologies: single, skew,
	// skew-pair; "" is single); the cluster suite checks the name.
	Topology    string
	KeepCluster bool
	// NodeRuntime names the offline-built node image's container runtime
	// (the runtime catalog's node runtimes; the default if empty).
	NodeRuntime string
	// RuntimeClass is the RuntimeClass of every pod the cluster suite's
	// specs create ("" for the cluster's default handler).
	RuntimeClass string

	// Suite is the suite whose flags these are.
	Suite Suite
	// RuntimeServiceTimeout and ImageServiceTimeout bound one CRI call and
	// one image pull (Timeouts.RuntimeCall and ImagePull).
	RuntimeServiceTimeout time.Duration
	ImageServiceTimeout   time.Duration
	// Parallel is the number of processes to run the specs in (1: this one).
	Parallel int
	// Expect is the expectation file of known deviations ("builtin": the
	// project's own for the runtime under test; "": none).
	Expect string
	// ShowVersion prints the version and exits.
	ShowVersion bool
	// ProgressURL receives a progress update per spec (sonobuoy's worker
	// listens at http://localhost:$SONOBUOY_PROGRESS_PORT/progress).
	ProgressURL string
	// foreign are the other suite's flags that were given.
	foreign []string
}

// Timeouts are DefaultTimeouts with what the flags change.
func (c *Config) Timeouts() Timeouts {
	t := DefaultTimeouts
	if c.RuntimeServiceTimeout > 0 {
		t.RuntimeCall = c.RuntimeServiceTimeout
	}
	if c.ImageServiceTimeout > 0 {
		t.ImagePull = c.ImageServiceTimeout
	}
	return t
}

// Choices are what the flags' help names and defaults to from the catalogs
// above the core (embedded runtimes, node runtimes, the host's busybox);
// framework/environment.Choices fills them.
type Choices struct {
	Runtimes           []string
	NodeRuntimes       []string
	DefaultNodeRuntime string
	GVisorRuntimeClass string
	Busybox            string
}

// Suite names a suite binary: each has its own flags.
type Suite string

// The suites.
const (
	// SuiteCRI is the CRI suite (suites/cri, cri.test): a runtime endpoint.
	SuiteCRI Suite = "cri"
	// SuiteCluster is the cluster suite (suites/cluster, cluster.test): a
	// cluster, given or made with kind.
	SuiteCluster Suite = "cluster"
)

// title names the suite in messages.
func (s Suite) title() string {
	if s == SuiteCRI {
		return "CRI"
	}
	return string(s)
}

// binary names the suite's test binary in messages.
func (s Suite) binary() string { return string(s) + ".test" }

// other is the other suite.
func (s Suite) other() Suite {
	if s == SuiteCRI {
		return SuiteCluster
	}
	return SuiteCRI
}

// RegisterFlags binds the configuration to a flag set for one suite, naming
// in the help what ch offers. Names follow critest where they overlap, and
// critest's own names are aliases where the meaning is the same. The other
// suite's flags are registered too, to be refused by Validate with one line
// that says which suite they belong to.
func RegisterFlags(fs *flag.FlagSet, c *Config, ch Choices, suite Suite) {
	c.Suite = suite
	fs.StringVar(&c.ReportDir, "report-dir", defaultReportDir(), "directory for junit_01.xml, ginkgo-report.json, matrix.json, matrix.md, summary.json (docs/reports.md)")
	fs.StringVar(&c.RegistryAddr, "registry-addr", "127.0.0.1:0", "address of the in-process test registry: loopback (a fixed port, e.g. 127.0.0.1:5000, for a runtime configured to pull from it over plain HTTP), or for a cluster given by kubeconfig an address of this machine its nodes reach (docs/cluster.md: the nodes' runtime pulls from it over plain HTTP)")
	fs.StringVar(&c.Profile, "profile", "auto", "runtime profile: a builtin name, a profile file, auto (pick from the CRI Version and runtime handler), or probe (declare nothing: run every capability's specs, judge only what every runtime must support, and write observed-profile.yaml; exit 4 when done)")
	fs.StringVar(&c.ImagesFile, "images-file", "", "YAML file overriding the test images per OS (docs/running.md)")
	fs.StringVar(&c.Busybox, "busybox", ch.Busybox, "static busybox for the debug image the suite builds (at the default path, Debian's busybox-static is installed when missing, never when -runtime-endpoint is given)")
	fs.IntVar(&c.Parallel, ParallelFlag, 1, "run the specs in N processes (also -parallel N, critest's name; the Ginkgo CLI is built in), with the same exit codes and last line as a serial run")
	fs.StringVar(&c.Expect, "expect", "", "expectation file of known deviations (the format of runtimes/expected), or builtin for the project's own for the runtime under test: exit 0 when the verdicts are exactly as expected, 1 when they changed")
	fs.BoolVar(&c.ShowVersion, "version", false, "print the suite's version and exit")
	fs.StringVar(&c.ProgressURL, "progress-url", "", "POST a progress update (sonobuoy's format: total, completed, failures) to this http URL before the first spec and after each, e.g. http://localhost:8099/progress in a sonobuoy plugin (deploy/sonobuoy)")
	fs.StringVar(&c.RunID, "run-id", "", "name of this run instead of a random one: the label ectest.io/run of everything it creates, by which its cleanup and leak check find them (lower-case letters, digits and '-', at most 16; unique among the runs against one runtime or cluster), e.g. a CI job's")
	suiteFlags(fs, c, ch, suite)
	// The other suite's flags, refused (Validate) with a line naming their suite.
	scratch := flag.NewFlagSet("", flag.ContinueOnError)
	suiteFlags(scratch, &Config{}, ch, suite.other())
	scratch.VisitAll(func(f *flag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		b, _ := f.Value.(interface{ IsBoolFlag() bool })
		fs.Var(&foreignFlag{name: f.Name, of: suite.other(), isBool: b != nil && b.IsBoolFlag(), cfg: c}, f.Name, "(a flag of the "+suite.other().title()+" suite: refused here)")
	})
}

// suiteFlags are the flags of one suite only.
func suiteFlags(fs *flag.FlagSet, c *Config, ch Choices, suite Suite) {
	switch suite {
	case SuiteCRI:
		fs.StringVar(&c.RuntimeEndpoint, "runtime-endpoint", "", "CRI runtime endpoint (unix:///path or npipe:////./pipe/name); empty starts the embedded containerd")
		fs.StringVar(&c.ImageEndpoint, "image-endpoint", "", "CRI image endpoint (default: the runtime endpoint)")
		fs.StringVar(&c.RuntimeHandler, "runtime-handler", "", "runtime handler (RuntimeClass) for sandboxes")
		fs.Var(alias{&c.ImagesFile}, "test-images-file", "critest's name of -images-file")
		fs.StringVar(&c.WindowsBuild, "windows-build", "", "Windows nodes: the node's OS build (ltsc2019, ltsc2022, ltsc2025 or a build number) that picks the images file's set; default: this machine's")
		fs.BoolVar(&c.RemoveLeftovers, "remove-leftovers", false, "before the first spec, remove the sandboxes and containers earlier runs of this suite left in the runtime (found by their ectest.io labels; without it they are only reported): never while another run against the same runtime is going")
		fs.StringVar(&c.Runtime, "runtime", DefaultRuntime, "embedded runtime to start without -runtime-endpoint ("+strings.Join(ch.Runtimes, ", ")+")")
		fs.StringVar(&c.Containerd, "embedded-containerd", DefaultContainerd, "containerd binary for the embedded runtime")
		fs.StringVar(&c.CNIBinDir, "embedded-cni-bin-dir", DefaultCNIBinDir(), "CNI plugin directory for the embedded runtime")
		fs.DurationVar(&c.RuntimeServiceTimeout, "runtime-service-timeout", DefaultTimeouts.RuntimeCall, "bound of one CRI call that pulls nothing (critest's name)")
		fs.DurationVar(&c.ImageServiceTimeout, "image-service-timeout", DefaultTimeouts.ImagePull, "bound of one image pull (critest's name)")
	case SuiteCluster:
		fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "use this existing cluster and create nothing; without it, as kubectl finds one: $KUBECONFIG (one file), then the service account of the pod the suite runs in, and only when neither is there a kind cluster (saying so)")
		fs.BoolVar(&c.Kind, "kind", false, "make (or reuse) the kind cluster even when $KUBECONFIG or an in-cluster service account names a cluster (any of the kind flags below says the same)")
		fs.StringVar(&c.KindNodeImage, "kind-node-image", "", "kind node image to use (e.g. a stock kindest/node) instead of building one offline")
		fs.StringVar(&c.KubernetesVersion, "kubernetes-version", "", "Kubernetes version of the offline-built node image (default: the newest pinned release)")
		fs.StringVar(&c.Topology, "topology", "", "the kind cluster's nodes: single (default), skew (a control plane of N and one worker per kubelet release of versions.yaml's skewKubelets, N..N-3, for the skew specs), or skew-pair (one worker of N-1); each has its own default cluster name")
		fs.BoolVar(&c.KeepCluster, "keep-cluster", false, "leave the kind cluster running at the end")
		fs.StringVar(&c.ClusterName, "cluster-name", "", "name of the kind cluster to make, or to reuse when it runs (default ectest)")
		fs.StringVar(&c.NodeRuntime, "node-runtime", "", "container runtime of the offline-built node image ("+strings.Join(ch.NodeRuntimes, ", ")+"; default "+ch.DefaultNodeRuntime+")")
		fs.StringVar(&c.RuntimeClass, "runtime-class", "", "RuntimeClass of the pods the specs create (e.g. "+ch.GVisorRuntimeClass+" on a -node-runtime=containerd-2-gvisor cluster); default: the cluster's default handler")
	}
}

// alias is a second name of a string flag.
type alias struct{ p *string }

func (a alias) String() string {
	if a.p == nil {
		return ""
	}
	return *a.p
}
func (a alias) Set(v string) error { *a.p = v; return nil }

// foreignFlag is a flag of the other suite: given, Validate refuses it.
type foreignFlag struct {
	name   string
	of     Suite
	isBool bool
	cfg    *Config
}

func (f *foreignFlag) String() string   { return "" }
func (f *foreignFlag) IsBoolFlag() bool { return f.isBool }
func (f *foreignFlag) Set(string) error {
	f.cfg.foreign = append(f.cfg.foreign, fmt.Sprintf("-%s is a flag of the %s suite (%s), not of the %s suite (%s)", f.name, f.of.title(), f.of.binary(), f.of.other().title(), f.of.other().binary()))
	return nil
}

// ParallelFlag is the flag -parallel N is read as: Ginkgo refuses a set
// flag named "parallel" (it takes it for go test's, which does not run
// Ginkgo specs in parallel), so parseFlags renames critest's -parallel.
const ParallelFlag = "procs"

// renameParallel turns -parallel (and --parallel) into -procs.
func renameParallel(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, p := range []string{"-parallel", "--parallel"} {
			if a == p || strings.HasPrefix(a, p+"=") {
				a = "-" + ParallelFlag + strings.TrimPrefix(a, p)
			}
		}
		out[i] = a
	}
	return out
}

// DefaultRuntime is the embedded runtime without -runtime (the names are
// the runtime catalog's; environment.CheckConfig checks the flag).
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

// Validate checks what the configuration says by itself: flags that
// exclude each other, addresses, paths. What needs a catalog or a file
// (profile, images file, runtime names) is environment.CheckConfig's, and
// what needs the runtime (does it answer) the suites' own checks.
func (c *Config) Validate() error {
	var errs []error
	for _, f := range c.foreign {
		errs = append(errs, errors.New(f))
	}
	if c.Parallel < 1 {
		errs = append(errs, fmt.Errorf("-parallel %d: at least 1", c.Parallel))
	}
	if c.RuntimeServiceTimeout < 0 || c.ImageServiceTimeout < 0 {
		errs = append(errs, errors.New("-runtime-service-timeout and -image-service-timeout must not be negative"))
	}
	if c.ImageEndpoint != "" && c.RuntimeEndpoint == "" {
		errs = append(errs, errors.New("-image-endpoint needs -runtime-endpoint"))
	}
	if c.Runtime != DefaultRuntime && c.RuntimeEndpoint != "" {
		errs = append(errs, errors.New("-runtime names an embedded runtime; -runtime-endpoint names yours: give one"))
	}
	if c.Suite == SuiteCRI && c.RuntimeEndpoint == "" && runtime.GOOS != "linux" {
		errs = append(errs, errors.New("the embedded runtime exists only on Linux: give -runtime-endpoint"))
	}
	if _, _, err := net.SplitHostPort(c.RegistryAddr); err != nil {
		errs = append(errs, fmt.Errorf("-registry-addr %q: %v", c.RegistryAddr, err))
	}
	if c.ReportDir == "" {
		errs = append(errs, errors.New("-report-dir is empty"))
	} else if err := checkReportDir(c.ReportDir, MinReportDirFree); err != nil {
		errs = append(errs, err)
	}
	if c.ProgressURL != "" {
		if u, err := url.Parse(c.ProgressURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("-progress-url %q: an http or https URL", c.ProgressURL))
		}
	}
	if c.RunID != "" && !runIDPattern.MatchString(c.RunID) {
		errs = append(errs, fmt.Errorf("-run-id %q: lower-case letters, digits and '-' (not first or last), at most 16", c.RunID))
	}
	if c.Kubeconfig != "" {
		if _, err := os.Stat(c.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("-kubeconfig: %v", err))
		}
		if c.KindRequested() {
			errs = append(errs, errors.New("-kubeconfig names an existing cluster: -kind, -kind-node-image, -kubernetes-version, -node-runtime, -topology, -cluster-name and -keep-cluster do not apply"))
		}
	}
	if c.KindNodeImage != "" && c.NodeRuntime != "" {
		errs = append(errs, errors.New("-kind-node-image is used as given: -node-runtime (the runtime of a node image built here) does not apply"))
	}
	return errors.Join(errs...)
}

// KindRequested says whether a flag asks for the kind cluster: -kind, or
// one that only a kind cluster made (or reused) here has.
func (c *Config) KindRequested() bool {
	return c.Kind || c.KindNodeImage != "" || c.KubernetesVersion != "" || c.KeepCluster || c.NodeRuntime != "" || c.ClusterName != "" || c.Topology != ""
}

// ImageEndpointOrDefault is the image service endpoint to dial.
func (c *Config) ImageEndpointOrDefault() string {
	if c.ImageEndpoint != "" {
		return c.ImageEndpoint
	}
	return c.RuntimeEndpoint
}

// Exit prints err as one line, prefixed with "ectest:", and exits 2; or
// 3, the line saying RUN FAILED, when every problem is the environment's
// (no room for the reports, a report folder another run holds).
func Exit(err error) {
	if environmentOnly(err) {
		fmt.Fprintf(os.Stderr, "ectest: RUN FAILED: %s; nothing ran, no verdict (exit %d)\n", oneLine(err), ExitRunFailed)
		os.Exit(ExitRunFailed)
	}
	fmt.Fprintln(os.Stderr, "ectest: "+oneLine(err))
	os.Exit(ExitBadInput)
}

// environmentOnly says whether err (one error or a join) is envErrors only.
func environmentOnly(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !environmentOnly(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	var env envError
	return errors.As(err, &env)
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

// runIDPattern is what -run-id takes: a label value, a DNS label and part
// of one (the CRI namespace "ectest-<run>").
var runIDPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$`)

// RunIDOrNew is -run-id, or a new random run ID.
func (c *Config) RunIDOrNew() string {
	if c.RunID != "" {
		return c.RunID
	}
	return NewRunID()
}

// NewRunID names one run: everything it creates carries it.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
