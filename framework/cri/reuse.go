package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ectest/ectest/framework/oracle"
	"github.com/onsi/ginkgo/v2"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A sandbox asked for with SandboxOptions.Reuse may be one an earlier spec
// of the same process ran in: a sandbox's start and stop are about a third
// of a spec's time (RunPodSandbox 0.3 s, StopPodSandbox 0.25 s and
// RemovePodSandbox 0.06 s of a 1.8 s spec under -parallel=4 on containerd
// here). A spec's independence is kept by what the suite sees itself: a
// sandbox goes back to its process's pool only when the spec that used it
// did not fail, every container it made is gone (the runtime lists none in
// the sandbox), and, read from this machine's /proc, nothing but the
// sandbox's infra process (the same one as when the spec began, or none
// where the runtime pins namespaces without one) is left in its network
// namespace. What the specs that ask for reuse leave nowhere else (IPC
// objects, /dev/shm files) is not checked: those specs keep sandboxes of
// their own (SandboxOptions.Reuse). Whatever the suite cannot
// see that way (a runtime with a kernel of its own, a Windows node, a
// sandbox no container with a marker ran in) is never reused. The next spec
// takes it only if the runtime still reports it ready; the pool is emptied
// at the end of the process (Session.RemoveReusableSandboxes), before the
// run's leak check.

// reuseKey is what a reusable sandbox's options may differ in: only the
// PID mode the sandbox is made with (CONTAINER, or POD with SharePID);
// network and IPC are POD, no user namespace.
type reuseKey struct{ pid runtimeapi.NamespaceMode }

// reusable reports whether a sandbox of opts may be shared between specs,
// and under which key.
func reusable(opts SandboxOptions) (reuseKey, bool) {
	pid := runtimeapi.NamespaceMode_CONTAINER
	switch {
	case opts.PID == runtimeapi.NamespaceMode_POD && opts.SharePID:
		pid = runtimeapi.NamespaceMode_POD
	case opts.PID != runtimeapi.NamespaceMode_POD && opts.PID != runtimeapi.NamespaceMode_CONTAINER:
		return reuseKey{}, false
	}
	ok := opts.Reuse && opts.Userns == nil &&
		opts.Network == runtimeapi.NamespaceMode_POD && opts.IPC == runtimeapi.NamespaceMode_POD
	return reuseKey{pid: pid}, ok
}

// sandboxPool holds a process's idle reusable sandboxes.
type sandboxPool struct {
	mu   sync.Mutex
	idle map[reuseKey][]*Sandbox
}

func (p *sandboxPool) take(k reuseKey) *Sandbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.idle[k]
	if len(list) == 0 {
		return nil
	}
	sb := list[len(list)-1]
	p.idle[k] = list[:len(list)-1]
	return sb
}

func (p *sandboxPool) put(sb *Sandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle == nil {
		p.idle = map[reuseKey][]*Sandbox{}
	}
	p.idle[*sb.reuse] = append(p.idle[*sb.reuse], sb)
}

func (p *sandboxPool) drain() []*Sandbox {
	p.mu.Lock()
	defer p.mu.Unlock()
	var all []*Sandbox
	for _, list := range p.idle {
		all = append(all, list...)
	}
	p.idle = nil
	return all
}

// reuseSandbox takes an idle sandbox of opts's key that the runtime still
// reports ready and registers its release; nil when there is none.
func (f *Framework) reuseSandbox(ctx context.Context, k reuseKey) *Sandbox {
	ginkgo.GinkgoHelper()
	for {
		sb := f.pool.take(k)
		if sb == nil {
			return nil
		}
		state, err := f.SandboxState(ctx, sb)
		if err != nil || state != runtimeapi.PodSandboxState_SANDBOX_READY {
			// Not judged: the sandbox only goes, and a new one is made.
			ginkgo.GinkgoWriter.Printf("ectest: not reusing sandbox %s (state %s, %v)\n", sb.ID, state, err)
			if err := f.discardSandbox(sb); err != nil {
				ginkgo.GinkgoWriter.Printf("ectest: removing sandbox %s: %v\n", sb.ID, err)
			}
			continue
		}
		ginkgo.DeferCleanup(f.releaseSandbox, sb)
		return sb
	}
}

// noteNetns records, the first time a container with a marker starts in a
// reusable sandbox, the sandbox's network namespace and what else is in it,
// as read from outside: what releaseSandbox checks is left alone at the end.
func (f *Framework) noteNetns(c *Container) {
	if sb := c.Sandbox; sb != nil && sb.reuse != nil && sb.netns == "" && c.Marker != "" {
		_, _ = f.Own(c) // which notes it
	}
}

