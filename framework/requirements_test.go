package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework/capability"
	"github.com/onsi/ginkgo/v2/types"
)

func TestRequirementIDs(t *testing.T) {
	got := RequirementIDs("a spec [CRI-4] [SKEW-3] and [STORY-OPS], not [FOO-1] or CRI-2")
	if strings.Join(got, ",") != "CRI-4,SKEW-3,STORY-OPS" {
		t.Errorf("RequirementIDs = %v", got)
	}
}

func TestCheckSpecRequirements(t *testing.T) {
	spec := func(text string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text}
	}
	bench := spec("measures latency")
	bench.LeafNodeLabels = []string{LabelBenchmark}
	ok := types.Report{SpecReports: types.SpecReports{spec("targets [CRI-2] [STORY-OPS]"), bench, {LeafNodeType: types.NodeTypeBeforeSuite}}}
	if err := CheckSpecRequirements(ok); err != nil {
		t.Errorf("valid specs: %v", err)
	}
	bad := types.Report{SpecReports: types.SpecReports{spec("names nothing"), spec("typo [CRI-99]")}}
	err := CheckSpecRequirements(bad)
	if err == nil || !strings.Contains(err.Error(), `"names nothing" names no requirement ID`) || !strings.Contains(err.Error(), "unknown requirement CRI-99") {
		t.Errorf("want both problems, got %v", err)
	}
}

func TestRequirementsAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Requirements() {
		if seen[r.ID] || RequirementIDs("["+r.ID+"]") == nil || r.Summary == "" {
			t.Errorf("requirement %q is duplicated, malformed or has no summary", r.ID)
		}
		seen[r.ID] = true
	}
}

// The table of which suite names which requirement is the suites' own
// sources read back: a spec naming a requirement in a suite the table does
// not list, or a table entry no spec of that suite names, fails here.
func TestRequirementLayers(t *testing.T) {
	named := map[string]map[capability.Layer]bool{}
	for _, l := range []capability.Layer{capability.LayerCRI, capability.LayerCluster} {
		files, err := filepath.Glob(filepath.Join("..", "suites", string(l), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("the %s suite's sources: %v", l, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range RequirementIDs(string(src)) {
				if named[id] == nil {
					named[id] = map[capability.Layer]bool{}
				}
				named[id][l] = true
			}
		}
	}
	for _, r := range Requirements() {
		want := named[r.ID]
		got := map[capability.Layer]bool{}
		for _, l := range RequirementLayers(r.ID) {
			got[l] = true
		}
		if len(got) != len(want) {
			t.Errorf("%s: RequirementLayers says %v, the suites' specs name it in %v", r.ID, RequirementLayers(r.ID), want)
			continue
		}
		for l := range want {
			if !got[l] {
				t.Errorf("%s: RequirementLayers says %v, the suites' specs name it in %v", r.ID, RequirementLayers(r.ID), want)
			}
		}
	}
}
