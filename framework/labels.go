package framework

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Labels are an API: CI matrices and focused runs select specs by them. Every
// label a spec uses must be registered here; the suites check it before any
// spec runs (CheckLabels).
var labels = map[string]string{
	"cri":            "specs that drive a CRI runtime directly",
	"cluster":        "specs that need a Kubernetes cluster",
	"pid":            "PID namespace modes and targeting",
	"network":        "network namespace sharing",
	"ipc":            "IPC namespace sharing",
	"filesystem":     "the target's filesystem through /proc/<pid>/root",
	"security":       "capabilities, ptrace rules, RBAC, admission",
	"lifecycle":      "status, restarts, side effects, image pulls",
	"streaming":      "exec, attach and logs",
	"validation":     "invalid requests the runtime or server must reject",
	"skew":           "version skew: old shapes, unknown enum values",
	"story":          "user stories replayed end to end",
	"linux-only":     "specs that cannot apply to Windows nodes",
	"network-only":   "specs that hold on Windows too (network-only debugging)",
	"windows":        "Windows-specific specs",
	"benchmark":      "measurements with gmeasure; not run unless selected",
	"debug-profiles": "kubectl debug --profile: each profile and style under each Pod Security level, --custom, the default profile per kubectl release (make kubectl-profiles)",
	"test-double":    "specs that check the suite itself through a TEST DOUBLE of an older server (fixtures/apiproxy): a failure is the suite's own, an error of the run, never the server's nonconformance",
	"api-release":    "the API server's specs (API, RBAC, admission, audit, kubectl debug, SKEW-2's client side) that run against a single-node cluster of each release of versions.yaml's apiServers (make api-releases)",
}

// Version gates: Ginkgo label sets (key:value), in the style of upstream's
// [MinimumKubeletVersion:X.Y]. A spec so labelled reports "not applicable"
// (a skip naming the release) on an older kubelet, never a failure; select
// or leave out such specs with -ginkgo.label-filter, e.g.
// 'MinimumKubeletVersion: isSubsetOf {1.33, 1.34}' or '!MinimumKubeletVersion: isEmpty'.
var labelSets = map[string]string{
	"MinimumKubeletVersion": "specs of a feature that needs at least this kubelet release (its value)",
}

// SelectedOnly are the labels of specs a run without a label filter leaves
// out: measurements (make benchmark), and the kubectl debug profile
// matrix's cells beyond the kubectl in use at the privileged level (some
// fifty kubectl runs per kubectl release: make kubectl-profiles).
var SelectedOnly = []string{LabelBenchmark, LabelDebugProfiles}

// DefaultLabelFilter is the filter of a run given none: everything but
// SelectedOnly. Such a run is a full run (report.FullRun).
var DefaultLabelFilter = "!" + strings.Join(SelectedOnly, " && !")

// MinimumKubeletVersion is the version-gate label of a spec that needs a
// kubelet of release v ("1.33") or newer.
func MinimumKubeletVersion(v string) string { return "MinimumKubeletVersion:" + v }

// registered says whether l is a registered label or a value of a
// registered label set.
func registered(l string) bool {
	if _, ok := labels[l]; ok {
		return true
	}
	key, value, ok := strings.Cut(l, ":")
	_, set := labelSets[strings.TrimSpace(key)]
	return ok && set && strings.TrimSpace(value) != ""
}

// The label names, for specs to use.
const (
	LabelCRI           = "cri"
	LabelCluster       = "cluster"
	LabelPID           = "pid"
	LabelNetwork       = "network"
	LabelIPC           = "ipc"
	LabelFilesystem    = "filesystem"
	LabelSecurity      = "security"
	LabelLifecycle     = "lifecycle"
	LabelStreaming     = "streaming"
	LabelValidation    = "validation"
	LabelSkew          = "skew"
	LabelStory         = "story"
	LabelLinuxOnly     = "linux-only"
	LabelNetworkOnly   = "network-only"
	LabelWindows       = "windows"
	LabelBenchmark     = "benchmark"
	LabelAPIRelease    = "api-release"
	LabelDebugProfiles = "debug-profiles"
	LabelTestDouble    = "test-double"
)

func init() {
	// Every capability name is a label too: -ginkgo.label-filter=pid-target.
	for _, d := range capability.All() {
		labels[string(d.Name)] = "capability: " + d.Summary
	}
}

// IsTestDouble says whether a spec with these labels checks the suite
// itself through a test double (LabelTestDouble): its failure is the
// suite's, never a verdict on the system under test.
func IsTestDouble(labels []string) bool { return slices.Contains(labels, LabelTestDouble) }

// Label returns Ginkgo labels, panicking at tree construction on an unknown
// one (a suite bug, caught by every run and by `make test`).
func Label(names ...string) ginkgo.Labels {
	for _, n := range names {
		if !registered(n) {
			panic(fmt.Sprintf("label %q is not registered in framework/labels.go", n))
		}
	}
	return ginkgo.Label(names...)
}

// CheckLabels returns an error naming every label used by the suite's specs
// that is not registered (specs may call ginkgo.Label directly by mistake).
func CheckLabels(used [][]string) error {
	unknown := map[string]bool{}
	for _, ls := range used {
		for _, l := range ls {
			if !registered(l) {
				unknown[l] = true
			}
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	var names []string
	for l := range unknown {
		names = append(names, l)
	}
	sort.Strings(names)
	return fmt.Errorf("unregistered labels (add them to framework/labels.go): %s", strings.Join(names, ", "))
}

// Labels lists the registered labels with their descriptions, sorted.
func Labels() [][2]string {
	var out [][2]string
	for k, v := range labels {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// CheckSpecLabels is CheckLabels over a suite's report, for ReportBeforeSuite.
func CheckSpecLabels(r types.Report) error {
	var used [][]string
	for _, s := range r.SpecReports {
		used = append(used, s.Labels())
	}
	return CheckLabels(used)
}

// CheckLabelFilter checks the names a label filter (Ginkgo's syntax) uses
// against the registry: a misspelt name would select nothing, and a run
// that selected nothing must not read as a verdict. Regular expressions
// (/.../) and label sets (key: values) are left to Ginkgo.
func CheckLabelFilter(filter string) error {
	var unknown []string
	for _, name := range labelFilterNames(filter) {
		if _, ok := labels[name]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q (nearest: %s)", name, strings.Join(nearestLabels(name, 3), ", ")))
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("label filter %q: unknown label %s; docs/running.md, \"Labels\", lists them", filter, strings.Join(unknown, ", unknown label "))
	}
	return nil
}

// labelFilterNames are the plain label names of a Ginkgo label filter.
func labelFilterNames(filter string) []string {
	var names []string
	inRegex := false
	for _, field := range strings.FieldsFunc(filter, func(r rune) bool {
		return strings.ContainsRune("&|!(), \t", r)
	}) {
		switch {
		case inRegex:
			inRegex = !strings.HasSuffix(field, "/")
		case strings.HasPrefix(field, "/"):
			inRegex = len(field) == 1 || !strings.HasSuffix(field, "/")
		case strings.Contains(field, ":"):
			return names // a label set: key: values to the end of the group; left to Ginkgo
		default:
			names = append(names, field)
		}
	}
	return names
}

// nearestLabels are the n registered labels closest to name by edit distance.
func nearestLabels(name string, n int) []string {
	type cand struct {
		label string
		d     int
	}
	var cs []cand
	for l := range labels {
		cs = append(cs, cand{l, editDistance(name, l)})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].label < cs[j].label
	})
	var out []string
	for i := 0; i < n && i < len(cs); i++ {
		out = append(out, cs[i].label)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
