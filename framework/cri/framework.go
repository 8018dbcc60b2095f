package cri

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/oracle"
	"github.com/onsi/ginkgo/v2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Label keys the suite puts on everything it creates, so a run's leftovers
// can be found (and reported as leaks) on any runtime.
const (
	LabelSuite = "ectest.io/suite"
	LabelRun   = "ectest.io/run"
	LabelSpec  = "ectest.io/spec"
)

// Session is what every spec of a process shares: the connections and the
// run's environment. It is created once per process, before specs run.
type Session struct {
	Runtime  *Conn
	Image    *Conn
	Images   images.Set
	Handler  string
	RunID    string
	LogRoot  string
	Checker  *capability.Checker
	Timeouts framework.Timeouts
	// Registry is the loopback registry's host:port ("" when there is none).
	Registry string
	// Endpoint is the runtime's CRI endpoint: a unix socket means the
	// runtime runs on this machine, whose namespaces the suite can read.
	Endpoint string
	// OS is the node's OS (DetectOS): on windows the suite sends the
	// Windows configs the kubelet sends there, never Linux namespace
	// options.
	OS string
	// Tools are the debug image's commands (images.Set.Tools).
	Tools Tools
	// Stop, when set, ends what the session runs in the background (the
	// runtime's health watch); Close calls it.
	Stop func()

	// pool holds the process's idle reusable sandboxes (reuse.go).
	pool sandboxPool

	outsideOnce sync.Once
	outside     *Outside
}

// Close ends the session: its background work, then its connections.
func (s *Session) Close() {
	if s.Stop != nil {
		s.Stop()
	}
	s.Runtime.Close()
	if s.Image != s.Runtime {
		s.Image.Close()
	}
}

// Windows reports whether the node runs Windows.
func (s *Session) Windows() bool { return s.OS == "windows" }

// Framework is one spec's view of the runtime: everything it creates gets a
// unique name and is removed by a DeferCleanup registered right after creation.
type Framework struct {
	*Session
	// Checker is the session's, bound to the capabilities the spec
	// exercises (see capability.Checker.ForSpec).
	Checker *capability.Checker
	// Token is unique to the spec; names, argv markers and files carry it.
	Token string
	// sandboxes counts the spec's sandboxes, to name each uniquely.
	sandboxes int
}

// New starts a spec's framework. Call it inside a setup or subject node.
func New(s *Session, exercises ...capability.Name) *Framework {
	return &Framework{Session: s, Checker: s.Checker.ForSpec(exercises...), Token: randomToken()}
}

func randomToken() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Sandbox is a running pod sandbox created by a spec.
type Sandbox struct {
	ID     string
	Config *runtimeapi.PodSandboxConfig
	// reuse is the pool key of a reusable sandbox (nil for one of the spec
	// alone); netns its network namespace and infra its infra process
	// (nil: none), seen from outside (reuse.go).
	reuse *reuseKey
	netns string
	infra *oracle.Process
}

// SandboxOptions shape a sandbox. The zero value is a sandbox as the kubelet
// makes it for a pod without shareProcessNamespace: PID CONTAINER, network
// and IPC POD.
type SandboxOptions struct {
	PID, Network, IPC runtimeapi.NamespaceMode
	// SharePID makes the sandbox's PID mode POD (shareProcessNamespace: true).
	SharePID bool
	// Userns is the sandbox's user namespace (NamespaceOption.UsernsOptions):
	// nil sends none, as the kubelet does for a pod without hostUsers:
	// false on a node without the feature. Every container of the sandbox
	// gets the same (see ContainerOptions.Userns), as the kubelet sends
	// the pod's to each container, ephemeral ones included.
	Userns *runtimeapi.UserNamespace
	// Reuse lets the spec run in a sandbox of the same options that an
	// earlier spec of this process ran in and left as it found it, seen
	// from outside (reuse.go), and hand it on when it passes. Only for
	// specs that neither stop nor remove the sandbox, leave nothing in it
	// but their containers (no IPC objects, no /dev/shm files) and judge
	// nothing of its start; only sandboxes of network and IPC POD without
	// a user namespace, with PID CONTAINER or SharePID, are shared.
	Reuse bool
}

