package framework

import (
	"strings"
	"testing"

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
