package cri

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs/targetinfo"
	"github.com/ectest/ectest/framework/capability"
	"github.com/ectest/ectest/framework/oracle"
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
	// PosixShm, if set, makes the target create a POSIX shared memory
	// object of that name (/dev/shm/<name>) holding its token.
	PosixShm string
	Env      map[string]string
}

// TargetMarker is the argv marker of a target called name in this spec.
func (f *Framework) TargetMarker(name string) string {
	return oracle.TargetMarker(f.Token, name)
}

// TargetToken is what a target writes into its marker file and serves.
func (f *Framework) TargetToken(name string) string { return oracle.TargetToken(f.Token, name) }

// StartTarget starts the target program in the sandbox.
func (f *Framework) StartTarget(ctx context.Context, sb *Sandbox, o TargetOptions) *Container {
	ginkgo.GinkgoHelper()
	opts, port := f.targetContainerOptions(o)
	c := f.StartContainer(ctx, sb, opts)
	c.Marker, c.Port = f.TargetMarker(o.Name), port
	f.noteNetns(c)
	return c
}

// TryStartTarget starts the target program in the sandbox; err is the
// runtime's, for specs that judge a refusal (c is non-nil when the create
// call succeeded).
func (f *Framework) TryStartTarget(ctx context.Context, sb *Sandbox, o TargetOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	opts, port := f.targetContainerOptions(o)
	c, err := f.TryStartContainer(ctx, sb, opts)
	if c != nil {
		c.Marker, c.Port = f.TargetMarker(o.Name), port
	}
	return c, err
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
	args := []string{f.TargetMarker(o.Name), fmt.Sprintf("--listen=:%d", o.Port), "--marker=/ectest/marker"}
	if o.ShmKey != 0 {
		args = append(args, fmt.Sprintf("--shm-key=%d", o.ShmKey))
	}
	if o.PosixShm != "" {
		args = append(args, "--posix-shm="+o.PosixShm)
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
	// RunAsGroup, SupplementalGroups, DropCaps and NoNewPrivs: see
	// ContainerOptions.
	RunAsGroup         *int64
	SupplementalGroups []int64
	DropCaps           []string
	NoNewPrivs         bool
	// Image defaults to the debug image.
	Image string
	// Command defaults to a shell that sleeps with a recognizable argv.
	Command         []string
	Stdin, TTY      bool
	StdinOnce       bool
	DoNotWaitForRun bool
	// Userns is nil for the sandbox's user namespace (what the kubelet
	// sends); a spec of invalid requests gives another.
	Userns *runtimeapi.UserNamespace
}

// DebugMarker is the argv marker of a debug container called name.
func (f *Framework) DebugMarker(name string) string { return oracle.DebugMarker(f.Token, name) }

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
		RunAsGroup: o.RunAsGroup, SupplementalGroups: o.SupplementalGroups, DropCaps: o.DropCaps, NoNewPrivs: o.NoNewPrivs,
		Userns: o.Userns,
	}
}

