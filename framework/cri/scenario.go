package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/targetinfo"
	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TargetPort is where a target listens unless told otherwise.
const TargetPort = 8080

// TargetOptions shape a target container (the distroless program).
type TargetOptions struct {
	Name string
	// PID is the container's PID mode; nil means CONTAINER, as the kubelet
	// sends without shareProcessNamespace (see Mode).
	PID       *runtimeapi.NamespaceMode
	RunAsUser *int64
	// AddCaps are capabilities added to the target's default set (named
	// as the kubelet sends them, without "CAP_").
	AddCaps []string
	// Port defaults to TargetPort.
	Port int
	// ShmKey, if set, makes the target hold a SysV shared memory segment.
	ShmKey int
	Env    map[string]string
}

// TargetMarker is the argv marker of a target called name in this spec.
func (f *Framework) TargetMarker(name string) string {
	return "--token=" + f.Token + "-" + name
}

// TargetToken is what a target writes into its marker file and serves.
func (f *Framework) TargetToken(name string) string { return f.Token + "-" + name }

// StartTarget starts the target program in the sandbox.
func (f *Framework) StartTarget(ctx context.Context, sb *Sandbox, o TargetOptions) *Container {
	ginkgo.GinkgoHelper()
	opts, port := f.targetContainerOptions(o)
	c := f.StartContainer(ctx, sb, opts)
	c.Marker, c.Port = f.TargetMarker(o.Name), port
	return c
}

// CreateTarget only creates a target (it is never started).
func (f *Framework) CreateTarget(ctx context.Context, sb *Sandbox, o TargetOptions) *Container {
	ginkgo.GinkgoHelper()
	opts, port := f.targetContainerOptions(o)
	c, err := f.TryCreateContainer(ctx, sb, opts)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("create container %q: %s", o.Name, StatusText(err)))
	}
	c.Marker, c.Port = f.TargetMarker(o.Name), port
	return c
}

func (f *Framework) targetContainerOptions(o TargetOptions) (ContainerOptions, int) {
	if o.Port == 0 {
		o.Port = TargetPort
	}
	args := []string{"--token=" + f.TargetToken(o.Name), fmt.Sprintf("--listen=:%d", o.Port), "--marker=/ectest/marker"}
	if o.ShmKey != 0 {
		args = append(args, fmt.Sprintf("--shm-key=%d", o.ShmKey))
	}
	return ContainerOptions{
		Name: o.Name, Image: f.Images[images.Target], Args: args,
		PID: o.PID, RunAsUser: o.RunAsUser, AddCaps: o.AddCaps, Env: o.Env,
	}, o.Port
}

// DebugOptions shape a debug container (busybox).
type DebugOptions struct {
	Name string
	// PID is nil for CONTAINER (see Mode).
	PID       *runtimeapi.NamespaceMode
	TargetID  string
	Network   runtimeapi.NamespaceMode
	IPC       runtimeapi.NamespaceMode
	AddCaps   []string
	RunAsUser *int64
	// Image defaults to the debug image.
	Image string
	// Command defaults to a shell that sleeps with a recognizable argv.
	Command         []string
	Stdin, TTY      bool
	StdinOnce       bool
	DoNotWaitForRun bool
}

// DebugMarker is the argv marker of a debug container called name.
func (f *Framework) DebugMarker(name string) string { return "ectest-debug-" + f.Token + "-" + name }

// DebugHelpers are argv substrings of processes a debug container starts itself.
var DebugHelpers = []string{"sleep 86400", "ps -o pid,user,args"}

func (f *Framework) debugContainerOptions(o DebugOptions) ContainerOptions {
	if o.Image == "" {
		o.Image = f.Images[images.Debug]
	}
	cmd := o.Command
	if cmd == nil {
		cmd = f.Tools.Sleep(f.DebugMarker(o.Name))
	}
	return ContainerOptions{
		Name: o.Name, Image: o.Image, Command: cmd,
		PID: o.PID, TargetID: o.TargetID, Network: o.Network, IPC: o.IPC,
		AddCaps: o.AddCaps, RunAsUser: o.RunAsUser, Stdin: o.Stdin, TTY: o.TTY, StdinOnce: o.StdinOnce,
	}
}

// TryStartDebug creates and starts a debug container; err is the runtime's.
func (f *Framework) TryStartDebug(ctx context.Context, sb *Sandbox, o DebugOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	c, err := f.TryStartContainer(ctx, sb, f.debugContainerOptions(o))
	if c != nil {
		c.Marker = f.DebugMarker(o.Name)
	}
	return c, err
}

// TryCreateDebug only creates a debug container.
func (f *Framework) TryCreateDebug(ctx context.Context, sb *Sandbox, o DebugOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	c, err := f.TryCreateContainer(ctx, sb, f.debugContainerOptions(o))
	if c != nil {
		c.Marker = f.DebugMarker(o.Name)
	}
	return c, err
}

