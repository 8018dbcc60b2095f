// Package environment brings up what a run needs before specs start, once
// per run (parallel process 1): the loopback registry, the test images, the
// embedded containerd when no endpoint is given, and the runtime profile.
// Down takes all of it away again and returns every error.
package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/registry"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/internal/hostdeps"
	"github.com/ectest/ectest/runtimes"
	"github.com/ectest/ectest/runtimes/embedded"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Environment is what every parallel process needs to know about the run.
// It is serialized from process 1 to the others.
type Environment struct {
	RunID           string                 `json:"runID"`
	RuntimeEndpoint string                 `json:"runtimeEndpoint"`
	ImageEndpoint   string                 `json:"imageEndpoint"`
	RuntimeHandler  string                 `json:"runtimeHandler"`
	Runtime         capability.RuntimeInfo `json:"runtime"`
	Profile         *runtimes.Profile      `json:"profile"`
	Images          images.Set             `json:"images"`
	Registry        string                 `json:"registry"`
	LogRoot         string                 `json:"logRoot"`
	ReportDir       string                 `json:"reportDir"`
	// Timeouts are the run's (-runtime-service-timeout and
	// -image-service-timeout change DefaultTimeouts').
	Timeouts framework.Timeouts `json:"timeouts"`
}

// Marshal and Unmarshal carry the environment between parallel processes.
func (e *Environment) Marshal() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return b
}

// Unmarshal decodes what Marshal produced.
func Unmarshal(b []byte) (*Environment, error) {
	var e Environment
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("environment from process 1: %w", err)
	}
	return &e, nil
}

// Handle owns what Up started.
type Handle struct {
	Env      *Environment
	registry *registry.Registry
	embedded *embedded.Runtime
	// pulled are images this run pulled into a runtime that did not have
	// them; Down removes them from runtimes the suite does not own.
	pulled []string
}

// CheckRuntime checks -runtime names an embedded runtime (bad input otherwise).
func CheckRuntime(c *framework.Config) error {
	if _, err := embedded.LookupFlavor(c.Runtime); err != nil {
		return fmt.Errorf("-runtime: %w", err)
	}
	return nil
}

