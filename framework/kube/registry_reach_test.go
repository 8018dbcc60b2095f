package kube

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A pull that never reached the suite's registry is the environment's
// (the message seen on a kind node told to pull from the suite's loopback
// address); the registry answering, another registry, or another state is
// not.
func TestRegistryUnreachable(t *testing.T) {
	const reg = "127.0.0.1:41855"
	refused := `Back-off pulling image "127.0.0.1:41855/ectest/target@sha256:01e0": ErrImagePull: failed to pull and unpack image "127.0.0.1:41855/ectest/target@sha256:01e0": failed to resolve reference "127.0.0.1:41855/ectest/target@sha256:01e0": failed to do request: Head "https://127.0.0.1:41855/v2/ectest/target/manifests/sha256:01e0": dial tcp 127.0.0.1:41855: connect: connection refused`
	unknown := `failed to pull and unpack image "127.0.0.1:41855/ectest/debug:absent-x": failed to resolve reference "127.0.0.1:41855/ectest/debug:absent-x": 127.0.0.1:41855/ectest/debug:absent-x: not found`
	pod := func(kind, image, reason, message string) *corev1.Pod {
		s := corev1.ContainerStatus{Name: "c", Image: image, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}}
		switch kind {
		case "ephemeral":
			p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{s}
		case "init":
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
		default:
			p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
		}
		return p
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"back-off, connection refused", pod("", reg+"/ectest/target@sha256:01e0", "ImagePullBackOff", refused), true},
		{"ephemeral, plain HTTP refused", pod("ephemeral", reg+"/ectest/debug:x", "ErrImagePull", `failed to do request: Head "https://127.0.0.1:41855/v2/": http: server gave HTTP response to HTTPS client`), true},
		{"init, i/o timeout", pod("init", reg+"/ectest/debug:x", "ErrImagePull", "dial tcp 127.0.0.1:41855: i/o timeout"), true},
		{"RegistryUnavailable, no such host", pod("", "reg.example:5000/ectest/target", "RegistryUnavailable", "failed to resolve reference: dial tcp: lookup reg.example on 10.96.0.10:53: no such host"), false}, // another registry than reg
		{"the runtime's own socket refused, in a back-off", pod("", reg+"/ectest/target", "ImagePullBackOff", `Back-off pulling image "127.0.0.1:41855/ectest/target": ErrImagePull: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"`), false},
		{"the registry answered: not found", pod("ephemeral", reg+"/ectest/debug:absent-x", "ErrImagePull", unknown), false},
		{"another registry", pod("", "10.0.0.9:5000/img", "ErrImagePull", "dial tcp 10.0.0.9:5000: connect: connection refused"), false},
		{"not a pull failure", pod("", reg+"/ectest/target", "CreateContainerError", refused), false},
		{"nil pod", nil, false},
	} {
		err := RegistryUnreachable(c.pod, reg)
		if (err != nil) != c.want {
			t.Errorf("%s: got %v, want an error: %v", c.name, err, c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "-registry-addr") {
			t.Errorf("%s: the error does not say what to do: %v", c.name, err)
		}
	}
	if err := RegistryUnreachable(pod("", "reg.example:5000/x", "RegistryUnavailable", "dial tcp: lookup reg.example on 10.96.0.10:53: no such host"), "reg.example:5000"); err == nil {
		t.Errorf("RegistryUnavailable, the suite's registry's name not found: want an error")
	}
	if err := RegistryUnreachable(pod("", reg+"/x", "ErrImagePull", refused), ""); err != nil {
		t.Errorf("no registry of the suite's: got %v", err)
	}
}

// Pull failures are told apart from a node refusing a pod: the reasons a
// container waits for its image, and the events of pulling it.
func TestPullFailure(t *testing.T) {
	for s, want := range map[string]bool{
		"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "RegistryUnavailable": true,
		`Failed to pull image "127.0.0.1:5000/ectest/target@sha256:61": failed to resolve reference`: true,
		"Error: ErrImagePull": true, `Back-off pulling image "x"`: true,
		"CreateContainerError": false, "RunContainerError": false,
		`Error: failed to create containerd container: pull-through-cache.example/ectest/target: idmapped mounts are not supported`:               false,
		"Error: failed to create containerd container: mount callback failed on /var/lib/containerd/tmpmounts: idmapped mounts are not supported": false,
	} {
		if got := PullFailure(s); got != want {
			t.Errorf("PullFailure(%q) = %v, want %v", s, got, want)
		}
	}
}