// PodUserns is a POD-mode user namespace mapping container IDs 0..size-1
// to host IDs host..host+size-1, for UIDs and GIDs alike: what the kubelet
// sends for a pod with hostUsers: false (it picks host from its own range).
func PodUserns(host, size uint32) *runtimeapi.UserNamespace {
	m := func() []*runtimeapi.IDMapping {
		return []*runtimeapi.IDMapping{{HostId: host, ContainerId: 0, Length: size}}
	}
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_POD, Uids: m(), Gids: m()}
}

// The user namespaces the specs ask for: container IDs 0..65535 on a range
// of 65536 host IDs of the spec's own, UIDs and GIDs alike, from 100000 up.
// The kubelet gives every pod a range of its own (hostUsers: false); specs
// sharing one would also share a runtime's remapped image snapshots
// (containerd 1.7 then fails concurrent creations with AlreadyExists).
const (
	usernsHost   = 100000
	usernsSize   = 65536
	usernsRanges = 1000
)

// SpecUserns is a POD-mode user namespace on the spec's own range;
// shift picks a neighbouring one (another spec's, for a request that
// must not be its sandbox's).
func (f *Framework) SpecUserns(shift uint32) *runtimeapi.UserNamespace {
	h := fnv.New32a()
	_, _ = h.Write([]byte(f.Token))
	k := (h.Sum32() + shift) % usernsRanges
	return PodUserns(usernsHost+k*usernsSize, usernsSize)
}

// NodeUserns is the node's user namespace (hostUsers: true, sent
// explicitly).
func NodeUserns() *runtimeapi.UserNamespace {
	return &runtimeapi.UserNamespace{Mode: runtimeapi.NamespaceMode_NODE}
}

// IDMapText renders mappings as /proc/<pid>/uid_map shows them to a reader
// in the node's user namespace, one "inside outside length" a line, the
// way oracle.Process's UIDMap and GIDMap hold them.
func IDMapText(ms []*runtimeapi.IDMapping) string {
	lines := make([]string, 0, len(ms))
	for _, m := range ms {
		lines = append(lines, fmt.Sprintf("%d %d %d", m.GetContainerId(), m.GetHostId(), m.GetLength()))
	}
	return strings.Join(lines, "\n")
}

func (f *Framework) sandboxConfig(opts SandboxOptions) (*runtimeapi.PodSandboxConfig, error) {
	var windows *runtimeapi.WindowsPodSandboxConfig
	if f.Windows() {
		var why string
		if windows, why = WindowsSandboxConfig(opts); why != "" {
			ginkgo.Skip(why)
		}
	}
	f.sandboxes++
	name := fmt.Sprintf("ectest-%s-%d", f.Token, f.sandboxes)
	logDir := filepath.Join(f.LogRoot, name)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	pid := opts.PID
	if pid == runtimeapi.NamespaceMode_POD && !opts.SharePID {
		pid = runtimeapi.NamespaceMode_CONTAINER
	}
	hostname := name
	if opts.Network == runtimeapi.NamespaceMode_NODE {
		hostname = "" // a host-network sandbox has the host's name, as the kubelet sends it
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{
			Name: name, Namespace: "ectest-" + f.RunID, Uid: name,
		},
		Hostname:     hostname,
		LogDirectory: logDir,
		Labels:       map[string]string{LabelSuite: "cri", LabelRun: f.RunID, LabelSpec: f.Token},
	}
	if windows != nil {
		cfg.Windows = windows
		return cfg, nil
	}
	cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{
		// A cgroup parent of its own, as the kubelet gives every pod one:
		// its containers are charged there (cgroup.go).
		CgroupParent: PodCgroupParent(f.RunID, name),
		SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Pid: pid, Network: opts.Network, Ipc: opts.IPC, UsernsOptions: cloneUserns(opts.Userns)},
		},
	}
	return cfg, nil
}

