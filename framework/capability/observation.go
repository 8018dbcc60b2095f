package capability

import "strings"

// Layer is where a capability was observed.
type Layer string

const (
	// LayerCRI: straight through the CRI.
	LayerCRI Layer = "cri"
	// LayerCluster: through the Kubernetes API and a real kubelet.
	LayerCluster Layer = "cluster"
)

// kubeletLayerPrefix starts the layer of one kubelet release of a
// version-skew cluster.
const kubeletLayerPrefix = "kubelet-"

// KubeletLayer is the layer of the cluster specs run on pods placed on a
// kubelet of the given release ("v1.35.8") in a version-skew cluster
// (SKEW-1): each release has its own column, so a verdict on one kubelet
// is never mixed into another's or the cluster layer's.
func KubeletLayer(version string) Layer { return Layer(kubeletLayerPrefix + version) }

// Kubelet is the kubelet release of a KubeletLayer ("", false for others).
func (l Layer) Kubelet() (string, bool) {
	v, ok := strings.CutPrefix(string(l), kubeletLayerPrefix)
	return v, ok && v != ""
}

// Observation is one spec's record of what the runtime did for a capability.
// Specs attach it to their report; the matrix is computed from all of them.
type Observation struct {
	Capability Name    `json:"capability"`
	Layer      Layer   `json:"layer"`
	Outcome    Outcome `json:"outcome"`
	// Observed is a short phrase for the matrix: "target namespace",
	// "refused: InvalidArgument", "sandbox namespace".
	Observed string `json:"observed"`
	// Evidence is what proves it: ps output, the gRPC status, file content.
	Evidence     string   `json:"evidence,omitempty"`
	Requirements []string `json:"requirements,omitempty"`
	// Case tells apart several observations of one capability in one spec
	// (for example each invalid target_id).
	Case string `json:"case,omitempty"`
	// EnvironmentError is set when the observation would have been a
	// nonconformance but the suite's own environment was found broken at
	// that moment (registry down, API server unreachable): it is then no
	// verdict ("error"), and the run fails as a run.
	EnvironmentError string `json:"environmentError,omitempty"`
	// BlockedBy is, for a Blocked outcome, the capability that did not
	// work ("" for the capability's own dependency, DependsOn).
	BlockedBy Name `json:"blockedBy,omitempty"`
	// Declared and Verdict are filled when the observation is judged.
	Declared Support `json:"declared,omitempty"`
	Verdict  Verdict `json:"verdict,omitempty"`
	Reason   string  `json:"reason,omitempty"`
}

// ReportEntryName is the Ginkgo report entry under which observations travel
// from specs (on any parallel process) to the suite's report.
const ReportEntryName = "ectest.observation"

// Blocker is what blocked a Blocked observation: BlockedBy, or else the
// capability's own dependency (DependsOn).
func (o Observation) Blocker() Name {
	if o.BlockedBy != "" {
		return o.BlockedBy
	}
	return DependsOn(o.Capability)
}