// noteNetnsOf records c's sandbox's network namespace from own, c's own
// processes as read from outside (Own), with the sandbox's infra process:
// the one process in it that is PID 1 of its PID namespace and carries
// none of the spec's markers; none on a runtime that pins the namespace
// without one (CRI-O's drop_infra_ctr). Nothing is recorded, and the
// sandbox is not reused, when the infra is not told apart from the spec's
// processes, or when the suite may not read every process (not root).
func (f *Framework) noteNetnsOf(c *Container, own []oracle.Process) {
	sb := c.Sandbox
	if sb == nil || sb.reuse == nil || sb.netns != "" || len(own) == 0 || os.Geteuid() != 0 {
		return
	}
	netns := own[0].Namespaces[oracle.Net]
	procs, err := f.Outside().Proc.InNamespace(oracle.Net, netns)
	if err != nil {
		return
	}
	var infra []oracle.Process
	for _, p := range procs {
		isOwn := slices.ContainsFunc(own, func(o oracle.Process) bool { return o.PID == p.PID })
		if p.InnerPID() == 1 && !strings.Contains(p.Args, f.Token) && !isOwn {
			infra = append(infra, p)
		}
	}
	switch len(infra) {
	case 0:
		sb.netns, sb.infra = netns, nil
	case 1:
		sb.netns, sb.infra = netns, &infra[0]
	}
}

// releaseSandbox gives the spec's reusable sandbox back to the pool when
// nothing of the spec is left in it, and removes it otherwise.
func (f *Framework) releaseSandbox(sb *Sandbox) error {
	if why := f.leftInSandbox(sb); why != "" {
		ginkgo.GinkgoWriter.Printf("ectest: sandbox %s not reused: %s\n", sb.ID, why)
		return f.discardSandbox(sb)
	}
	f.pool.put(sb)
	return nil
}

// leftInSandbox says why sb cannot serve another spec ("" when it can).
func (f *Framework) leftInSandbox(sb *Sandbox) string {
	seen := sandboxSeen{failed: ginkgo.CurrentSpecReport().Failed(), netns: sb.netns}
	if !seen.failed && seen.netns != "" {
		ctx, cancel := context.WithTimeout(context.Background(), f.Timeouts.Cleanup)
		defer cancel()
		seen.state, seen.stateErr = f.SandboxState(ctx, sb)
		var cs []*runtimeapi.Container
		cs, seen.listErr = f.ContainersOf(ctx, sb)
		seen.containers = len(cs)
		seen.procs, seen.procErr = f.Outside().Proc.InNamespace(oracle.Net, sb.netns)
		seen.infra = sb.infra
	}
	return seen.why()
}

// sandboxSeen is what decides whether a sandbox may serve another spec.
type sandboxSeen struct {
	failed     bool   // the spec failed (or was cut off)
	netns      string // the sandbox's network namespace seen from outside
	state      runtimeapi.PodSandboxState
	stateErr   error
	containers int // containers the runtime lists in the sandbox
	listErr    error
	procs      []oracle.Process // the processes in netns, read from outside
	procErr    error
	infra      *oracle.Process // the sandbox's infra, nil when it has none
}

// why says why the sandbox may not serve another spec ("" when it may):
// the spec did not fail, the suite saw its network namespace from outside,
// the runtime reports it ready and lists no container in it, and nothing
// but its infra process (the same one, or none when it had none) is in
// that namespace.
func (s sandboxSeen) why() string {
	switch {
	case s.failed:
		return "the spec failed"
	case s.netns == "":
		return "its network namespace was never seen from outside"
	case s.stateErr != nil || s.state != runtimeapi.PodSandboxState_SANDBOX_READY:
		return fmt.Sprintf("its state is %s (%v)", s.state, s.stateErr)
	case s.listErr != nil || s.containers > 0:
		return fmt.Sprintf("the runtime lists %d containers in it (%v)", s.containers, s.listErr)
	case s.procErr != nil:
		return "its network namespace: " + s.procErr.Error()
	}
	var others []string
	infraSeen := false
	for _, p := range s.procs {
		if s.infra != nil && p.PID == s.infra.PID && p.StartTime == s.infra.StartTime {
			infraSeen = true
			continue
		}
		others = append(others, p.String())
	}
	switch {
	case len(others) > 0:
		return fmt.Sprintf("%d processes besides its infra in its network namespace: %s", len(others), strings.Join(others, "; "))
	case s.infra != nil && !infraSeen:
		return fmt.Sprintf("its infra process %s is gone", s.infra)
	}
	return ""
}

// discardSandbox removes a reusable sandbox and its log directory.
func (s *Session) discardSandbox(sb *Sandbox) error {
	err := s.removeSandbox(sb.ID)
	s.removePodCgroup(sb.Config)
	return errors.Join(err, os.RemoveAll(sb.Config.LogDirectory))
}

// RemoveReusableSandboxes removes the process's idle reusable sandboxes:
// at the end of the process, before the run's leak check.
func (s *Session) RemoveReusableSandboxes() error {
	var errs []error
	for _, sb := range s.pool.drain() {
		errs = append(errs, s.discardSandbox(sb))
	}
	return errors.Join(errs...)
}
