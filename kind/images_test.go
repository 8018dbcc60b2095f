package kind

import "testing"

func TestNewestTag(t *testing.T) {
	list := "2026-11-20 10:00:00 +0000 UTC\tv1.37.1-containerd-2-aaaaaaaaaaaa\n" +
		"2026-11-25 10:00:00 +0000 UTC\tv1.37.1-containerd-2-gvisor-cccccccccccc\n" +
		"2026-11-24 10:00:00 +0000 UTC\tv1.37.1-containerd-2-bbbbbbbbbbbb\n" +
		"2026-11-25 11:00:00 +0000 UTC\tv1.37.1-containerd-2-kubelet-v1.36.4-dddddddddddd\n"
	for prefix, want := range map[string]string{
		"v1.37.1-containerd-2-":                 "v1.37.1-containerd-2-bbbbbbbbbbbb",
		"v1.37.1-containerd-2-gvisor-":          "v1.37.1-containerd-2-gvisor-cccccccccccc",
		"v1.37.1-containerd-2-kubelet-v1.36.4-": "v1.37.1-containerd-2-kubelet-v1.36.4-dddddddddddd",
		"v1.36.4-containerd-2-":                 "",
	} {
		if got := newestTag(list, prefix); got != want {
			t.Errorf("%s: %q, want %q", prefix, got, want)
		}
	}
}