// Up brings the environment up, saying through logf what it does. On
// error, what was started is stopped again.
func Up(ctx context.Context, cfg *framework.Config, runID string, logf func(string, ...any)) (h *Handle, err error) {
	h = &Handle{Env: &Environment{RunID: runID, RuntimeHandler: cfg.RuntimeHandler, ReportDir: cfg.ReportDir, Timeouts: cfg.Timeouts()}}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Down(context.Background()))
			h = nil
		}
	}()
	in, err := loadInputs(cfg)
	if err != nil {
		return h, err
	}
	if err := os.MkdirAll(cfg.ReportDir, 0o755); err != nil {
		return h, err
	}
	// A directory of the run's own, made new (0700): a fixed name in the
	// temporary directory could be another user's, or a link, choosing
	// where the runtime writes container logs.
	if h.Env.LogRoot, err = os.MkdirTemp("", "ectest-logs-"+runID+"-"); err != nil {
		return h, err
	}

	// The node's OS: the embedded runtime's is Linux; a given runtime's is
	// what its endpoint and its answers say (cri.DetectOS).
	node := cri.NodeOS{OS: "linux", Evidence: "the suite's embedded runtime"}
	if cfg.RuntimeEndpoint != "" {
		dctx, cancel := context.WithTimeout(ctx, h.Env.Timeouts.RuntimeCall)
		node, err = cri.DetectOS(dctx, cfg.RuntimeEndpoint)
		cancel()
		if err != nil {
			return h, err
		}
	}
	nodeOS := node.OS
	// Images: on Linux the suite's own, but those the images file names; a
	// Windows node runs the images file's windows set for its OS build.
	var windowsSet images.Set
	var build uint16
	if nodeOS == "windows" {
		if build, err = windowsBuild(cfg.WindowsBuild); err != nil {
			return h, err
		}
		windowsSet = in.images.For(nodeOS, build)
		if !windowsSet.HasImages(images.Debug, images.Target) {
			return h, fmt.Errorf("no images for this Windows node (OS build %d): the suite builds Linux images only, so give -images-file with a windows set, naming debug and target, this build can run (its own build before 20348; from 20348, any from 20348 up to %d)", build, build)
		}
		logf("Windows node, OS build %d (%s); debug image tools: %s", build, node.Evidence, windowsSet.Tools(nodeOS))
	}
	var binDir string
	var flavor embedded.Flavor
	if cfg.RuntimeEndpoint == "" {
		if flavor, err = embedded.LookupFlavor(cfg.Runtime); err != nil {
			return h, err
		}
		if installsRuntime(cfg, flavor) {
			cache, err := os.UserCacheDir()
			if err != nil {
				return h, err
			}
			if binDir, err = flavor.Install(ctx, filepath.Join(cache, "ectest"), logf); err != nil {
				return h, fmt.Errorf("embedded runtime: %w", err)
			}
		}
	}
	if h.registry, err = registry.Start(cfg.RegistryAddr); err != nil {
		return h, err
	}
	h.Env.Registry = h.registry.Addr()
	// The suite serves its own Linux images wherever it runs on Linux; a
	// Windows node runs its images file's set instead (the Windows
	// self-test's set names the suite's own, served here).
	if runtime.GOOS == "linux" {
		if h.Env.Images, err = buildImages(ctx, cfg, in.images.For("linux", 0), h.Env.Registry, logf); err != nil {
			return h, err
		}
	}
	if nodeOS == "windows" {
		h.Env.Images = windowsSet
	}
	if cfg.RuntimeEndpoint != "" && h.Env.Images[images.Pause] != "" {
		// A runtime configured by hand pins its sandbox image by this
		// digest (docs/certify.md), never by a tag on a port.
		logf("sandbox (pause) image served by this run: %s", h.Env.Images[images.Pause])
	}

	// Runtime: the given endpoint, or the embedded containerd.
	h.Env.RuntimeEndpoint, h.Env.ImageEndpoint = cfg.RuntimeEndpoint, cfg.ImageEndpointOrDefault()
	if cfg.RuntimeEndpoint == "" {
		logf("starting the embedded runtime %s (%s)", flavor.Name, flavor.Description)
		containerd := cfg.Containerd
		if binDir != "" {
			containerd = "" // the flavor's own
		}
		o := flavor.Options(binDir)
		o.Containerd, o.CNIBinDir, o.RegistryAddr = containerd, cfg.CNIBinDir, h.Env.Registry
		o.SandboxImage, o.LogPath = h.Env.Images[images.Pause], filepath.Join(cfg.ReportDir, flavor.LogName())
		h.embedded, err = embedded.Start(ctx, o)
		if err != nil {
			return h, err
		}
		h.Env.RuntimeEndpoint, h.Env.ImageEndpoint = h.embedded.Endpoint(), h.embedded.Endpoint()
		if h.Env.RuntimeHandler == "" {
			h.Env.RuntimeHandler = flavor.Handler
		}
	}
	v, err := cri.Probe(ctx, h.Env.RuntimeEndpoint)
	if err != nil {
		return h, err
	}
	if err := waitReady(ctx, h.Env.RuntimeEndpoint, h.Env.Timeouts); err != nil {
		return h, err
	}
	if err := h.earlierRuns(ctx, cfg.RemoveLeftovers, logf); err != nil {
		return h, fmt.Errorf("the leftovers of earlier runs: %w", err)
	}
	h.Env.Runtime = capability.RuntimeInfo{
		Name: v.RuntimeName, Version: v.RuntimeVersion, APIVersion: v.RuntimeApiVersion,
		Endpoint: h.Env.RuntimeEndpoint, OS: nodeOS, OSEvidence: node.Evidence, WindowsBuild: build, Embedded: h.embedded != nil,
		Handler: h.Env.RuntimeHandler,
	}
	if h.Env.Runtime.Handler == "" {
		h.Env.Runtime.Handler = "default"
	}
	if h.embedded != nil {
		h.Env.Runtime.Flavor = flavor.Name
		if e := flavor.Runtime.Embedded; e != nil {
			h.Env.Runtime.Note = e.Note
		}
		h.Env.Runtime.OCIRuntime = flavor.OCIRuntimeVersion(ctx, binDir)
	}
	if strings.HasPrefix(h.Env.RuntimeEndpoint, "unix://") && nodeOS == "linux" {
		h.Env.Runtime.Kernel, h.Env.Runtime.Cgroups = hostKernel(), hostCgroups()
	}
	var note string
	if h.Env.Profile, note, err = runtimes.Resolve(cfg.Profile, in.profile, v.RuntimeName, nodeOS, build, h.Env.RuntimeHandler); err != nil {
		return h, err
	}
	if note != "" {
		logf("%s", note)
	}
	if h.Env.Profile.OS != nodeOS {
		return h, fmt.Errorf("profile %s is for %s nodes, but the runtime runs on %s (%s)", h.Env.Profile.Name, h.Env.Profile.OS, nodeOS, node.Evidence)
	}
	logf("runtime %s %s (CRI %s) at %s, profile %s", v.RuntimeName, v.RuntimeVersion, v.RuntimeApiVersion, h.Env.RuntimeEndpoint, h.Env.Profile.Name)
	// Pre-pull the images every spec uses, so parallel specs do not race to
	// pull them (the pull-at-debug-time spec uses an image of its own).
	if err := h.prePull(ctx, h.Env.Images[images.Debug], h.Env.Images[images.Target]); err != nil {
		return h, err
	}
	if os.Getenv(SelfTestRegistryDown) == "1" {
		logf("SELF-TEST (%s=1): stopping the loopback registry after setup; specs that need it must report an environment error, never a nonconformance", SelfTestRegistryDown)
		err := h.registry.Close()
		h.registry = nil
		return h, err
	}
	return h, nil
}

