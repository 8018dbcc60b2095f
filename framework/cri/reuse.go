package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
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
// passed, every container it made is gone (the runtime lists none in the
// sandbox), and, read from this machine's /proc, nothing but the sandbox's
// infra process is left in its network namespace. Whatever the suite cannot
// see that way (a runtime with a kernel of its own, a Windows node, a
// sandbox no container with a marker ran in) is never reused. The next spec
// takes it only if the runtime still reports it ready; the pool is emptied
// at the end of the process (Session.RemoveReusableSandboxes), before the
// run's leak check.

// reuseKey is what a reusable sandbox's options may differ in: only the
// PID sharing (the zero value's CONTAINER, or POD with SharePID); network
// and IPC are POD, no user namespace.
type reuseKey struct{ sharePID bool }

// reusable reports whether a sandbox of opts may be shared between specs,
// and under which key.
func reusable(opts SandboxOptions) (reuseKey, bool) {
	ok := opts.Reuse && opts.Userns == nil && opts.PID == runtimeapi.NamespaceMode_POD &&
		opts.Network == runtimeapi.NamespaceMode_POD && opts.IPC == runtimeapi.NamespaceMode_POD
	return reuseKey{sharePID: opts.SharePID}, ok
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

// holds reports whether sb is idle in the pool.
func (p *sandboxPool) holds(sb *Sandbox) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, list := range p.idle {
		for _, s := range list {
			if s == sb {
				return true
			}
		}
	}
	return false
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
// reusable sandbox, the sandbox's network namespace as read from outside:
// what releaseSandbox checks is empty but for the infra process.
func (f *Framework) noteNetns(c *Container) {
	if sb := c.Sandbox; sb != nil && sb.reuse != nil && sb.netns == "" && c.Marker != "" {
		_, _ = f.Own(c) // which notes it
	}
}

// noteNetnsOf records c's sandbox's network namespace from own, c's own
// processes as read from outside (Own).
func (f *Framework) noteNetnsOf(c *Container, own []oracle.Process) {
	if sb := c.Sandbox; sb != nil && sb.reuse != nil && sb.netns == "" && len(own) > 0 {
		sb.netns = own[0].Namespaces[oracle.Net]
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
	}
	return seen.why()
}

// sandboxSeen is what decides whether a sandbox may serve another spec.
type sandboxSeen struct {
	failed     bool   // the spec did not pass
	netns      string // the sandbox's network namespace seen from outside
	state      runtimeapi.PodSandboxState
	stateErr   error
	containers int // containers the runtime lists in the sandbox
	listErr    error
	procs      []oracle.Process // the processes in netns, read from outside
	procErr    error
}

// why says why the sandbox may not serve another spec ("" when it may):
// the spec passed, the suite saw its network namespace from outside, the
// runtime reports it ready and lists no container in it, and nothing but
// one process (its infra) is in that namespace.
func (s sandboxSeen) why() string {
	switch {
	case s.failed:
		return "the spec did not pass"
	case s.netns == "":
		return "its network namespace was never seen from outside"
	case s.stateErr != nil || s.state != runtimeapi.PodSandboxState_SANDBOX_READY:
		return fmt.Sprintf("its state is %s (%v)", s.state, s.stateErr)
	case s.listErr != nil || s.containers > 0:
		return fmt.Sprintf("the runtime lists %d containers in it (%v)", s.containers, s.listErr)
	case s.procErr != nil:
		return "its network namespace: " + s.procErr.Error()
	case len(s.procs) != 1:
		var ps []string
		for _, p := range s.procs {
			ps = append(ps, p.String())
		}
		return fmt.Sprintf("%d processes in its network namespace, not only its infra: %s", len(s.procs), strings.Join(ps, "; "))
	}
	return ""
}

// discardSandbox removes a reusable sandbox and its log directory.
func (s *Session) discardSandbox(sb *Sandbox) error {
	return errors.Join(s.removeSandbox(sb.ID), os.RemoveAll(sb.Config.LogDirectory))
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
