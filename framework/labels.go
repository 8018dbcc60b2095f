package framework

import (
	"fmt"
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
	"cri":          "specs that drive a CRI runtime directly",
	"cluster":      "specs that need a Kubernetes cluster",
	"pid":          "PID namespace modes and targeting",
	"network":      "network namespace sharing",
	"ipc":          "IPC namespace sharing",
	"filesystem":   "the target's filesystem through /proc/<pid>/root",
	"security":     "capabilities, ptrace rules, RBAC, admission",
	"lifecycle":    "status, restarts, side effects, image pulls",
	"streaming":    "exec, attach and logs",
	"validation":   "invalid requests the runtime or server must reject",
	"skew":         "version skew: old shapes, unknown enum values",
	"story":        "user stories replayed end to end",
	"linux-only":   "specs that cannot apply to Windows nodes",
	"network-only": "specs that hold on Windows too (network-only debugging)",
	"windows":      "Windows-specific specs",
	"benchmark":    "measurements with gmeasure; not run unless selected",
	"api-release":  "the API server's specs (API, RBAC, admission, audit, kubectl debug, SKEW-2's client side) that run against a single-node cluster of each release of versions.yaml's apiServers (make api-releases)",
}

// The label names, for specs to use.
const (
	LabelCRI         = "cri"
	LabelCluster     = "cluster"
	LabelPID         = "pid"
	LabelNetwork     = "network"
	LabelIPC         = "ipc"
	LabelFilesystem  = "filesystem"
	LabelSecurity    = "security"
	LabelLifecycle   = "lifecycle"
	LabelStreaming   = "streaming"
	LabelValidation  = "validation"
	LabelSkew        = "skew"
	LabelStory       = "story"
	LabelLinuxOnly   = "linux-only"
	LabelNetworkOnly = "network-only"
	LabelWindows     = "windows"
	LabelBenchmark   = "benchmark"
	LabelAPIRelease  = "api-release"
)

func init() {
	// Every capability name is a label too: -ginkgo.label-filter=pid-target.
	for _, d := range capability.All() {
		labels[string(d.Name)] = "capability: " + d.Summary
	}
}

// Label returns Ginkgo labels, panicking at tree construction on an unknown
// one (a suite bug, caught by every run and by `make test`).
func Label(names ...string) ginkgo.Labels {
	for _, n := range names {
		if _, ok := labels[n]; !ok {
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
			if _, ok := labels[l]; !ok {
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
