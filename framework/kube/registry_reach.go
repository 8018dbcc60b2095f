package kube

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// transportFailures are what a node's runtime says when it could not talk
// to a registry at all (as against the registry answering, say, that a
// manifest is unknown): Go's and containerd's wording, which CRI-O shares.
var transportFailures = []string{
	"connection refused",
	"no route to host",
	"network is unreachable",
	"i/o timeout",
	"connection reset by peer",
	"no such host",
	"server gave HTTP response to HTTPS client",
	"x509:",
	"tls: ",
}

// RegistryUnreachable is, for a pod one of whose containers waits because
// its node could not reach the suite's own registry (host:port) at all, an
// error saying so; nil otherwise. That is the suite's environment (the
// nodes must reach its registry and pull from it over plain HTTP), never a
// verdict on the runtime or the kubelet. WaitPod makes a wait on such a pod
// a run error once it has lasted Timeouts.RegistryUnreachable (one dropped
// request is not the environment), not a failure once its timeout runs out.
func RegistryUnreachable(p *corev1.Pod, registry string) error {
	if p == nil || registry == "" {
		return nil
	}
	statuses := append(append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...), p.Status.EphemeralContainerStatuses...)
	for _, s := range statuses {
		w := s.State.Waiting
		if w == nil || (w.Reason != "ErrImagePull" && w.Reason != "ImagePullBackOff" && w.Reason != "RegistryUnavailable") {
			continue
		}
		if !strings.HasPrefix(s.Image, registry+"/") {
			continue
		}
		// Said of the registry itself (its address dialled, looked up, or
		// spoken to over HTTPS), not of the runtime's own socket, which a
		// back-off message also quotes beside the image's name.
		host, _, _ := strings.Cut(registry, ":")
		if !strings.Contains(w.Message, "dial tcp "+registry) && !strings.Contains(w.Message, "https://"+registry+"/") && !strings.Contains(w.Message, "lookup "+host) {
			continue
		}
		for _, m := range transportFailures {
			if strings.Contains(w.Message, m) {
				return fmt.Errorf("node %s cannot reach the suite's registry at %s (container %s of pod %s/%s: %s: %s): the nodes must reach it and pull from it over plain HTTP; give -registry-addr=<an address of this machine the nodes reach> (docs/cluster.md)",
					p.Spec.NodeName, registry, s.Name, p.Namespace, p.Name, w.Reason, w.Message)
			}
		}
	}
	return nil
}

// RegistryWatch follows a pod over a wait: Check says the node cannot reach
// the suite's registry once RegistryUnreachable has held for For (one
// dropped request is not the environment).
type RegistryWatch struct {
	Registry string
	For      time.Duration
	since    time.Time
	// found, when set (Framework.WatchRegistry), keeps what Check found
	// for every later wait of the process.
	found *atomic.Pointer[error]
}

// WatchRegistry is a RegistryWatch of the suite's registry for a wait on a
// pod of this spec; what it finds, the process's later waits are told at
// once (RegistryFound).
func (f *Framework) WatchRegistry() *RegistryWatch {
	return &RegistryWatch{Registry: f.Registry, For: f.Timeouts.RegistryUnreachable, found: &f.Session.unreachable}
}

// RegistryFound is why a node could not reach the suite's registry, once a
// wait of this process found it; nil before.
func (f *Framework) RegistryFound() error {
	if p := f.Session.unreachable.Load(); p != nil {
		return fmt.Errorf("%w; found by an earlier spec of this process", *p)
	}
	return nil
}

// Check is RegistryUnreachable of p once it has held for w.For, with how
// long; nil before and while the registry is reached.
func (w *RegistryWatch) Check(p *corev1.Pod) error {
	err := RegistryUnreachable(p, w.Registry)
	switch {
	case err == nil:
		w.since = time.Time{}
	case w.since.IsZero():
		w.since = time.Now()
	case time.Since(w.since) >= w.For:
		err = fmt.Errorf("%w (for %s)", err, time.Since(w.since).Round(time.Second))
		if w.found != nil {
			w.found.CompareAndSwap(nil, &err)
		}
		return err
	}
	return nil
}

// PullFailure says whether a container's waiting reason or an event's
// message is about getting the image (pulling it, backing off from it),
// which a spec judging whether a node runs a pod must not take for the
// node refusing it: that is the image's or the registry's, not the pod's.
func PullFailure(reasonOrMessage string) bool {
	switch reasonOrMessage {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "RegistryUnavailable", "SignatureValidationFailed":
		return true
	}
	for _, m := range pullMessages {
		if strings.Contains(reasonOrMessage, m) {
			return true
		}
	}
	return false
}

// pullMessages are how the kubelet's events and waiting messages speak of
// getting an image (not a word an image's name or a registry's host may
// hold, as "pull" alone is).
var pullMessages = []string{"Failed to pull image", "Error: ErrImagePull", "Error: ImagePullBackOff", "Back-off pulling image", "ErrImageNeverPull", "InvalidImageName"}