// WindowsSandboxConfig is the Windows part of a sandbox's config, as the
// CRI has it for Windows nodes: a security context whose namespace options
// hold the network mode only (WindowsNamespaceOption; the kubelet leaves it
// unset, which is POD). Windows has no PID or IPC namespace option (WIN-1):
// a sandbox that asks for anything but the defaults cannot be sent, and why
// says so.
func WindowsSandboxConfig(opts SandboxOptions) (cfg *runtimeapi.WindowsPodSandboxConfig, why string) {
	defaultPID := opts.PID == runtimeapi.NamespaceMode_CONTAINER || (opts.PID == runtimeapi.NamespaceMode_POD && !opts.SharePID)
	switch {
	case !defaultPID || opts.SharePID:
		return nil, fmt.Sprintf("the Windows CRI has no PID namespace option (WIN-1): a sandbox with PID %s%s cannot be asked for on a Windows node", opts.PID, map[bool]string{true: " (a shared process namespace)"}[opts.SharePID])
	case opts.IPC != runtimeapi.NamespaceMode_POD:
		return nil, fmt.Sprintf("the Windows CRI has no IPC namespace option (WIN-1): a sandbox with IPC %s cannot be asked for on a Windows node", opts.IPC)
	case opts.Userns != nil:
		return nil, "the Windows CRI has no user namespace option: a sandbox with a user namespace cannot be asked for on a Windows node"
	}
	return &runtimeapi.WindowsPodSandboxConfig{SecurityContext: &runtimeapi.WindowsSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.WindowsNamespaceOption{Network: opts.Network},
	}}, ""
}

// TryRunSandbox runs a sandbox and registers its removal; the error is the
// runtime's, for specs that expect a refusal.
func (f *Framework) TryRunSandbox(ctx context.Context, opts SandboxOptions) (*Sandbox, error) {
	ginkgo.GinkgoHelper()
	key, reuse := reusable(opts)
	reuse = reuse && !f.Windows()
	if reuse {
		if sb := f.reuseSandbox(ctx, key); sb != nil {
			return sb, nil
		}
	}
	cfg, err := f.sandboxConfig(opts)
	if err != nil {
		return nil, err
	}
	sb := &Sandbox{Config: cfg}
	if reuse {
		// Its directory goes with it when it is discarded (reuse.go).
		sb.reuse = &key
	} else {
		ginkgo.DeferCleanup(os.RemoveAll, cfg.LogDirectory)
	}
	// Not cancelled with the spec (Ctrl-C, a timeout): a sandbox the
	// runtime goes on making after the client gave up would be known to
	// no cleanup. The call ends within its own time limit either way.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.Timeouts.ImagePull+f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Runtime.Runtime.RunPodSandbox(cctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: f.Handler})
	switch {
	case resp != nil && resp.PodSandboxId != "":
		sb.ID = resp.PodSandboxId
		if reuse {
			ginkgo.DeferCleanup(f.releaseSandbox, sb)
		} else {
			// After the sandbox's removal (cleanups run last first).
			ginkgo.DeferCleanup(f.removePodCgroup, cfg)
			ginkgo.DeferCleanup(f.removeSandbox, sb.ID)
		}
	case reuse:
		_ = os.RemoveAll(cfg.LogDirectory) // no sandbox to release it with
	}
	if err != nil {
		notInterrupted(ctx, "RunPodSandbox", err)
		return nil, err
	}
	return sb, nil
}

// notInterrupted fails the spec as interrupted, not judged, when a runtime
// call failed after the spec's own context ended (Ctrl-C, a spec timeout):
// the runtime was cut off (or torn down with the run), so its error is no
// answer, and a spec that judges refusals would otherwise record it as the
// runtime's refusal (a warm rehearsal's SIGINT case once read "userns-pod
// nonconformant" from one). Every Try* call goes through here, so no spec
// can judge such an error.
func notInterrupted(ctx context.Context, call string, err error) {
	ginkgo.GinkgoHelper()
	if ctx.Err() != nil {
		ginkgo.Fail(fmt.Sprintf("%s%s failed after the spec was cut off (%v): %s", InterruptedPrefix, call, context.Cause(ctx), StatusText(err)))
	}
}

