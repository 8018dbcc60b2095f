package matrix

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is the matrix's configuration file (hack/matrix.yaml): its cells,
// in the order the page shows them.
type Config struct {
	Cells []CellConfig `json:"cells"`
}

// CellConfig is one cell: a suite run against one runtime or cluster, by a
// shell command (a make target, so that CI runs the same), whose reports go
// to the directory the runner gives it in $REPORT_DIR.
type CellConfig struct {
	// Name is the cell's column and folder name: lower case letters,
	// digits, '.', '-'.
	Name string `json:"name"`
	// Layer is the suite the cell runs: cri or cluster.
	Layer string `json:"layer"`
	// Describe says what the cell is for a column header before it ran
	// ("containerd 2.x, embedded"); the reports' own runtime and versions
	// replace it once it ran.
	Describe string `json:"describe,omitempty"`
	// Command runs the cell, with bash in the repository's root, with
	// REPORT_DIR (the cell's folder) and CELL (its name) in its
	// environment. Its exit code is read together with the reports (make
	// exits 2 for any failed recipe): see CellExit.
	Command string `json:"command,omitempty"`
	// Prepare runs before any cell's command, one cell after another:
	// what must not run twice at once (apt-get, building a runtime or a
	// node image into the shared caches). A failed prepare fails its cell.
	Prepare string `json:"prepare,omitempty"`
	// Locks name what the cell holds while it runs: cells sharing a lock
	// never run at the same time (two kind clusters on a small machine, say).
	Locks []string `json:"locks,omitempty"`
	// Timeout ends the cell's command (Ctrl-C to its processes, then a
	// kill after a grace period), e.g. "45m". Default 2h.
	Timeout string `json:"timeout,omitempty"`
	// Env adds variables to the command's environment.
	Env map[string]string `json:"env,omitempty"`
	// Skip, when set, says why the cell is not run (not built yet, not on
	// this machine): the page shows it as not run, with this reason.
	Skip string `json:"skip,omitempty"`
	// Host, when set (windows), is the only kind of host the cell runs on:
	// elsewhere the runner does not run it and a CI job matrix of Linux
	// runners leaves it out (a job of its own runs it, the nightly
	// workflow's windows job); its folder, when that job left one, is read
	// like any cell's.
	Host string `json:"host,omitempty"`
}

// HostWindows is the Host of a cell that runs on a Windows host only.
const HostWindows = "windows"

// RunsHere says whether the cell runs on a host of this OS.
func (c CellConfig) RunsHere(goos string) bool { return c.Host == "" || c.Host == goos }

// DefaultTimeout is a cell's timeout when its configuration gives none.
const DefaultTimeout = 2 * time.Hour

// Layers a cell can run.
const (
	LayerCRI     = "cri"
	LayerCluster = "cluster"
)

var cellName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)

// LoadConfig reads and checks a matrix configuration; unknown fields are
// errors (a misspelt "locks" must not silently run cells side by side).
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks the cells: unique valid names, a known layer, a command
// or a reason not to run, a valid timeout.
func (c Config) Validate() error {
	if len(c.Cells) == 0 {
		return fmt.Errorf("no cells")
	}
	seen := map[string]bool{}
	var problems []string
	for i, cell := range c.Cells {
		what := fmt.Sprintf("cell %d (%s)", i+1, cell.Name)
		switch {
		case !cellName.MatchString(cell.Name):
			problems = append(problems, fmt.Sprintf("%s: name must match %s", what, cellName))
		case seen[cell.Name]:
			problems = append(problems, fmt.Sprintf("%s: the name is used twice", what))
		}
		seen[cell.Name] = true
		if cell.Layer != LayerCRI && cell.Layer != LayerCluster {
			problems = append(problems, fmt.Sprintf("%s: layer %q, want %s or %s", what, cell.Layer, LayerCRI, LayerCluster))
		}
		if cell.Host != "" && cell.Host != HostWindows {
			problems = append(problems, fmt.Sprintf("%s: host %q, want %s or none", what, cell.Host, HostWindows))
		}
		if cell.Command == "" && cell.Skip == "" {
			problems = append(problems, fmt.Sprintf("%s: neither a command nor a reason to skip it", what))
		}
		if cell.Timeout != "" {
			if d, err := time.ParseDuration(cell.Timeout); err != nil || d <= 0 {
				problems = append(problems, fmt.Sprintf("%s: timeout %q is not a positive duration (e.g. 45m)", what, cell.Timeout))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// TimeoutOrDefault is the cell's timeout.
func (c CellConfig) TimeoutOrDefault() time.Duration {
	if d, err := time.ParseDuration(c.Timeout); err == nil && d > 0 {
		return d
	}
	return DefaultTimeout
}

// Select picks cells by name (all for an empty list); an unknown name is
// an error.
func (c Config) Select(names []string) ([]CellConfig, error) {
	if len(names) == 0 {
		return c.Cells, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []CellConfig
	for _, cell := range c.Cells {
		if want[cell.Name] {
			out = append(out, cell)
			delete(want, cell.Name)
		}
	}
	if len(want) > 0 {
		var unknown, known []string
		for n := range want {
			unknown = append(unknown, n)
		}
		sort.Strings(unknown)
		for _, cell := range c.Cells {
			known = append(known, cell.Name)
		}
		return nil, fmt.Errorf("unknown cell(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	return out, nil
}