// TryStartDebug creates and starts a debug container; err is the runtime's.
func (f *Framework) TryStartDebug(ctx context.Context, sb *Sandbox, o DebugOptions) (*Container, error) {
	ginkgo.GinkgoHelper()
	c, err := f.TryStartContainer(ctx, sb, f.debugContainerOptions(o))
	if c != nil {
		c.Marker = f.DebugMarker(o.Name)
		if err == nil {
			f.noteNetns(c)
		}
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

// PIDView is what was observed of a container's PID namespace.
type PIDView struct {
	View View
	// Why says what decided the view; From says whose view it was:
	// "outside" (the node's /proc) or InsideNote.
	Why, From string
	// Processes and PS are what ps shows inside the observer: evidence,
	// and the PIDs as the observer sees them (PIDOf).
	Processes []Process
	PS        string
	// Links are the PID namespace identities compared ("observer",
	// "target", a sibling's name, "node", "PID 1").
	Links map[string]string
	// Own are the observer's own processes, read from outside (nil when
	// the inside view decided).
	Own []oracle.Process
	// Inside is what the processes ps shows inside look like (Classify;
	// "" when ps failed): what a user of the debug container sees.
	Inside View
}

// Evidence is what decided the view, the namespace links and ps, for a report.
func (v PIDView) Evidence() string {
	var keys []string
	for k := range v.Links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "judged %s: %s\n", orText(v.From, "by nobody"), v.Why)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, v.Links[k])
	}
	return fmt.Sprintf("%sps inside the observer:\n%s", b.String(), v.PS)
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// ObservePIDs decides which PID namespace observer is in, by the oracle
// (oracle.JudgePID): namespace identities, equal or unequal, of the
// observer's own processes, the target's, the siblings', PID 1 of the
// observer's namespace and the node's reference process. They are read
// from the node's /proc, outside the containers, wherever the sandbox's
// processes are visible there; where they are not (a runtime with a kernel
// of its own), from inside: the observer's /proc/self/ns/pid and ps, the
// target's and siblings' own links (GET /info), and the view says so.
// What ps shows inside is evidence beside the verdict.
func (f *Framework) ObservePIDs(ctx context.Context, observer *Container, target *Container, siblings ...*Container) (PIDView, error) {
	procs, raw, psErr := f.Processes(ctx, observer)
	v := PIDView{Processes: procs, PS: raw, Links: map[string]string{}}
	if psErr != nil {
		v.PS = fmt.Sprintf("(ps failed: %v)\n%s", psErr, raw)
	}
	m := Markers{Self: observer.Marker, Helpers: DebugHelpers}
	if target != nil {
		m.Target = target.Marker
	}
	for _, s := range siblings {
		m.Siblings = append(m.Siblings, s.Marker)
	}
	out := f.Outside()
	if link, ok := out.NodeLink(oracle.PID); ok {
		v.Links["node"] = link + " (" + out.Node.How + ")"
	} else {
		v.Links["node"] = "unknown: " + out.NoNode
	}
	own, err := out.Find(observer.Marker)
	if err != nil {
		return v, fmt.Errorf("read the node's /proc: %w", err)
	}
	var subjects oracle.PIDSubjects
	if len(own) > 0 {
		v.From, v.Own = "outside, from the node's /proc", own
		subjects, err = f.outsideSubjects(out, own, target, siblings, v.Links)
	} else {
		if psErr != nil {
			return v, psErr
		}
		v.From = InsideNote
		subjects, err = f.insideSubjects(ctx, observer, procs, m, target, siblings, v.Links)
	}
	if err != nil {
		v.View, v.Why = ViewOther, err.Error()
		return v, nil
	}
	subjects.Node = out.Node
	v.View, v.Why = oracle.JudgePID(subjects)
	if psErr == nil {
		v.Inside = Classify(procs, m)
		if v.Inside != v.View {
			v.Why += fmt.Sprintf("; the processes ps shows inside look like the %s", v.Inside)
		}
	}
	return v, nil
}

// outsideSubjects reads the target's and siblings' processes and PID 1 of
// the observer's namespace from the node's /proc.
func (f *Framework) outsideSubjects(out *Outside, own []oracle.Process, target *Container, siblings []*Container, links map[string]string) (oracle.PIDSubjects, error) {
	s := oracle.PIDSubjects{Observer: own}
	for _, p := range own {
		links["observer"] += fmt.Sprintf("%s (PID %d, %d inside) ", p.Namespaces[oracle.PID], p.PID, p.InnerPID())
	}
	one := func(c *Container) (*oracle.Process, error) {
		ps, err := out.Find(c.Marker)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("the observer's process is visible in the node's /proc, but no process of %s is", c.Name)
		}
		// The identity rule (oracle.WorkloadFirst): the workload decides;
		// every process carrying the marker is named.
		links[c.Name] = fmt.Sprintf("%s (%s)", ps[0].Namespaces[oracle.PID], oracle.Carriers(ps))
		return &ps[0], nil
	}
	if target != nil {
		t, err := one(target)
		if err != nil {
			return s, err
		}
		s.Target = t
	}
	for _, c := range siblings {
		p, err := one(c)
		if err != nil {
			return s, err
		}
		s.Siblings = append(s.Siblings, *p)
	}
	init, ok, err := out.Proc.InitOf(own[0].Namespaces[oracle.PID])
	if err != nil {
		return s, err
	}
	if ok {
		s.Init = &init
		links["PID 1"] = fmt.Sprintf("PID %d %q", init.PID, init.Args)
	}
	return s, nil
}

