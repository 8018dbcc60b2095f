package nodeimage

import (
	"fmt"
	"regexp"
	"strconv"
)

// Version is a parsed Kubernetes release version.
type Version struct {
	Major, Minor, Patch int
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)$`)

// ParseVersion accepts "v1.36.3" or "1.36.3"; pre-releases are not offered.
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("kubernetes version %q: want vMAJOR.MINOR.PATCH, e.g. v1.37.1", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	if v.Major != 1 || v.Minor < 29 {
		return Version{}, fmt.Errorf("kubernetes version %s: only v1.29 and later can be built (ephemeral containers are GA since v1.25; the proxy carries v1.29+)", s)
	}
	return v, nil
}

func (v Version) String() string { return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch) }

// StagingVersion is the version of the staging modules (k8s.io/api, ...)
// released with this Kubernetes version: v0.MINOR.PATCH.
func (v Version) StagingVersion() string { return fmt.Sprintf("v0.%d.%d", v.Minor, v.Patch) }

// AtLeast reports whether v is minor or later (same major).
func (v Version) AtLeast(minor int) bool { return v.Minor >= minor }

// CheckKubeletSkew enforces the kubelet's skew policy: a kubelet may be up
// to three minor versions older than the API server, never newer.
func CheckKubeletSkew(server, kubelet Version) error {
	if kubelet.Major != server.Major || kubelet.Minor > server.Minor || server.Minor-kubelet.Minor > 3 ||
		(kubelet.Minor == server.Minor && kubelet.Patch > server.Patch) {
		return fmt.Errorf("kubelet %s with an API server %s: outside the kubelet's version skew policy (the same release down to three minor versions older)", kubelet, server)
	}
	return nil
}