// InterruptedPrefix starts the failure of a spec whose runtime call was
// cut off by the spec's own end: nothing was judged.
const InterruptedPrefix = "interrupted, not judged: "

// RunSandbox is TryRunSandbox for specs that need the sandbox.
func (f *Framework) RunSandbox(ctx context.Context, opts SandboxOptions) *Sandbox {
	ginkgo.GinkgoHelper()
	sb, err := f.TryRunSandbox(ctx, opts)
	if err != nil {
		f.Checker.Fail("RunPodSandbox: " + StatusText(err))
	}
	return sb
}

func (s *Session) removeSandbox(id string) error {
	// A spec may have removed it already (NotFound): nothing is left then.
	return s.RemoverFor().Sandbox(context.Background(), id)
}

// StopSandbox stops a sandbox now, with whatever still runs in it.
func (f *Framework) StopSandbox(ctx context.Context, sb *Sandbox) error {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	_, err := f.Runtime.Runtime.StopPodSandbox(cctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.ID})
	return err
}

// RemoveSandbox removes a stopped sandbox now (its cleanup then finds nothing).
func (f *Framework) RemoveSandbox(ctx context.Context, sb *Sandbox) error {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	_, err := f.Runtime.Runtime.RemovePodSandbox(cctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.ID})
	return err
}

// SandboxState is the sandbox's state as the runtime reports it.
func (f *Framework) SandboxState(ctx context.Context, sb *Sandbox) (runtimeapi.PodSandboxState, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Runtime.Runtime.PodSandboxStatus(cctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.ID})
	if err != nil {
		return 0, err
	}
	return resp.GetStatus().GetState(), nil
}

// ContainersOf lists the containers the runtime has in a sandbox.
func (f *Framework) ContainersOf(ctx context.Context, sb *Sandbox) ([]*runtimeapi.Container, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Runtime.Runtime.ListContainers(cctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{PodSandboxId: sb.ID}})
	if err != nil {
		return nil, err
	}
	return resp.Containers, nil
}

// Container is a container created by a spec.
type Container struct {
	ID      string
	Name    string
	Sandbox *Sandbox
	Config  *runtimeapi.ContainerConfig
	// Marker is an argv substring unique to this container's main process.
	Marker string
	// Port is a target's HTTP port (0 for other containers).
	Port int
	// NotSent says what of the request the node's CRI config cannot carry
	// and was left out, as the kubelet leaves it out (on Windows: the PID
	// TARGET and target_id of a debug container with a target).
	NotSent string
}

// LogPath is the container's log file on the host.
func (c *Container) LogPath() string {
	return filepath.Join(c.Sandbox.Config.LogDirectory, c.Config.LogPath)
}

// ContainerOptions shape a container. Namespace modes default to what the
// kubelet sends for a pod without shareProcessNamespace (PID CONTAINER).
type ContainerOptions struct {
	Name  string
	Image string
	// Command replaces the image entrypoint; Args are its arguments.
	Command, Args []string
	// PID is the container's PID mode; nil means CONTAINER, what the
	// kubelet sends without shareProcessNamespace (see Mode).
	PID          *runtimeapi.NamespaceMode
	TargetID     string
	Network, IPC runtimeapi.NamespaceMode
	RunAsUser    *int64
	// RunAsGroup and SupplementalGroups are the process's group and
	// supplementary groups (the kubelet's runAsGroup and the pod's
	// supplementalGroups).
	RunAsGroup         *int64
	SupplementalGroups []int64
	// AddCaps and DropCaps are capabilities added to and dropped from the
	// runtime's default set (named without "CAP_").
	AddCaps, DropCaps []string
	// NoNewPrivs asks for no_new_privs (allowPrivilegeEscalation: false).
	NoNewPrivs bool
	Stdin, TTY bool
	StdinOnce  bool
	Env        map[string]string
	// Userns is the container's user namespace (UsernsOptions); nil sends
	// the sandbox's, as the kubelet sends the pod's to every container,
	// ephemeral ones included.
	Userns *runtimeapi.UserNamespace
}