// insideSubjects builds the same facts from inside: the observer's own
// link and ps, the target's and siblings' links as they report them. Their
// processes get stand-in PIDs (negative, one per container), since PIDs
// seen in different namespaces cannot be compared.
func (f *Framework) insideSubjects(ctx context.Context, observer *Container, procs []Process, m Markers, target *Container, siblings []*Container, links map[string]string) (oracle.PIDSubjects, error) {
	var s oracle.PIDSubjects
	self, err := f.NamespaceLink(ctx, observer, "pid")
	if err != nil {
		return s, err
	}
	links["observer"] = self + " (its own /proc/self/ns/pid)"
	innerOf := func(marker string) int {
		for _, p := range procs {
			if strings.Contains(p.Args, marker) {
				return p.PID
			}
		}
		return 0
	}
	s.Observer = []oracle.Process{{PID: -1, Args: observer.Marker, NSpid: []int{innerOf(observer.Marker)}, Namespaces: map[oracle.Kind]string{oracle.PID: self}}}
	reported := func(c *Container, standIn int) (*oracle.Process, error) {
		if c.Port == 0 {
			// A debug container has no /info: its own link, through exec.
			l, err := f.NamespaceLink(ctx, c, "pid")
			if err != nil {
				return nil, fmt.Errorf("%s serves no /info, and its own link is unreadable: %v", c.Name, err)
			}
			links[c.Name] = l + " (its own /proc/self/ns/pid)"
			return &oracle.Process{PID: standIn, Args: c.Marker, Namespaces: map[oracle.Kind]string{oracle.PID: l}}, nil
		}
		info, err := f.TryTargetInfoFrom(ctx, observer, c.Port)
		if err != nil {
			return nil, err
		}
		links[c.Name] = info.Namespaces["pid"] + " (as it reports)"
		return &oracle.Process{PID: standIn, Args: c.Marker, NSpid: []int{info.PID}, Namespaces: map[oracle.Kind]string{oracle.PID: info.Namespaces["pid"]}}, nil
	}
	if target != nil {
		if s.Target, err = reported(target, -2); err != nil {
			return s, err
		}
	}
	for i, c := range siblings {
		p, err := reported(c, -3-i)
		if err != nil {
			return s, err
		}
		s.Siblings = append(s.Siblings, *p)
	}
	for _, p := range procs {
		if p.PID != 1 {
			continue
		}
		standIn := -1000
		switch {
		case strings.Contains(p.Args, m.Self):
			standIn = -1
		case m.Target != "" && strings.Contains(p.Args, m.Target):
			standIn = -2
		}
		for i, sm := range m.Siblings {
			if strings.Contains(p.Args, sm) {
				standIn = -3 - i
			}
		}
		s.Init = &oracle.Process{PID: standIn, Args: p.Args, NSpid: []int{1}, Namespaces: map[oracle.Kind]string{oracle.PID: self}}
		links["PID 1"] = p.Args + " (in ps)"
	}
	return s, nil
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
// create with a refusal code (see JudgeRefusal), deviated otherwise. It
// returns the debug container (nil if refused).
func (f *Framework) RecordPIDView(ctx context.Context, n capability.Name, want View, sb *Sandbox, o DebugOptions, target *Container, siblings ...*Container) (*Container, PIDView) {
	ginkgo.GinkgoHelper()
	f.RequireNode(want)
	dbg, err := f.TryStartDebug(ctx, sb, o)
	if err != nil {
		// Only a refusal at create, with a refusal code, is the error the
		// CRI asks of a runtime that does not implement a mode.
		f.Checker.Record(RefusalObservation(n, dbg != nil, err))
		return nil, PIDView{}
	}
	view := f.MustObservePIDs(ctx, dbg, target, siblings...)
	f.Checker.Record(PIDObservation(n, want, dbg, view).Done(string(view.View)))
	return dbg, view
}

// MustObservePIDs is ObservePIDs for a spec that cannot go on without a
// view: an error is the run's own.
func (f *Framework) MustObservePIDs(ctx context.Context, observer *Container, target *Container, siblings ...*Container) PIDView {
	ginkgo.GinkgoHelper()
	view, err := f.ObservePIDs(ctx, observer, target, siblings...)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("observe the PID namespace of %s: %v\n%s", observer.Name, err, view.PS))
	}
	return view
}

