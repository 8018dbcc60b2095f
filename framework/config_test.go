package framework

import (
	"flag"
	"strings"
	"testing"
)

func TestValidateWithoutCatalogs(t *testing.T) {
	for args, want := range map[string]string{
		"-image-endpoint=unix:///x.sock":  "-image-endpoint needs -runtime-endpoint",
		"-registry-addr=nohostport":       "-registry-addr",
		"-report-dir=":                    "-report-dir is empty",
		"-kubeconfig=/nonexistent/kc":     "-kubeconfig",
		"-run-id=CI_Job.7":                "-run-id",
		"-run-id=-x":                      "-run-id",
		"-run-id=a-run-id-longer-than-16": "-run-id",
	} {
		var c Config
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		suite := SuiteCRI
		if strings.HasPrefix(args, "-kubeconfig") {
			suite = SuiteCluster
		}
		RegisterFlags(fs, &c, Choices{}, suite)
		if err := fs.Parse([]string{args}); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(oneLine(err), want) || strings.Contains(oneLine(err), "\n") {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

func TestLabels(t *testing.T) {
	if err := CheckLabels([][]string{{"cri", "pid-target"}, {"benchmark"}}); err != nil {
		t.Error(err)
	}
	if err := CheckLabels([][]string{{"cri", "typo-label"}}); err == nil || !strings.Contains(err.Error(), "typo-label") {
		t.Errorf("unknown label: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Label with an unregistered name did not panic")
		}
	}()
	Label("not-registered")
}

func TestCheckLabelFilter(t *testing.T) {
	for _, ok := range []string{"", "pid-target", "cri && !benchmark", "(pid || network) && !linux-only", "/pid-.*/", "pid, ipc", "!/^skew$/ && cri"} {
		if err := CheckLabelFilter(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	err := CheckLabelFilter("cri && pid-targt")
	if err == nil || !strings.Contains(err.Error(), `"pid-targt" (nearest: pid-target`) {
		t.Errorf("misspelt label: %v", err)
	}
}

// critest's -parallel is read as -procs: Ginkgo refuses a set flag named
// "parallel" (go test's).
func TestRenameParallel(t *testing.T) {
	got := strings.Join(renameParallel([]string{"-parallel=4", "--parallel", "2", "-parallelx", "-ginkgo.v"}), " ")
	if want := "-procs=4 -procs 2 -parallelx -ginkgo.v"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Version gates are label sets of a registered key; other keys are not.
func TestVersionGateLabels(t *testing.T) {
	if err := CheckLabels([][]string{{MinimumKubeletVersion("1.33"), LabelCluster}}); err != nil {
		t.Error(err)
	}
	if err := CheckLabels([][]string{{"MinimumKubletVersion:1.33"}}); err == nil {
		t.Error("a misspelt label set key was accepted")
	}
	if err := CheckLabels([][]string{{"MinimumKubeletVersion:"}}); err == nil {
		t.Error("a label set key without a value was accepted")
	}
}

// A run ID given is the run's; none, a new one each time.
func TestRunIDOrNew(t *testing.T) {
	c := Config{RunID: "ci-4711"}
	if got := c.RunIDOrNew(); got != "ci-4711" || c.Validate() != nil && strings.Contains(c.Validate().Error(), "-run-id") {
		t.Errorf("RunIDOrNew = %q, want ci-4711, and accepted", got)
	}
	c.RunID = ""
	if a, b := c.RunIDOrNew(), c.RunIDOrNew(); a == b || !runIDPattern.MatchString(a) {
		t.Errorf("two new run IDs %q and %q: want different, each a valid -run-id", a, b)
	}
}