// Mode is an explicit namespace mode for the options' PID field. POD is the
// CRI's zero value, so "not given" needs its own value (nil), not a flag.
func Mode(m runtimeapi.NamespaceMode) *runtimeapi.NamespaceMode { return &m }

// containerConfig is the container's config for the node's OS; notSent is
// what the OS's config cannot carry and was left out (see Container).
func (f *Framework) containerConfig(opts ContainerOptions) (cfg *runtimeapi.ContainerConfig, notSent string) {
	if f.Windows() {
		return f.windowsContainerConfig(opts)
	}
	pid := runtimeapi.NamespaceMode_CONTAINER
	if opts.PID != nil {
		pid = *opts.PID
	}
	sc := &runtimeapi.LinuxContainerSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Pid: pid, TargetId: opts.TargetID, Network: opts.Network, Ipc: opts.IPC, UsernsOptions: cloneUserns(opts.Userns)},
	}
	if opts.RunAsUser != nil {
		sc.RunAsUser = &runtimeapi.Int64Value{Value: *opts.RunAsUser}
	}
	if opts.RunAsGroup != nil {
		sc.RunAsGroup = &runtimeapi.Int64Value{Value: *opts.RunAsGroup}
	}
	sc.SupplementalGroups = opts.SupplementalGroups
	sc.NoNewPrivs = opts.NoNewPrivs
	if len(opts.AddCaps) > 0 || len(opts.DropCaps) > 0 {
		sc.Capabilities = &runtimeapi.Capability{AddCapabilities: opts.AddCaps, DropCapabilities: opts.DropCaps}
	}
	cfg = f.commonConfig(opts)
	cfg.Linux = &runtimeapi.LinuxContainerConfig{SecurityContext: sc}
	return cfg, ""
}

// cloneUserns copies a user namespace request, so that no two configs
// share one message (a proxy or a runtime may change what it is sent).
func cloneUserns(u *runtimeapi.UserNamespace) *runtimeapi.UserNamespace {
	if u == nil {
		return nil
	}
	return proto.Clone(u).(*runtimeapi.UserNamespace)
}