// PIDObservation is the observation of capability n for a container whose
// view is want: a problem when the oracle found it elsewhere, and when
// what it sees inside (ps) is not what that namespace shows. Specs may
// add their own checks before recording it.
func PIDObservation(n capability.Name, want View, c *Container, view PIDView) *capability.Builder {
	b := capability.Observe(n).Evidence("wanted: %s\nin %s: %s", want, c.Name, view.Evidence())
	b.Check(view.View == want, "%s", view.View)
	b.Check(view.View != want || view.Inside == "" || view.Inside == want,
		"in the %s, but the processes it sees (ps) look like the %s", want, view.Inside)
	return b
}

// RequireNode skips, saying why, a spec that must tell the node's
// namespace when the node's namespaces cannot be established from here
// (the suite in a container of its own, a remote endpoint): its verdict
// would rest on nothing.
func (f *Framework) RequireNode(want View) {
	ginkgo.GinkgoHelper()
	if want == ViewNode && f.Outside().Node == nil {
		ginkgo.Skip("not judged: the node's namespace cannot be told from here: " + f.Outside().NoNode)
	}
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

// StartTargetingDebug starts a PID TARGET debug container for a spec whose
// capability n depends on pid-target (capability.DependsOn): it reads the
// target's files, ptraces its processes, or replays a story through its PID
// namespace. When the runtime refuses the container or puts it anywhere but
// the target's PID namespace, there is nothing to check: what it did is
// pid-target's observation, recorded through the judge (Checker.BlockOn:
// nonconformant, n blocked by it and the spec fails; refused as the
// profile declares, n not applicable and the spec skips). It returns the
// debug container and what it sees.
func (f *Framework) StartTargetingDebug(ctx context.Context, n capability.Name, sb *Sandbox, o DebugOptions, target *Container) (*Container, PIDView) {
	ginkgo.GinkgoHelper()
	o.PID, o.TargetID = Mode(runtimeapi.NamespaceMode_TARGET), target.ID
	dep := capability.DependsOn(n)
	dbg, err := f.TryStartDebug(ctx, sb, o)
	if err != nil {
		f.Checker.BlockOn(RefusalObservation(dep, dbg != nil, err))
		return nil, PIDView{}
	}
	view, err := f.ObservePIDs(ctx, dbg, target)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("observe processes from %s: %v\n%s", dbg.Name, err, view.PS))
	}
	if view.View != ViewTarget {
		f.Checker.BlockOn(PIDObservation(dep, ViewTarget, dbg, view).Done(string(view.View)))
	}
	f.RequireExecInPlace(ctx, dbg)
	return dbg, view
}

// RequireExecInPlace checks, before a spec observes through exec sessions
// in c (ptrace, files through /proc, a story), that they land where c's
// own process does. Where they do not, that is an exec nonconformance,
// recorded as such (Checker.BlockOn), and the spec's other capabilities are
// blocked by it: there is nothing to check through such sessions.
func (f *Framework) RequireExecInPlace(ctx context.Context, c *Container) {
	ginkgo.GinkgoHelper()
	p, err := f.ObserveExec(ctx, c)
	if err != nil {
		f.Checker.Fail(fmt.Sprintf("observe where an exec session in %s runs: %v", c.Name, err))
	}
	if len(p.Differences) > 0 {
		f.Checker.BlockOn(capability.Observe(capability.Exec).
			Evidence("where an exec session in %s runs, judged %s:\n%s", c.Name, p.From, p.Evidence).
			Problem("exec sessions do not run where the container's own process does: %s", strings.Join(p.Differences, "; ")).
			Done(""))
	}
}