// StartDebug starts a debug container the spec needs.
func (f *Framework) StartDebug(ctx context.Context, sb *Sandbox, o DebugOptions) *Container {
	ginkgo.GinkgoHelper()
	c, err := f.TryStartDebug(ctx, sb, o)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("start debug container %q: %s", o.Name, StatusText(err)))
	}
	return c
}

// PIDView is what an observing container sees of processes.
type PIDView struct {
	View      View
	Processes []Process
	PS        string
	// Links are the PID namespace identities compared ("observer",
	// "target", a sibling's name, "host"), and Judged says what they alone
	// decided ("" when they decide nothing here).
	Links  map[string]string
	Judged View
}

// Evidence is the ps output and the namespace links, for a report.
func (v PIDView) Evidence() string {
	var keys []string
	for k := range v.Links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, v.Links[k])
	}
	return fmt.Sprintf("PID namespace links (by inode):\n%sps:\n%s", b.String(), v.PS)
}

// ObservePIDs decides which PID namespace observer is in. The judge is the
// namespaces' identity: the observer's /proc/self/ns/pid link against the
// target's and the siblings' own (read by the target program, GET /info)
// and, for a runtime on this machine, the host's. The processes ps shows,
// matched by argv markers, are evidence and decide only what the links
// cannot (pod or target namespace, with no sibling that reports its
// links). Where the two disagree the view is unrecognized, with both in
// the evidence.
func (f *Framework) ObservePIDs(ctx context.Context, observer *Container, target *Container, siblings ...*Container) (PIDView, error) {
	procs, raw, err := f.Processes(ctx, observer)
	if err != nil {
		return PIDView{PS: raw}, err
	}
	m := Markers{Self: observer.Marker, Helpers: DebugHelpers}
	if target != nil {
		m.Target = target.Marker
	}
	for _, s := range siblings {
		m.Siblings = append(m.Siblings, s.Marker)
	}
	v := PIDView{View: Classify(procs, m), Processes: procs, PS: raw, Links: map[string]string{}}
	self, err := f.NamespaceLink(ctx, observer, "pid")
	if err != nil {
		return v, err
	}
	v.Links["observer"] = self
	var targetLink string
	var siblingLinks []string
	if target != nil && target.Port != 0 {
		targetLink = f.TargetInfoFrom(ctx, observer, target.Port).Namespaces["pid"]
		v.Links["target"] = targetLink
	}
	for _, s := range siblings {
		if s.Port != 0 {
			l := f.TargetInfoFrom(ctx, observer, s.Port).Namespaces["pid"]
			v.Links[s.Name] = l
			siblingLinks = append(siblingLinks, l)
		}
	}
	hostLink, local := HostNamespaceLink(f.Endpoint, "pid")
	if local {
		v.Links["host"] = hostLink
	}
	v.Judged = JudgeLinks(self, targetLink, siblingLinks, hostLink)
	switch {
	case v.Judged != "" && v.Judged != v.View:
		v.PS += fmt.Sprintf("\nthe namespace links say %q, the processes visible say %q\n", v.Judged, v.View)
		v.View = ViewOther
	case local && self != hostLink && v.View == ViewNode:
		v.PS += fmt.Sprintf("\nthe processes visible say %q, but the observer's PID namespace is not the host's\n", v.View)
		v.View = ViewOther
	}
	return v, nil
}

// JudgeLinks decides a PID view from namespace identities alone: the
// observer's, the target's and siblings' ("" when unknown), and the
// host's ("" when not decidable). It returns "" when they do not decide
// (its own namespace and the pod's, whose PID 1 reports no link, look alike).
func JudgeLinks(self, target string, siblings []string, host string) View {
	if self == "" {
		return ""
	}
	if host != "" && self == host {
		return ViewNode
	}
	siblingShares := false
	for _, s := range siblings {
		siblingShares = siblingShares || s == self
	}
	switch {
	case target != "" && self == target && siblingShares:
		return ViewPod
	case target != "" && self == target && len(siblings) > 0:
		return ViewTarget
	}
	return ""
}

// PIDOf returns the PID, as the observer sees it, of the process with marker.
func (v PIDView) PIDOf(marker string) (int, bool) {
	for _, p := range v.Processes {
		if strings.Contains(p.Args, marker) {
			return p.PID, true
		}
	}
	return 0, false
}

// TargetInfo is what a target reports on GET /info.
type TargetInfo = targetinfo.Info

// TargetInfoFrom asks a target, from a container sharing its network, for
// its /info. It polls until the target answers (it may still be starting).
func (f *Framework) TargetInfoFrom(ctx context.Context, from *Container, port int) TargetInfo {
	ginkgo.GinkgoHelper()
	info, err := f.TryTargetInfoFrom(ctx, from, port)
	if err != nil {
		f.Checker.Fail(err.Error())
	}
	return info
}

