package matrix

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The GitHub Actions example (.github/workflows/matrix.yaml) gives some
// cells a stock kind node image. An image of another release would make a
// column say one release and test another, and an image not pinned by
// digest may be one kind does not support: check each against
// hack/matrix.yaml and kind/nodeimage/versions.yaml.
func TestWorkflowNodeImages(t *testing.T) {
	raw, err := os.ReadFile("../../../.github/workflows/matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `json:"name"`
				Run  string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	cfg, err := LoadConfig("../../../hack/matrix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]CellConfig{}
	for _, c := range cfg.Cells {
		cells[c.Name] = c
	}
	var versions struct {
		Newest string `json:"newest"`
	}
	rawVersions, err := os.ReadFile("../../../kind/nodeimage/versions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(rawVersions, &versions); err != nil || versions.Newest == "" {
		t.Fatalf("kind/nodeimage/versions.yaml: newest: %q, %v", versions.Newest, err)
	}

	var script string
	runsMatrix, merges := false, false
	for name, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "KIND_NODE_IMAGE=") {
				script = s.Run
			}
			if name == "cell" && strings.Contains(s.Run, "make matrix CELLS=") {
				runsMatrix = true
			}
			if name == "merge" && strings.Contains(s.Run, "make matrix MERGE_ONLY=1") {
				merges = true
			}
		}
	}
	if !runsMatrix || !merges {
		t.Errorf("the workflow must run each cell with make matrix CELLS=<cell> (%v) and merge with make matrix MERGE_ONLY=1 (%v)", runsMatrix, merges)
	}
	if script == "" {
		t.Fatal("no step sets KIND_NODE_IMAGE")
	}
	entry := regexp.MustCompile(`(?m)^\s*([^\s)]+)\)\s*image=(\S*)\s*;;`)
	pinned := regexp.MustCompile(`^kindest/node:(v\d+\.\d+\.\d+)@sha256:[0-9a-f]{64}$`)
	found := 0
	for _, m := range entry.FindAllStringSubmatch(script, -1) {
		cell, image := m[1], m[2]
		if cell == "*" {
			if image != "" {
				t.Errorf("cells without an entry must build their node image, not use %s", image)
			}
			continue
		}
		found++
		c, ok := cells[cell]
		if !ok {
			t.Errorf("workflow: %s is not a cell of hack/matrix.yaml", cell)
			continue
		}
		if image == "" {
			continue
		}
		pm := pinned.FindStringSubmatch(image)
		if pm == nil {
			t.Errorf("%s: %s is not a kindest/node image pinned by digest", cell, image)
			continue
		}
		tag := pm[1]
		switch {
		case strings.HasPrefix(c.Command, "make api-release K8S="):
			if want := strings.TrimPrefix(c.Command, "make api-release K8S="); tag != want {
				t.Errorf("%s runs release %s, but its image is %s", cell, want, tag)
			}
		case strings.HasPrefix(c.Command, "make conformance-cluster"):
			if minor(tag) != minor(versions.Newest) {
				t.Errorf("%s is the cluster suite at the newest release (%s), but its image is %s", cell, versions.Newest, tag)
			}
		default:
			t.Errorf("%s: its command (%s) does not honour KIND_NODE_IMAGE", cell, c.Command)
		}
	}
	if found == 0 {
		t.Error("no cell entries found in the KIND_NODE_IMAGE step")
	}
}

func minor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