// commonConfig is what a container's config holds on every OS: name,
// image, command, environment, log path, streams and the suite's labels.
func (f *Framework) commonConfig(opts ContainerOptions) *runtimeapi.ContainerConfig {
	var envs []*runtimeapi.KeyValue
	for k, v := range opts.Env {
		envs = append(envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	return &runtimeapi.ContainerConfig{
		Metadata:  &runtimeapi.ContainerMetadata{Name: opts.Name},
		Image:     &runtimeapi.ImageSpec{Image: opts.Image},
		Command:   opts.Command,
		Args:      opts.Args,
		Envs:      envs,
		LogPath:   opts.Name + "-" + f.Token + ".log", // a reused sandbox's directory holds earlier specs' logs
		Stdin:     opts.Stdin,
		StdinOnce: opts.StdinOnce,
		Tty:       opts.TTY,
		Labels:    map[string]string{LabelSuite: "cri", LabelRun: f.RunID, LabelSpec: f.Token},
	}
}

// windowsContainerConfig is a container's config for a Windows node: what
// the kubelet sends there, a WindowsContainerConfig with an empty security
// context and no namespace options at all (the CRI has none for Windows
// containers). A debug container's PID TARGET and target_id are left out
// as the kubelet leaves targetContainerName out on Windows (WIN-2), and
// notSent says so; any other namespace or Linux security request cannot
// be sent, and the spec skips saying why.
func (f *Framework) windowsContainerConfig(opts ContainerOptions) (cfg *runtimeapi.ContainerConfig, notSent string) {
	ginkgo.GinkgoHelper()
	wc, notSent, why := WindowsContainerConfig(opts)
	if why != "" {
		ginkgo.Skip(why)
	}
	cfg = f.commonConfig(opts)
	cfg.Windows = wc
	return cfg, notSent
}

// WindowsContainerConfig is the Windows part of a container's config (see
// windowsContainerConfig); notSent names what was left out as the kubelet
// leaves it out, why what cannot be asked for on Windows at all.
func WindowsContainerConfig(opts ContainerOptions) (cfg *runtimeapi.WindowsContainerConfig, notSent, why string) {
	pid := runtimeapi.NamespaceMode_CONTAINER
	if opts.PID != nil {
		pid = *opts.PID
	}
	switch {
	case pid == runtimeapi.NamespaceMode_TARGET:
		notSent = fmt.Sprintf("PID TARGET with target_id %q not sent: a Windows container's CRI config has no namespace options, and the kubelet drops targetContainerName on Windows (WIN-2)", opts.TargetID)
	case pid != runtimeapi.NamespaceMode_CONTAINER:
		why = fmt.Sprintf("the Windows CRI has no PID namespace option (WIN-1): a container with PID %s cannot be asked for on a Windows node", pid)
	case opts.TargetID != "":
		why = "the Windows CRI has no target_id (WIN-1): a container with one cannot be asked for on a Windows node"
	}
	switch {
	case why != "":
	case opts.Network != runtimeapi.NamespaceMode_POD:
		why = fmt.Sprintf("a Windows container's CRI config has no network namespace option (every container joins its sandbox's network): network %s cannot be asked for on a Windows node", opts.Network)
	case opts.IPC != runtimeapi.NamespaceMode_POD:
		why = fmt.Sprintf("the Windows CRI has no IPC namespace option (WIN-1): IPC %s cannot be asked for on a Windows node", opts.IPC)
	case opts.RunAsUser != nil || opts.RunAsGroup != nil || len(opts.SupplementalGroups) > 0 || len(opts.AddCaps) > 0 || len(opts.DropCaps) > 0 || opts.NoNewPrivs:
		why = "Linux user IDs and capabilities do not exist in a Windows container's CRI config"
	case opts.Userns != nil:
		why = "the Windows CRI has no user namespace option: a container with one cannot be asked for on a Windows node"
	}
	if why != "" {
		return nil, "", why
	}
	return &runtimeapi.WindowsContainerConfig{SecurityContext: &runtimeapi.WindowsContainerSecurityContext{}}, notSent, ""
}

// TryCreateContainer creates (not starts) a container and registers its
// removal. The error is the runtime's, for specs that expect a refusal.
func (f *Framework) TryCreateContainer(ctx context.Context, sb *Sandbox, opts ContainerOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	if opts.Userns == nil {
		opts.Userns = sb.Config.GetLinux().GetSecurityContext().GetNamespaceOptions().GetUsernsOptions()
	}
	cfg, notSent := f.containerConfig(opts)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.Timeouts.RuntimeCall) // as RunPodSandbox: never abandoned mid-creation
	defer cancel()
	resp, err := f.Runtime.Runtime.CreateContainer(cctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.ID, Config: cfg, SandboxConfig: sb.Config})
	if resp != nil && resp.ContainerId != "" {
		ginkgo.DeferCleanup(f.removeContainer, resp.ContainerId)
	}
	if err != nil {
		notInterrupted(ctx, "CreateContainer", err)
		return nil, err
	}
	return &Container{ID: resp.ContainerId, Name: opts.Name, Sandbox: sb, Config: cfg, NotSent: notSent}, nil
}

// TryStartContainer creates and starts a container.
func (f *Framework) TryStartContainer(ctx context.Context, sb *Sandbox, opts ContainerOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	c, err := f.TryCreateContainer(ctx, sb, opts)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	if _, err := f.Runtime.Runtime.StartContainer(cctx, &runtimeapi.StartContainerRequest{ContainerId: c.ID}); err != nil {
		notInterrupted(ctx, "StartContainer", err)
		return c, err
	}
	return c, nil
}