// waitReady waits for the runtime's Status to report RuntimeReady and
// NetworkReady (Timeouts.RuntimeReady): a runtime that is not ready is the
// run's error, named with the runtime's own reason, and no spec runs
// against it (a sandbox it cannot network would read as nonconformant).
func waitReady(ctx context.Context, endpoint string, t framework.Timeouts) error {
	conn, err := cri.Dial(endpoint)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Each Status within EnvironmentProbe, so that one that hangs (a
	// containerd still starting its CRI plugin) is asked again; the
	// runtime's own answer is what the error names, when it gave one.
	var last error
	answered := false
	err = wait.PollUntilContextTimeout(ctx, t.Poll, t.RuntimeReady, true, func(pctx context.Context) (bool, error) {
		cctx, cancel := context.WithTimeout(pctx, t.EnvironmentProbe)
		defer cancel()
		err := cri.Readiness(cctx, conn.Runtime)
		var nr *cri.NotReadyError
		switch {
		case errors.As(err, &nr):
			last, answered = err, true
		case !answered && pctx.Err() == nil:
			last = err
		}
		return err == nil, nil
	})
	if err == nil {
		return nil
	}
	if last == nil {
		last = fmt.Errorf("the runtime did not answer Status: %v", err)
	}
	return fmt.Errorf("%v (still after %s; the kubelet keeps a node NotReady on this; docs/certify.md)", last, t.RuntimeReady)
}

// installsRuntime says whether Up makes the embedded flavor ready
// (Flavor.Install: its host packages, HostPurposes, and its builds): only
// for the suite's own runtime, never with -runtime-endpoint, and not for
// Debian's containerd replaced by -embedded-containerd.
func installsRuntime(cfg *framework.Config, flavor embedded.Flavor) bool {
	if cfg.RuntimeEndpoint != "" {
		return false
	}
	return cfg.Containerd == framework.DefaultContainerd || len(flavor.Programs) > 0
}

// windowsBuild is the Windows node's OS build: given (-windows-build), or
// this machine's.
func windowsBuild(given string) (uint16, error) {
	if given != "" {
		return images.WindowsBuild(given)
	}
	if b := localWindowsBuild(); b != 0 {
		return b, nil
	}
	return 0, fmt.Errorf("the Windows node's OS build is unknown here: give -windows-build")
}

// SelfTestRegistryDown names the environment variable that makes the CRI
// suite stop its registry right after setup: a self-test of the verdict
// model (hack/selftest.sh), never set in a conformance run.
const SelfTestRegistryDown = "ECTEST_SELFTEST_REGISTRY_DOWN"

// hostKernel is this machine's kernel release.
func hostKernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// hostCgroups names this machine's cgroup layout.
func hostCgroups() string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return "v2 (unified)"
	}
	if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
		return "v1 with a v2 hierarchy at /sys/fs/cgroup/unified (hybrid)"
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err == nil {
		return "v1"
	}
	return ""
}

