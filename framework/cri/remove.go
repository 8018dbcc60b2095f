package cri

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// passing are words by which a runtime says it refuses to stop or remove
// something only for now: it is still starting, running or stopping
// (containerd: "container is in starting state, can't be removed"), or
// another call on it is in progress.
var passing = []string{"starting", "running", "stopping", "creating", "in progress", "is being", "busy", "not yet"}

// Passing reports whether a refusal to stop or remove is one the runtime
// lifts by itself, so that a cleanup asks again (within Timeouts.Cleanup):
// a state that passes, or a call that timed out or found the runtime busy.
func Passing(err error) bool {
	switch status.Code(err) {
	case codes.OK, codes.NotFound:
		return false
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.ResourceExhausted:
		return true
	}
	m := strings.ToLower(status.Convert(err).Message())
	for _, w := range passing {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// Remover stops and removes containers and sandboxes, asking again while
// the runtime refuses for a while (Passing) until Within runs out; each
// call is bounded by Call. NotFound is success: the thing is gone.
type Remover struct {
	Runtime runtimeapi.RuntimeServiceClient
	Within  time.Duration
	Call    time.Duration
	Poll    time.Duration
}

// RemoverFor is a Remover with the session's timeouts.
func (s *Session) RemoverFor() Remover {
	return Remover{Runtime: s.Runtime.Runtime, Within: s.Timeouts.Cleanup, Call: s.Timeouts.RuntimeCall, Poll: s.Timeouts.Poll}
}

// Container stops and removes container id.
func (r Remover) Container(ctx context.Context, id string) error {
	return r.retry(ctx, func(ctx context.Context) []error {
		var errs []error
		if _, err := r.call(ctx, func(ctx context.Context) error {
			_, err := r.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("StopContainer %s: %w", id, err))
		}
		if _, err := r.call(ctx, func(ctx context.Context) error {
			_, err := r.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("RemoveContainer %s: %w", id, err))
		}
		return errs
	})
}

// Sandbox stops and removes sandbox id (and with it its containers).
func (r Remover) Sandbox(ctx context.Context, id string) error {
	return r.retry(ctx, func(ctx context.Context) []error {
		var errs []error
		if _, err := r.call(ctx, func(ctx context.Context) error {
			_, err := r.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("StopPodSandbox %s: %w", id, err))
		}
		if _, err := r.call(ctx, func(ctx context.Context) error {
			_, err := r.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
			return err
		}); err != nil {
			errs = append(errs, fmt.Errorf("RemovePodSandbox %s: %w", id, err))
		}
		return errs
	})
}

// call runs one CRI call within r.Call; a NotFound answer is no error.
func (r Remover) call(ctx context.Context, f func(context.Context) error) (bool, error) {
	cctx, cancel := context.WithTimeout(ctx, r.Call)
	defer cancel()
	err := f(cctx)
	if err == nil || status.Code(err) == codes.NotFound {
		return true, nil
	}
	return false, statusError{err}
}

// retry runs attempt until it meets no error, or only errors that do not
// pass, or Within runs out; it returns the last attempt's errors.
func (r Remover) retry(ctx context.Context, attempt func(context.Context) []error) error {
	ctx, cancel := context.WithTimeout(ctx, r.Within)
	defer cancel()
	var errs []error
	_ = wait.PollUntilContextCancel(ctx, r.Poll, true, func(ctx context.Context) (bool, error) {
		errs = attempt(ctx)
		for _, err := range errs {
			if Passing(err) {
				return false, nil
			}
		}
		return true, nil
	})
	return errors.Join(errs...)
}

// statusError keeps a gRPC error's status for Passing and prints it as
// StatusText does.
type statusError struct{ err error }

func (e statusError) Error() string              { return StatusText(e.err) }
func (e statusError) Unwrap() error              { return e.err }
func (e statusError) GRPCStatus() *status.Status { return status.Convert(e.err) }

// Leftover is what a run of the suite left in a runtime, found by the
// labels the suite puts on everything it creates.
type Leftover struct {
	Sandboxes  []*runtimeapi.PodSandbox
	Containers []*runtimeapi.Container
}

// Empty reports whether nothing was found.
func (l Leftover) Empty() bool { return len(l.Sandboxes) == 0 && len(l.Containers) == 0 }

// FindLeftovers lists the sandboxes and containers labelled as the suite's
// (LabelSuite) whose run label is not except: what earlier runs against
// this runtime left, or what another run uses now.
func FindLeftovers(ctx context.Context, rt runtimeapi.RuntimeServiceClient, selector map[string]string, except string) (Leftover, error) {
	var out Leftover
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: selector}})
	if err != nil {
		return out, fmt.Errorf("ListPodSandbox: %s", StatusText(err))
	}
	for _, sb := range sbs.Items {
		if sb.Labels[LabelRun] != except || except == "" {
			out.Sandboxes = append(out.Sandboxes, sb)
		}
	}
	cs, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: selector}})
	if err != nil {
		return out, fmt.Errorf("ListContainers: %s", StatusText(err))
	}
	for _, c := range cs.Containers {
		if c.Labels[LabelRun] != except || except == "" {
			out.Containers = append(out.Containers, c)
		}
	}
	return out, nil
}

// Runs are the run IDs the leftovers carry, sorted.
func (l Leftover) Runs() []string {
	seen := map[string]bool{}
	for _, sb := range l.Sandboxes {
		seen[sb.Labels[LabelRun]] = true
	}
	for _, c := range l.Containers {
		seen[c.Labels[LabelRun]] = true
	}
	var out []string
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// Remove removes the leftovers, containers first; every error is returned.
func (l Leftover) Remove(ctx context.Context, r Remover) error {
	var errs []error
	for _, c := range l.Containers {
		errs = append(errs, r.Container(ctx, c.Id))
	}
	for _, sb := range l.Sandboxes {
		errs = append(errs, r.Sandbox(ctx, sb.Id))
	}
	return errors.Join(errs...)
}

// Commands are the crictl commands that remove the leftovers by hand,
// for a runtime at endpoint: what a run that could not remove something
// tells its user to do.
func (l Leftover) Commands(endpoint string) []string {
	var out []string
	flag := ""
	if endpoint != "" {
		flag = " --runtime-endpoint " + endpoint
	}
	var ids []string
	for _, c := range l.Containers {
		ids = append(ids, c.Id)
	}
	if len(ids) > 0 {
		out = append(out, "crictl"+flag+" rm -f "+strings.Join(ids, " "))
	}
	ids = nil
	for _, sb := range l.Sandboxes {
		ids = append(ids, sb.Id)
	}
	if len(ids) > 0 {
		out = append(out, "crictl"+flag+" rmp -f "+strings.Join(ids, " "))
	}
	return out
}