// StartContainer is TryStartContainer for specs that need the container.
func (f *Framework) StartContainer(ctx context.Context, sb *Sandbox, opts ContainerOptions) *Container {
	ginkgo.GinkgoHelper()
	c, err := f.TryStartContainer(ctx, sb, opts)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("create and start container %q: %s", opts.Name, StatusText(err)))
	}
	return c
}

func (f *Framework) removeContainer(id string) error {
	// A runtime may refuse for a while (a container still starting, or
	// reported running a moment after StopContainer returned, as
	// containerd updates its state from the exit event): the Remover asks
	// again until it is gone or Timeouts.Cleanup runs out.
	err := f.RemoverFor().Container(context.Background(), id)
	if err != nil && f.containerGone(id) {
		// What the cleanup is for holds: the container is gone (the spec
		// removed it already). The CRI says RemoveContainer is idempotent
		// and StopContainer of a removed container must not fail either;
		// no requirement of this suite judges that, so it is reported, not
		// counted as an error of the run.
		ginkgo.AddReportEntry("runtime note: cleanup of a container already removed", fmt.Sprintf("the runtime answered %v for container %s, which it no longer lists (the CRI: RemoveContainer \"is idempotent, and must not return an error if the container has already been removed\")", err, id), ginkgo.ReportEntryVisibilityFailureOrVerbose)
		return nil
	}
	return err
}

// containerGone reports whether the runtime no longer lists container id.
// The cleanup's context may have run out: this is a call of its own.
func (f *Framework) containerGone(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Runtime.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: id}})
	return err == nil && len(resp.Containers) == 0
}

// StopContainer stops a container now (SIGKILL after no grace period).
func (f *Framework) StopContainer(ctx context.Context, c *Container) error {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	_, err := f.Runtime.Runtime.StopContainer(cctx, &runtimeapi.StopContainerRequest{ContainerId: c.ID, Timeout: 0})
	return err
}

// RemoveContainer removes a container now (its cleanup then finds nothing).
func (f *Framework) RemoveContainer(ctx context.Context, c *Container) error {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	_, err := f.Runtime.Runtime.RemoveContainer(cctx, &runtimeapi.RemoveContainerRequest{ContainerId: c.ID})
	return err
}

// Status returns the container's CRI status.
func (f *Framework) Status(ctx context.Context, c *Container) (*runtimeapi.ContainerStatus, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Runtime.Runtime.ContainerStatus(cctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ID})
	if err != nil {
		return nil, err
	}
	return resp.Status, nil
}

// WaitForState polls the container's CRI status until it reports state,
// for up to timeout. It returns the last status seen; err says what the
// last poll saw when the state never came (a status error, or the state
// it was in instead).
func (f *Framework) WaitForState(ctx context.Context, c *Container, state runtimeapi.ContainerState, timeout time.Duration) (*runtimeapi.ContainerStatus, error) {
	var last *runtimeapi.ContainerStatus
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		st, err := f.Status(ctx, c)
		switch {
		case err == nil:
			last, lastErr = st, nil
		case ctx.Err() == nil: // not the poll's own deadline cutting the call
			lastErr = err
		}
		return err == nil && st.GetState() == state, nil
	})
	switch {
	case err == nil:
		return last, nil
	case lastErr != nil || last == nil:
		return last, fmt.Errorf("%s not %s within %s: ContainerStatus: %s", c.Name, state, timeout, StatusText(lastErr))
	}
	return last, fmt.Errorf("%s still %s after %s, not %s", c.Name, last.GetState(), timeout, state)
}

// ExecResult is the outcome of an ExecSync.
type ExecResult struct {
	Cmd      []string
	Stdout   string
	Stderr   string
	ExitCode int32
}

