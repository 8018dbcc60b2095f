package kube

import (
	"fmt"
	"strings"

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