// buildImages builds and pushes the suite's Linux images that the images
// file does not name, installing the debug image's busybox when it is
// missing at its default place and the runtime is the suite's own
// (busyboxPlan: never with -runtime-endpoint).
func buildImages(ctx context.Context, cfg *framework.Config, override images.Set, registry string, logf func(string, ...any)) (images.Set, error) {
	if override.HasImages(images.Roles...) {
		return override, nil
	}
	install, err := busyboxPlan(cfg, override, fileExists)
	if err != nil {
		return nil, err
	}
	if install {
		if err := hostdeps.Ensure(ctx, logf, hostdeps.DebugImage); err != nil {
			return nil, fmt.Errorf("debug image: %w (or give a debug image with -images-file)", err)
		}
	}
	start := time.Now()
	set, err := images.BuildAndPush(ctx, registry, images.BuildOptions{Busybox: cfg.Busybox, NoDebug: override[images.Debug] != ""})
	if err != nil {
		return nil, err
	}
	logf("test images built and served at %s in %s", registry, time.Since(start).Round(100*time.Millisecond))
	return images.Merge(set, override), nil
}

func (h *Handle) prePull(ctx context.Context, refs ...string) error {
	conn, err := cri.Dial(h.Env.ImageEndpoint)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, ref := range refs {
		st, err := conn.Image.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		if err != nil {
			return fmt.Errorf("ImageStatus %s: %s", ref, cri.StatusText(err))
		}
		if st.Image != nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, h.Env.Timeouts.ImagePull)
		resp, err := conn.Image.PullImage(pctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
		cancel()
		if err != nil {
			return fmt.Errorf("pull %s (the runtime must be able to pull from the loopback registry %s over plain HTTP): %s", ref, h.Env.Registry, cri.StatusText(err))
		}
		h.pulled = append(h.pulled, resp.ImageRef)
	}
	return nil
}