func (r ExecResult) String() string {
	return fmt.Sprintf("$ %s\n(exit %d)\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Cmd, " "), r.ExitCode, r.Stdout, r.Stderr)
}

// Exec runs a command with ExecSync. err is a failed call, not a non-zero
// exit; an answer with a negative exit code is a failed call too: no
// process exits with one, so the command did not run to its end (CRI-O
// answers an exec its timeout ended with -1 and "command timed out"), and
// a judge reading a non-zero exit as "denied" or "not found" must not
// take it for one.
func (f *Framework) Exec(ctx context.Context, c *Container, cmd ...string) (ExecResult, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.Exec+5*time.Second)
	defer cancel()
	resp, err := f.Runtime.Runtime.ExecSync(cctx, &runtimeapi.ExecSyncRequest{ContainerId: c.ID, Cmd: cmd, Timeout: int64(f.Timeouts.Exec.Seconds())})
	if err != nil {
		return ExecResult{Cmd: cmd}, fmt.Errorf("ExecSync %v in %s: %s", cmd, c.Name, StatusText(err))
	}
	r := ExecResult{Cmd: cmd, Stdout: string(resp.Stdout), Stderr: string(resp.Stderr), ExitCode: resp.ExitCode}
	if r.ExitCode < 0 {
		return r, fmt.Errorf("ExecSync %v in %s answered exit code %d, which no process exits with: the command did not run to its end (stderr %q)", cmd, c.Name, r.ExitCode, strings.TrimSpace(r.Stderr))
	}
	return r, nil
}

// MustExec runs a command that must succeed and returns its stdout.
func (f *Framework) MustExec(ctx context.Context, c *Container, cmd ...string) string {
	ginkgo.GinkgoHelper()
	r, err := f.Exec(ctx, c, cmd...)
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	if r.ExitCode != 0 {
		f.Checker.Fail(fmt.Sprintf("command failed in container %s:\n%s", c.Name, r))
	}
	return r.Stdout
}

// Processes lists the processes a container with busybox/procps ps sees.
func (f *Framework) Processes(ctx context.Context, c *Container) ([]Process, string, error) {
	r, err := f.Exec(ctx, c, "ps", "-o", "pid,user,args")
	if err != nil {
		return nil, "", err
	}
	if r.ExitCode != 0 {
		return nil, r.String(), fmt.Errorf("ps failed in %s:\n%s", c.Name, r)
	}
	procs, err := ParsePS(r.Stdout)
	return procs, r.Stdout, err
}

// Logs reads the container's CRI log: what it wrote to stdout and to stderr.
func (f *Framework) Logs(ctx context.Context, c *Container) (stdout, stderr string, err error) {
	return LogStreams(ctx, c.LogPath())
}

// ImagePresent reports whether the image service has the image.
func (f *Framework) ImagePresent(ctx context.Context, ref string) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.RuntimeCall)
	defer cancel()
	resp, err := f.Image.Image.ImageStatus(cctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return false, err
	}
	return resp.Image != nil, nil
}

// PullImage pulls an image and registers its removal.
func (f *Framework) PullImage(ctx context.Context, ref string) (string, error) {
	ginkgo.GinkgoHelper()
	cctx, cancel := context.WithTimeout(ctx, f.Timeouts.ImagePull)
	defer cancel()
	resp, err := f.Image.Image.PullImage(cctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return "", err
	}
	ginkgo.DeferCleanup(f.removeImage, resp.ImageRef)
	return resp.ImageRef, nil
}

func (f *Framework) removeImage(ref string) error {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeouts.Cleanup)
	defer cancel()
	if _, err := f.Image.Image.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}}); err != nil && !isNotFound(err) {
		return fmt.Errorf("RemoveImage %s: %s", ref, StatusText(err))
	}
	return nil
}

// copyLimited reads at most n bytes of r.
func copyLimited(r io.Reader, n int64) string {
	var b bytes.Buffer
	_, _ = io.CopyN(&b, r, n)
	return b.String()
}
