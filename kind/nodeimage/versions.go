package nodeimage

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/yaml"
)

//go:embed versions.yaml
var versionsYAML []byte

// Releases is versions.yaml: the Kubernetes releases the suite builds.
type Releases struct {
	// Newest is N: every cluster's control plane by default.
	Newest string `json:"newest"`
	// SkewKubelets are the skew cluster's worker kubelets, N..N-3.
	SkewKubelets []string `json:"skewKubelets"`
	// APIServers are the releases the API-layer specs run against.
	APIServers []string `json:"apiServers"`
}

// KnownReleases is the release set of versions.yaml, every version parsed.
func KnownReleases() (Releases, error) {
	var r Releases
	if err := yaml.UnmarshalStrict(versionsYAML, &r); err != nil {
		return r, fmt.Errorf("versions.yaml: %w", err)
	}
	all := append([]string{r.Newest}, append(r.SkewKubelets, r.APIServers...)...)
	for _, s := range all {
		if _, err := ParseVersion(s); err != nil {
			return r, fmt.Errorf("versions.yaml: %w", err)
		}
	}
	return r, nil
}

// DefaultKubernetesVersion is N, the newest release of versions.yaml.
var DefaultKubernetesVersion = mustReleases().Newest

func mustReleases() Releases {
	r, err := KnownReleases()
	if err != nil {
		panic(err) // the embedded file is checked by TestKnownReleases
	}
	return r
}