// Leaks lists sandboxes and containers of this run still present in the
// runtime: after all specs' cleanups ran there must be none.
func (h *Handle) Leaks(ctx context.Context) ([]string, error) {
	left, err := h.left(ctx, map[string]string{cri.LabelRun: h.Env.RunID}, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, sb := range left.Sandboxes {
		out = append(out, fmt.Sprintf("%s (%s)", sb.Id, sb.Metadata.GetName()))
	}
	for _, c := range left.Containers {
		out = append(out, fmt.Sprintf("container %s (%s)", c.Id, c.Metadata.GetName()))
	}
	return out, nil
}

// left finds the suite's sandboxes and containers by selector, those of
// run except left out.
func (h *Handle) left(ctx context.Context, selector map[string]string, except string) (cri.Leftover, error) {
	conn, err := cri.Dial(h.Env.RuntimeEndpoint)
	if err != nil {
		return cri.Leftover{}, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, h.Env.Timeouts.RuntimeCall)
	defer cancel()
	return cri.FindLeftovers(cctx, conn.Runtime, selector, except)
}

// RemoveLeft removes every sandbox and container labelled with the run's ID
// that is still in the runtime (what Leaks lists): a run that failed to
// clean up, or was interrupted mid-creation, leaves nothing in a vendor's
// runtime. The leaks are still the run's error. What it cannot remove is
// named in the error with the crictl commands that remove it by hand.
func (h *Handle) RemoveLeft(ctx context.Context) error {
	return h.removeLeftovers(ctx, map[string]string{cri.LabelRun: h.Env.RunID}, "")
}

func (h *Handle) removeLeftovers(ctx context.Context, selector map[string]string, except string) error {
	left, err := h.left(ctx, selector, except)
	if err != nil || left.Empty() {
		return err
	}
	conn, err := cri.Dial(h.Env.RuntimeEndpoint)
	if err != nil {
		return err
	}
	defer conn.Close()
	t := h.Env.Timeouts
	removeErr := left.Remove(ctx, cri.Remover{Runtime: conn.Runtime, Within: t.Cleanup, Call: t.RuntimeCall, Poll: t.Poll})
	still, err := h.left(ctx, selector, except)
	switch {
	case err != nil:
		return errors.Join(removeErr, err)
	case still.Empty():
		return nil
	}
	return fmt.Errorf("%d sandboxes and %d containers could not be removed (%v); remove them by hand: %s", len(still.Sandboxes), len(still.Containers), removeErr, strings.Join(still.Commands(h.Env.RuntimeEndpoint), "; "))
}

// earlierRuns reports, before the first spec, what earlier runs of the
// suite left in a runtime the suite did not start (found by the label
// every sandbox and container of the suite carries), and removes it when
// asked (-remove-leftovers). Never an error of this run: another run
// against the same runtime may be going.
func (h *Handle) earlierRuns(ctx context.Context, remove bool, logf func(string, ...any)) error {
	if h.embedded != nil {
		return nil // a runtime of this run's own, started empty
	}
	sel := map[string]string{cri.LabelSuite: "cri"}
	left, err := h.left(ctx, sel, h.Env.RunID)
	if err != nil || left.Empty() {
		return err
	}
	what := fmt.Sprintf("%d sandboxes and %d containers of other ectest runs (%s) are in this runtime: left by earlier runs, or in use by a run going now", len(left.Sandboxes), len(left.Containers), strings.Join(left.Runs(), ", "))
	if !remove {
		logf("%s; -remove-leftovers removes them (only when no other run is going), or by hand: %s", what, strings.Join(left.Commands(h.Env.RuntimeEndpoint), "; "))
		return nil
	}
	logf("%s; removing them (-remove-leftovers)", what)
	return h.removeLeftovers(ctx, sel, h.Env.RunID)
}

// Down removes pulled images from a runtime the suite does not own, stops
// the embedded runtime, the registry, and removes the log root.
func (h *Handle) Down(ctx context.Context) error {
	var errs []error
	if h.embedded == nil && len(h.pulled) > 0 {
		if conn, err := cri.Dial(h.Env.ImageEndpoint); err == nil {
			for _, ref := range h.pulled {
				if _, err := conn.Image.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err != nil {
					errs = append(errs, fmt.Errorf("RemoveImage %s: %s", ref, cri.StatusText(err)))
				}
			}
			conn.Close()
		}
	}
	if h.embedded != nil {
		errs = append(errs, h.embedded.Stop())
	}
	if strings.HasPrefix(h.Env.RuntimeEndpoint, "unix://") && runtime.GOOS == "linux" {
		// The sandboxes' cgroup parents an interrupted spec left.
		errs = append(errs, cri.RemoveRunCgroups(h.Env.RunID, h.Env.Timeouts.Poll, h.Env.Timeouts.ProcessStop))
	}
	if h.registry != nil {
		errs = append(errs, h.registry.Close())
	}
	if h.Env.LogRoot != "" {
		errs = append(errs, os.RemoveAll(h.Env.LogRoot))
	}
	return errors.Join(errs...)
}

// registryCheck is the environment probe of a session: the loopback
// registry must answer (nil when the run has none).
func registryCheck(addr string) func() error {
	return func() error {
		if addr == "" {
			return nil
		}
		return registry.Check(addr, framework.DefaultTimeouts.EnvironmentProbe)
	}
}

// allChecks is every check in turn; the first that fails answers.
func allChecks(checks ...func() error) func() error {
	return func() error {
		for _, c := range checks {
			if err := c(); err != nil {
				return err
			}
		}
		return nil
	}
}

// runtimeHealth is the runtime under test as one process sees it: asked
// for its Version and Status (within Timeouts.EnvironmentProbe; a runtime
// whose Status says it is not ready is as gone as one that does not
// answer) before a spec starts,
// before a failure or nonconformance is blamed on the runtime, and in the
// background every Timeouts.EnvironmentWatch (watch). A runtime that was
// killed, hangs or was stopped in the middle of a run is no verdict on any
// spec it took down with it (R2): every spec that failed while it was gone,
// or after it went away during the spec, is a run error, with when it went
// away. A runtime found gone less than one probe ago is not asked again (a
// frozen one would cost every spec the whole probe); one that answers again
// is back, and specs that start then judge again, but its last outage is
// remembered, so that a spec whose call timed out while it hung is still a
// run error when it answers by the time the spec failed.
type runtimeHealth struct {
	rt       *cri.Conn
	endpoint string
	probe    time.Duration

	mu          sync.Mutex
	since, when time.Time
	last        error
	outage      outage
}

// outage is a time the runtime did not answer: from the start of the first
// probe it failed to the start of the first it answered again (to zero:
// not yet). Outages never overlap, so the last is the only one a spec
// (which starts answered) can have met.
type outage struct {
	from, to time.Time
	err      error
}

func newRuntimeHealth(rt *cri.Conn, endpoint string) *runtimeHealth {
	return &runtimeHealth{rt: rt, endpoint: endpoint, probe: framework.DefaultTimeouts.EnvironmentProbe}
}

// check is the environment check: nil while the runtime answers.
func (h *runtimeHealth) check() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.last != nil && time.Since(h.when) < h.probe {
		return h.last
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), h.probe)
	defer cancel()
	var broken error
	if _, err := h.rt.Runtime.Version(ctx, &runtimeapi.VersionRequest{}); err != nil {
		broken = fmt.Errorf("%s did not answer Version within %s: %s", h.endpoint, h.probe, cri.StatusText(err))
	} else if err := cri.Readiness(ctx, h.rt.Runtime); err != nil {
		var nr *cri.NotReadyError
		if errors.As(err, &nr) {
			broken = nr
		} else {
			broken = fmt.Errorf("%s did not answer Status within %s: %v", h.endpoint, h.probe, err)
		}
	}
	if broken == nil {
		if h.last != nil {
			h.outage.to = start
		}
		h.since, h.last = time.Time{}, nil
		return nil
	}
	if h.since.IsZero() {
		h.since = time.Now()
		h.outage = outage{from: start}
	}
	h.when = time.Now()
	var nr *cri.NotReadyError
	if errors.As(broken, &nr) {
		h.last = fmt.Errorf("the runtime has not been ready since %s: %w", h.since.Format("15:04:05.000"), broken)
	} else {
		h.last = fmt.Errorf("the runtime went away at %s: %w", h.since.Format("15:04:05.000"), broken)
	}
	h.outage.err = h.last
	return h.last
}

