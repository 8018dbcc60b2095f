package kube

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Release is one Kubernetes release whose own code the cluster specs'
// expectations were read from (k8s.io/kubernetes and its staging modules at
// that tag). A released API server defines that release's behaviour: a spec
// that depends on the release picks its expectation, and cites its source,
// by the server it talks to (its /version), never by the release the suite
// happened to be written against.
type Release struct {
	// Tag is the release whose code was read: k8s.io/kubernetes@Tag and the
	// staging modules at v0.MINOR.PATCH.
	Tag string
	// Notes are what differs from the release before in the code the specs
	// cite, and why the specs' expectations do or do not change with it.
	Notes []string
}

// releases are the releases read, by minor version: every release of
// kind/nodeimage/versions.yaml's apiServers (a unit test keeps them in step).
// The facts the specs use, each identical in all five unless noted:
//   - pkg/apis/core/validation/validation.go: validateEphemeralContainers,
//     allowedEphemeralContainerFields (ResizePolicy and RestartPolicy are not
//     in it, so validateFieldAllowList forbids them), "cannot be set on
//     create" in ValidatePodCreate, "ephemeral containers not allowed in pod
//     template" in ValidatePodTemplateSpec;
//   - pkg/registry/core/pod/strategy.go: podEphemeralContainersStrategy's
//     PrepareForUpdate calls updatePodGeneration, which bumps
//     metadata.generation on every spec change whatever
//     PodObservedGenerationTracking says (absent in v1.32.5: it arrived in 1.33);
//   - plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: editRules
//     and the admin/edit aggregation grant no pods/ephemeralcontainers;
//   - k8s.io/pod-security-admission admission/admission.go (byte-identical
//     from v0.33.13 to v0.37.1): the ephemeralcontainers subresource is
//     evaluated, an added ephemeral container is a significant update, the
//     whole pod is checked;
//   - pkg/kubelet/kubelet.go and pkg/kubelet/status/status_manager.go:
//     initialCrashLoopBackOff 10s, genericPlegRelistPeriod 1s, syncPeriod 10s.
var releases = map[uint]Release{
	33: {Tag: "v1.33.13", Notes: []string{
		"pkg/features/kube_features.go: InPlacePodVerticalScaling beta (on by default, can be turned off), SidecarContainers GA and locked on, PodObservedGenerationTracking alpha (off)",
		"pkg/registry/core/pod/strategy.go: metadata.generation set on create and bumped on spec updates, the subresource's included, without a feature gate (new in 1.33)",
	}},
	34: {Tag: "v1.34.10", Notes: []string{
		"pkg/features/kube_features.go: PodObservedGenerationTracking beta (on), ContainerRestartRules alpha (off); InPlacePodVerticalScaling still beta",
		"pkg/api/pod/util.go: with ContainerRestartRules off (the default in 1.34, possible to 1.37), dropContainerRestartRules clears restartPolicy on ephemeral containers, so the server accepts it without persisting it instead of rejecting it (observed on v1.34.10)",
		"pod-security-admission policy/check_hostProbesAndhostLifecycle.go added (baseline: probes and lifecycle hooks with a host): the specs' containers set neither",
	}},
	35: {Tag: "v1.35.8", Notes: []string{
		"pkg/features/kube_features.go: InPlacePodVerticalScaling and PodObservedGenerationTracking GA, locked on; ContainerRestartRules beta (on), for regular containers: RestartPolicy and RestartPolicyRules stay off allowedEphemeralContainerFields",
		"bootstrappolicy editRules: events moved to a rule of their own (core and events.k8s.io); still no pods/ephemeralcontainers",
		"pod-security-admission: runAsNonRoot and runAsUser gain 1.35 policies that relax for hostUsers: false, procMount splits into baseline and restricted checks: the specs' pods use neither",
	}},
	36: {Tag: "v1.36.4", Notes: []string{
		"bootstrappolicy editRules: workloads and podgroups under the GenericWorkload gate; still no pods/ephemeralcontainers",
		"pod-security-admission: no policy change (registry.go sorts with slices)",
	}},
	37: {Tag: "v1.37.1", Notes: []string{
		"pkg/features/kube_features.go: the SidecarContainers gate removed (always on)",
		"bootstrappolicy editRules: compositepodgroups and evictionrequests under their gates; still no pods/ephemeralcontainers",
		"pod-security-admission policy/check_sysctls.go: a 1.37 policy with two more safe sysctls; no check the specs violate changed",
	}},
}

// ReleaseFor is the release read for a server's version (its /version
// gitVersion), and whether the server runs exactly that release. A server
// of a minor never read gets the newest release read at or below it (the
// oldest above it, for a server older than every one), with exact false.
func ReleaseFor(serverVersion string) (Release, bool) {
	v, err := version.ParseGeneric(serverVersion)
	minors := make([]uint, 0, len(releases))
	for m := range releases {
		minors = append(minors, m)
	}
	sort.Slice(minors, func(i, j int) bool { return minors[i] < minors[j] })
	if err != nil {
		return releases[minors[len(minors)-1]], false
	}
	pick := minors[0]
	for _, m := range minors {
		if m <= v.Minor() {
			pick = m
		}
	}
	r := releases[pick]
	return r, strings.TrimPrefix(r.Tag, "v") == fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch())
}

// KnownReleaseTags lists the tags of every release read, oldest first.
func KnownReleaseTags() []string {
	var out []string
	for _, r := range releases {
		out = append(out, r.Tag)
	}
	sort.Slice(out, func(i, j int) bool {
		return version.MustParseGeneric(out[i]).LessThan(version.MustParseGeneric(out[j]))
	})
	return out
}

// Cite names a file of k8s.io/kubernetes (module "") or of one of its staging
// modules ("k8s.io/pod-security-admission") as read for the server's
// release: "k8s.io/kubernetes@v1.35.8 pkg/...", with a note when the server
// runs another release than the one read.
func Cite(serverVersion, module, path string) string {
	r, exact := ReleaseFor(serverVersion)
	tag := r.Tag
	if module == "" {
		module = "k8s.io/kubernetes"
	} else {
		tag = "v0." + strings.SplitN(strings.TrimPrefix(r.Tag, "v1."), "-", 2)[0]
	}
	s := module + "@" + tag + " " + path
	if !exact {
		s += fmt.Sprintf(" (read at %s; the server runs %s, whose code was not read)", r.Tag, serverVersion)
	}
	return s
}
