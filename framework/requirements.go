package framework

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Requirement is one requirement the suites verify (docs: REQUIREMENTS.md,
// digested from the KEP and the shared PID namespace design).
type Requirement struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

// requirements lists every requirement ID a spec may name, in the order of
// the requirements document, each with a one-line summary for reports.
var requirements = []Requirement{
	{"API-1", "added only through pods/ephemeralcontainers; a plain pod update neither adds, changes nor removes"},
	{"API-2", "forbidden on pod create and in pod templates"},
	{"API-3", "existing ephemeral containers are neither changed nor removed; only appends"},
	{"API-4", "disallowed fields (ports, probes, lifecycle, resources, resizePolicy, restartPolicy, subPath[Expr]) are rejected"},
	{"API-5", "names are unique across containers, init and ephemeral containers"},
	{"API-6", "targetContainerName names an existing container"},
	{"API-7", "a stale resourceVersion gets a Conflict"},
	{"API-8", "the pre-1.22 EphemeralContainers body is not accepted"},
	{"API-9", "static (mirror) pods take no ephemeral containers"},
	{"API-10", "attach, exec and logs work by name"},
	{"API-11", "adding one bumps the pod's generation"},
	{"LIFE-1", "status reports waiting, running and terminated"},
	{"LIFE-2", "never restarted, whatever the restartPolicy"},
	{"LIFE-3", "pod phase, readiness and conditions unaffected"},
	{"LIFE-4", "output before attach is in the logs"},
	{"LIFE-5", "no side effects on the target"},
	{"LIFE-6", "the debug image is pulled at debug time"},
	{"SEC-1", "the subresource is an RBAC permission of its own"},
	{"SEC-2", "admission (Pod Security) applies"},
	{"SEC-3", "no privileges beyond the spec; SYS_PTRACE asked for explicitly; kernel ptrace rules"},
	{"SEC-4", "subresource calls are in the audit log"},
	{"SEC-5", "an added ephemeral container stays in the spec"},
	{"CRI-1", "PID modes CONTAINER, POD and NODE"},
	{"CRI-2", "TARGET with target_id joins the target's PID namespace"},
	{"CRI-3", "invalid target_id values are rejected"},
	{"CRI-4", "unimplemented or unknown namespace modes get an error"},
	{"CRI-5", "network and IPC POD/NODE; one sandbox shares IP, localhost and hostname"},
	{"CRI-6", "another container's files through /proc/<pid>/root"},
	{"CRI-7", "the kubelet's mapping of shareProcessNamespace, hostPID and targetContainerName"},
	{"CRI-8", "exec, attach and logs work for a debug container"},
	{"WIN-1", "Windows shares only the network between containers"},
	{"WIN-2", "ephemeral containers run on Windows; a target gives no process visibility"},
	{"WIN-3", "Windows debug images match the node's OS build"},
	{"WIN-4", "HostProcess pods: all containers HostProcess, hostNetwork true"},
	{"WIN-5", "Windows CRI endpoints are named pipes"},
	{"SKEW-1", "kubelets up to three minors older run ephemeral containers"},
	{"SKEW-2", "old request shapes get a clear error"},
	{"SKEW-3", "unknown CRI enum values get an error, not a fallback"},
	{"STORY-OPS", "debugging a distroless target: files, tools, network"},
	{"STORY-DEBUG", "seeing and attaching to the target's processes (SYS_PTRACE)"},
	{"STORY-AUTO", "non-interactive audits across many pods, results from logs"},
	{"STORY-SUPPORT", "viewer rights plus the subresource only"},
	{"STORY-WIN", "Windows network-only debugging"},
}

// requirementLayers names the suites (by their layer) whose specs name
// each requirement; TestRequirementLayers keeps it true to the suites'
// sources. A run of one suite reports the other suite's requirements as
// that suite's, not as uncovered.
var requirementLayers = map[string][]capability.Layer{}

func init() {
	for _, l := range []struct {
		layers []capability.Layer
		ids    string
	}{
		{[]capability.Layer{capability.LayerCRI}, "CRI-3 CRI-4 SKEW-3 WIN-1 WIN-2 WIN-3 WIN-5 STORY-WIN"},
		{[]capability.Layer{capability.LayerCluster}, "API-1 API-2 API-3 API-4 API-5 API-6 API-7 API-8 API-9 API-10 API-11 CRI-7 LIFE-1 LIFE-2 LIFE-3 SEC-1 SEC-2 SEC-4 SEC-5 SKEW-1 SKEW-2 STORY-AUTO STORY-SUPPORT WIN-4"},
		{[]capability.Layer{capability.LayerCRI, capability.LayerCluster}, "CRI-1 CRI-2 CRI-5 CRI-6 CRI-8 LIFE-4 LIFE-5 LIFE-6 SEC-3 STORY-DEBUG STORY-OPS"},
	} {
		for _, id := range strings.Fields(l.ids) {
			requirementLayers[id] = l.layers
		}
	}
}

// RequirementLayers lists the layers whose suites have specs naming the
// requirement (none for a requirement no suite covers yet).
func RequirementLayers(id string) []capability.Layer { return requirementLayers[id] }

var requirementRef = regexp.MustCompile(`\[((?:API|LIFE|SEC|CRI|WIN|SKEW|STORY)-[A-Z0-9]+)\]`)

// Requirements lists every known requirement, in document order.
func Requirements() []Requirement { return append([]Requirement(nil), requirements...) }

// RequirementIDs extracts the requirement IDs a spec names in its text
// ("... [CRI-2] [CRI-7]").
func RequirementIDs(text string) []string {
	var out []string
	for _, m := range requirementRef.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// CheckSpecRequirements checks that every spec names at least one
// requirement ID and only IDs that exist, so a report's coverage cannot be
// silently wrong. Benchmarks measure rather than verify and may name none.
func CheckSpecRequirements(r types.Report) error {
	known := map[string]bool{}
	for _, q := range requirements {
		known[q.ID] = true
	}
	var problems []string
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		ids := RequirementIDs(s.FullText())
		if len(ids) == 0 && !slices.Contains(s.Labels(), LabelBenchmark) {
			problems = append(problems, fmt.Sprintf("spec %q names no requirement ID", s.FullText()))
		}
		for _, id := range ids {
			if !known[id] {
				problems = append(problems, fmt.Sprintf("spec %q names unknown requirement %s", s.FullText(), id))
			}
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return nil
}

// NodeOSEntry is the report entry by which a spec names the node OS it
// exercised when that is not the run's node's. The coverage report then
// judges the spec's OS-specific requirements by it: the cluster suite's
// HostProcess specs bind Windows pods to a Windows Node object of their own
// on any cluster, so the API server's WIN-4 rules are exercised on a Linux
// kind cluster too.
const NodeOSEntry = "ectest.node-os"

// RecordNodeOS says, in the running spec's report, which node OS it
// exercised and why (see NodeOSEntry).
func RecordNodeOS(os, why string) {
	ginkgo.AddReportEntry(NodeOSEntry, os, ginkgo.ReportEntryVisibilityNever)
	ginkgo.AddReportEntry("node OS "+os, why)
}

// SpecNodeOS is the node OS a spec's report names (NodeOSEntry), or "".
func SpecNodeOS(s types.SpecReport) string {
	for _, e := range s.ReportEntries {
		if e.Name == NodeOSEntry {
			return e.Value.String()
		}
	}
	return ""
}
