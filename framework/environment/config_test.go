package environment

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ectest/ectest/framework"
)

// parse checks flags the way a suite's Main does: the core's own checks,
// then the catalogs'.
func parse(t *testing.T, args ...string) (*framework.Config, error) {
	t.Helper()
	return parseFor(t, framework.SuiteCRI, args...)
}

// parseCluster parses the cluster suite's flags.
func parseCluster(t *testing.T, args ...string) (*framework.Config, error) {
	t.Helper()
	return parseFor(t, framework.SuiteCluster, args...)
}

func parseFor(t *testing.T, suite framework.Suite, args ...string) (*framework.Config, error) {
	t.Helper()
	var c framework.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	RegisterFlags(fs, &c, suite)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &c, errors.Join(c.Validate(), CheckConfig(&c))
}

func TestDefaults(t *testing.T) {
	t.Setenv("ARTIFACTS", "")
	c, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.Profile != "auto" || c.ReportDir != "_artifacts" || c.RegistryAddr != "127.0.0.1:0" {
		t.Errorf("defaults: %+v", c)
	}
	t.Setenv("ARTIFACTS", "/tmp/prow-artifacts")
	if c, _ := parse(t); c.ReportDir != "/tmp/prow-artifacts" {
		t.Errorf("ARTIFACTS not honoured: %s", c.ReportDir)
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	images := filepath.Join(dir, "images.yaml")
	if err := os.WriteFile(images, []byte("linux:\n  debug: example.com/busybox:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := parse(t, "-profile=containerd-runc", "-images-file="+images)
	in, lerr := loadInputs(c)
	if err != nil || lerr != nil || in.profile.Name != "containerd-runc" || in.images.Linux["debug"] != "example.com/busybox:1" {
		t.Fatalf("valid config: %+v, %v %v", c, err, lerr)
	}
	for args, want := range map[string]string{
		"-image-endpoint=unix:///x.sock": "-image-endpoint needs -runtime-endpoint",
		"-profile=nope":                  `unknown profile "nope"`,
		"-images-file=/nonexistent":      "no such file",
		"-registry-addr=nohostport":      "-registry-addr",
		"-report-dir=":                   "-report-dir is empty",
		"-kubeconfig=/nonexistent/kc":    "-kubeconfig",
		"-kubernetes-version=v1.20.0":    "only v1.29 and later",
		"-kubernetes-version=latest":     "want vMAJOR.MINOR.PATCH",
		"-node-runtime=containerd-9":     `unknown node runtime "containerd-9"`,
		"-runtime-class=gvisor":          "offers RuntimeClasses: none (containerd-2-gvisor offers gvisor)",
		"-expect=/nonexistent":           "-expect: stat /nonexistent",
	} {
		suite := framework.SuiteCRI
		if strings.HasPrefix(args, "-k") || strings.HasPrefix(args, "-node") || strings.HasPrefix(args, "-runtime-class") {
			suite = framework.SuiteCluster
		}
		if _, err := parseFor(t, suite, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseCluster(t, "-kubeconfig="+kc, "-keep-cluster"); err == nil || !strings.Contains(err.Error(), "do not apply") {
		t.Errorf("-kubeconfig with -keep-cluster: %v", err)
	}
	if c, err := parseCluster(t, "-kubeconfig="+kc); err != nil || c.Kubeconfig != kc {
		t.Errorf("-kubeconfig: %v", err)
	}
	if _, err := parseCluster(t, "-kubeconfig="+kc, "-cluster-name=mine"); err == nil || !strings.Contains(err.Error(), "do not apply") {
		t.Errorf("-kubeconfig with -cluster-name: %v", err)
	}
	if _, err := parseCluster(t, "-kubeconfig="+kc, "-node-runtime=containerd-1.7"); err == nil || !strings.Contains(err.Error(), "do not apply") {
		t.Errorf("-kubeconfig with -node-runtime: %v", err)
	}
	if _, err := parseCluster(t, "-kind-node-image=kindest/node:v1.36.1", "-node-runtime=containerd-1.7"); err == nil || !strings.Contains(err.Error(), "-node-runtime") {
		t.Errorf("-kind-node-image with -node-runtime: %v", err)
	}
	// A given cluster's RuntimeClasses are checked against the cluster (the
	// suite's preflight); the suite's own cluster offers its node runtime's.
	if c, err := parseCluster(t, "-kubeconfig="+kc, "-runtime-class=kata"); err != nil || c.RuntimeClass != "kata" {
		t.Errorf("-kubeconfig with -runtime-class: %v", err)
	}
	if c, err := parseCluster(t, "-node-runtime=containerd-2-gvisor", "-runtime-class=gvisor"); err != nil || c.NodeRuntime != "containerd-2-gvisor" {
		t.Errorf("gvisor on containerd-2-gvisor: %v", err)
	}
	// Each suite refuses the other's flags, by name, with its suite.
	if _, err := parse(t, "-kubeconfig=/x", "-keep-cluster"); err == nil || !strings.Contains(err.Error(), "-kubeconfig is a flag of the cluster suite (cluster.test), not of the CRI suite") || !strings.Contains(err.Error(), "-keep-cluster is a flag") {
		t.Errorf("cluster flags to the CRI suite: %v", err)
	}
	if _, err := parseCluster(t, "-runtime-endpoint=unix:///x.sock"); err == nil || !strings.Contains(err.Error(), "-runtime-endpoint is a flag of the CRI suite (cri.test)") {
		t.Errorf("CRI flags to the cluster suite: %v", err)
	}
	// critest's names.
	if c, err := parse(t, "-test-images-file="+images, "-runtime-service-timeout=45s", "-image-service-timeout=5m", "-procs=3"); err != nil || c.ImagesFile != images || c.Timeouts().RuntimeCall.String() != "45s" || c.Timeouts().ImagePull.String() != "5m0s" || c.Parallel != 3 {
		t.Errorf("critest flags: %+v %v", c, err)
	}
	if _, err := parse(t, "-procs=0"); err == nil || !strings.Contains(err.Error(), "-parallel 0") {
		t.Errorf("-parallel=0: %v", err)
	}
	if c, err := parse(t, "-expect=builtin"); err != nil || c.Expect != "builtin" {
		t.Errorf("-expect=builtin: %v", err)
	}
	// Several problems are all reported (framework.Exit puts them on one line).
	_, err = parse(t, "-profile=nope", "-report-dir=")
	if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), "\n", "; "), "unknown profile") || !strings.Contains(strings.ReplaceAll(err.Error(), "\n", "; "), "-report-dir") {
		t.Errorf("joined errors: %q", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
}
