package sonobuoy

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ectest/ectest/fixtures/images"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// pluginDef is sonobuoy's plugin manifest (v0.57.5's manifest.Manifest,
// the fields the plugin uses), strictly: a misspelt key fails here, not
// silently in sonobuoy.
type pluginDef struct {
	Config struct {
		Driver       string `json:"driver"`
		PluginName   string `json:"plugin-name"`
		ResultFormat string `json:"result-format"`
		Description  string `json:"description"`
		SourceURL    string `json:"source-url"`
	} `json:"sonobuoy-config"`
	PodSpec corev1.PodSpec   `json:"podSpec"`
	Spec    corev1.Container `json:"spec"`
}

func TestPluginRendersASonobuoyJobPlugin(t *testing.T) {
	out, err := Plugin(PluginOptions{Image: "example.com/ectest/cluster-suite:v1", RegistryPort: 5999, Parallel: 3, Flags: "-runtime-class=gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	var p pluginDef
	if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p.Config.Driver != "Job" || p.Config.PluginName != "ectest" || p.Config.ResultFormat != "junit" {
		t.Errorf("sonobuoy-config %+v", p.Config)
	}
	if p.PodSpec.ServiceAccountName != "ectest" || !p.PodSpec.HostNetwork {
		t.Errorf("podSpec: service account %q, host network %v: want ectest, true", p.PodSpec.ServiceAccountName, p.PodSpec.HostNetwork)
	}
	if p.Spec.Image != "example.com/ectest/cluster-suite:v1" {
		t.Errorf("image %q", p.Spec.Image)
	}
	env := map[string]string{}
	for _, e := range p.Spec.Env {
		env[e.Name] = e.Value
	}
	if env["ECTEST_REGISTRY_PORT"] != "5999" || env["ECTEST_PARALLEL"] != "3" || env["ECTEST_FLAGS"] != "-runtime-class=gvisor" {
		t.Errorf("env %v", env)
	}
	for _, e := range p.Spec.Env {
		if e.ValueFrom == nil && strings.Contains(e.Value, "$(") {
			// sonobuoy run sorts the plugin's env by name: a reference to
			// a variable sorted after it would stay unexpanded.
			t.Errorf("env %s=%q refers to another variable", e.Name, e.Value)
		}
	}
	if len(p.Spec.VolumeMounts) != 1 || p.Spec.VolumeMounts[0].Name != "results" || p.Spec.VolumeMounts[0].MountPath != "/tmp/sonobuoy/results" {
		t.Errorf("the results volume sonobuoy adds must be mounted where its worker reads: %v", p.Spec.VolumeMounts)
	}
	if _, err := Plugin(PluginOptions{Flags: `-x="y"`}); err == nil {
		t.Error("flags with quotes: want an error")
	}
}

func TestRBACBindsTheRoleToThePluginsAccount(t *testing.T) {
	docs := strings.Split(RBAC(), "\n---\n")
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	kinds := map[string]bool{}
	for _, d := range docs {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(d), &meta); err != nil {
			t.Fatal(err)
		}
		kinds[meta.Kind] = true
		switch meta.Kind {
		case "ClusterRole":
			if err := yaml.UnmarshalStrict([]byte(d), &role); err != nil {
				t.Fatal(err)
			}
		case "ClusterRoleBinding":
			if err := yaml.UnmarshalStrict([]byte(d), &binding); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if !kinds[k] {
			t.Errorf("no %s", k)
		}
	}
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != "ectest" || binding.Subjects[0].Namespace != "sonobuoy" {
		t.Errorf("binding %+v of role %q", binding, role.Name)
	}
	for _, r := range role.Rules {
		for _, v := range r.Verbs {
			if v == "*" || v == "escalate" {
				t.Errorf("rule %+v: least privilege names its verbs and never escalates", r)
			}
		}
	}
}

// TestRunScriptParses checks the entry point's syntax with the shells that
// run it: the image's busybox (the host's, which the image is made of) and
// the POSIX sh here. A syntax error there would end the plugin with no
// done file, and sonobuoy would wait for it until its timeout.
func TestRunScriptParses(t *testing.T) {
	shells := [][]string{{"sh", "-n"}}
	if _, err := os.Stat(images.DefaultBusybox); err == nil {
		shells = append(shells, []string{images.DefaultBusybox, "sh", "-n"})
	}
	for _, sh := range shells {
		cmd := exec.Command(sh[0], append(sh[1:], "run.sh")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s run.sh: %v: %s", strings.Join(sh, " "), err, out)
		}
	}
}
