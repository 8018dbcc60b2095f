package runtimes

import (
	"testing"

	"github.com/ectest/ectest/runtimes/catalog"
)

// Each catalog entry names the profile -profile=auto picks for the
// sandboxes of its embedded handler (the default one for a node runtime).
func TestCatalogProfiles(t *testing.T) {
	for _, r := range catalog.Runtimes {
		handler := ""
		if r.Embedded != nil {
			handler = r.Embedded.Handler
		}
		p, err := Detect(string(r.Implementation), "linux", handler)
		if err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		if p.Name != r.Profile {
			t.Errorf("%s: the catalog names the profile %s, -profile=auto picks %s", r.Name, r.Profile, p.Name)
		}
	}
}