// TryTargetInfoFrom is TargetInfoFrom for specs whose judgement is whether
// the target answers at all: the error says what the last try saw.
func (f *Framework) TryTargetInfoFrom(ctx context.Context, from *Container, port int) (TargetInfo, error) {
	var info TargetInfo
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/info"
	var last error
	err := wait.PollUntilContextTimeout(ctx, f.Timeouts.Poll, f.Timeouts.ContainerReady, true, func(ctx context.Context) (bool, error) {
		r, err := f.Exec(ctx, from, f.Tools.HTTPGet(url)...)
		switch {
		case err != nil:
			last = err
		case r.ExitCode != 0:
			last = fmt.Errorf("GET %s from %s:\n%s", url, from.Name, r)
		default:
			if last = json.Unmarshal([]byte(r.Stdout), &info); last != nil {
				last = fmt.Errorf("decode %q: %w", r.Stdout, last)
			}
		}
		return last == nil, nil
	})
	if err != nil {
		return info, fmt.Errorf("the target did not answer on %s from %s within %s: %v", url, from.Name, f.Timeouts.ContainerReady, last)
	}
	return info, nil
}

// RecordPIDView starts a debug container with o, observes which PID
// namespace it landed in, and records the observation for capability n:
// works when the view is want, refused when the runtime refused it at
// create with a refusal code (see JudgeRefusal), deviated otherwise. It returns the debug container (nil if refused).
func (f *Framework) RecordPIDView(ctx context.Context, n capability.Name, want View, sb *Sandbox, o DebugOptions, target *Container, siblings ...*Container) (*Container, PIDView) {
	ginkgo.GinkgoHelper()
	dbg, err := f.TryStartDebug(ctx, sb, o)
	if err != nil {
		// Only a refusal at create, with a refusal code, is the error the
		// CRI asks of a runtime that does not implement a mode.
		f.Checker.Record(RefusalObservation(n, dbg != nil, err))
		return nil, PIDView{}
	}
	view, err := f.ObservePIDs(ctx, dbg, target, siblings...)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("observe processes from %s: %v\n%s", dbg.Name, err, view.PS))
	}
	outcome := capability.Works
	if view.View != want {
		outcome = capability.Deviated
	}
	evidence := fmt.Sprintf("wanted: %s\nin %s: %s", want, dbg.Name, view.Evidence())
	f.Checker.Record(capability.Observation{Capability: n, Outcome: outcome, Observed: string(view.View), Evidence: evidence})
	return dbg, view
}

// NamespaceLink reads the /proc/self/ns/<kind> link ("ipc:[4026531839]")
// inside a container: its namespace's identity, by inode.
func (f *Framework) NamespaceLink(ctx context.Context, c *Container, kind string) (string, error) {
	r, err := f.Exec(ctx, c, "readlink", "/proc/self/ns/"+kind)
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return "", fmt.Errorf("readlink /proc/self/ns/%s in %s: %s", kind, c.Name, r)
	}
	return strings.TrimSpace(r.Stdout), nil
}

// HostNamespaceLink is the suite process's own /proc/self/ns/<kind> link,
// which stands for the host's when the runtime is on this machine (a unix
// socket endpoint) and the suite runs in the host's namespaces; ok is false
// otherwise (a remote endpoint cannot be decided this way).
func HostNamespaceLink(endpoint, kind string) (link string, ok bool) {
	if !strings.HasPrefix(endpoint, "unix://") {
		return "", false
	}
	l, err := os.Readlink("/proc/self/ns/" + kind)
	return l, err == nil
}

// StartTargetingDebug starts a PID TARGET debug container for a spec whose
// capability n depends on pid-target (capability.DependsOn): it reads the
// target's files, ptraces its processes, or replays a story through its PID
// namespace. When the runtime refuses the container or puts it anywhere but
// the target's PID namespace, there is nothing to check: the spec records
// n as blocked by pid-target, with what the runtime did, and skips (the
// pid-target specs carry the verdict). It returns the debug container and
// what it sees.
func (f *Framework) StartTargetingDebug(ctx context.Context, n capability.Name, sb *Sandbox, o DebugOptions, target *Container) (*Container, PIDView) {
	ginkgo.GinkgoHelper()
	o.PID, o.TargetID = Mode(runtimeapi.NamespaceMode_TARGET), target.ID
	dep := capability.DependsOn(n)
	dbg, err := f.TryStartDebug(ctx, sb, o)
	if err != nil {
		f.Checker.Record(capability.Observation{Capability: n, Outcome: capability.Blocked,
			Observed: fmt.Sprintf("%s did not work: the TARGET debug container was not started", dep), Evidence: StatusText(err)})
		return nil, PIDView{}
	}
	view, err := f.ObservePIDs(ctx, dbg, target)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("observe processes from %s: %v\n%s", dbg.Name, err, view.PS))
	}
	if view.View != ViewTarget {
		f.Checker.Record(capability.Observation{Capability: n, Outcome: capability.Blocked,
			Observed: fmt.Sprintf("%s did not work: the TARGET debug container landed in the %s", dep, view.View), Evidence: view.Evidence()})
	}
	return dbg, view
}