// goneSince is the evidence of an outage that began after t (a spec's
// start) or is not over, or nil. One that began before t and was over
// after it is not the spec's: the spec's own check at its start waited
// for the runtime to answer (or failed the spec as a run error).
func (h *runtimeHealth) goneSince(t time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.outage
	switch {
	case o.err == nil:
		return nil
	case o.to.IsZero():
		return o.err
	case o.from.After(t):
		return fmt.Errorf("%w; it answered again at %s, during the spec (which began at %s)", o.err, o.to.Format("15:04:05.000"), t.Format("15:04:05.000"))
	}
	return nil
}

// watch asks the runtime every interval until ctx ends.
func (h *runtimeHealth) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = h.check()
		}
	}
}

// Session connects one parallel process to the environment.
func (e *Environment) Session() (*cri.Session, error) {
	rt, err := cri.Dial(e.RuntimeEndpoint)
	if err != nil {
		return nil, err
	}
	img := rt
	if e.ImageEndpoint != e.RuntimeEndpoint {
		if img, err = cri.Dial(e.ImageEndpoint); err != nil {
			rt.Close()
			return nil, err
		}
	}
	health := newRuntimeHealth(rt, e.RuntimeEndpoint)
	ctx, stop := context.WithCancel(context.Background())
	go health.watch(ctx, framework.DefaultTimeouts.EnvironmentWatch)
	return &cri.Session{
		Runtime: rt, Image: img, Images: e.Images, Handler: e.RuntimeHandler, RunID: e.RunID,
		LogRoot: e.LogRoot, Registry: e.Registry, Endpoint: e.RuntimeEndpoint, Timeouts: e.Timeouts,
		OS: e.Runtime.OS, Tools: cri.ToolsFor(e.Images.Tools(e.Runtime.OS)),
		Checker: &capability.Checker{Declared: e.Profile.Capabilities, Layer: capability.LayerCRI,
			Environment: allChecks(health.check, registryCheck(e.Registry)), GoneSince: health.goneSince},
		Stop: stop,
	}, nil
}
