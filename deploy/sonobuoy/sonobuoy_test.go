package sonobuoy

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework/kube"

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
	d, err := parseRBAC(RBAC())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if !d.kinds[k] {
			t.Errorf("no %s", k)
		}
	}
	if len(d.bindings) != 1 {
		t.Fatalf("%d ClusterRoleBindings, want 1", len(d.bindings))
	}
	b := d.bindings[0]
	if _, ok := d.roles[b.RoleRef.Name]; !ok || len(b.Subjects) != 1 || b.Subjects[0].Name != "ectest" || b.Subjects[0].Namespace != "sonobuoy" {
		t.Errorf("binding %+v", b)
	}
	// The role the suite binds in its namespaces is the plugin's.
	out, err := Plugin(PluginOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var p pluginDef
	if err := yaml.UnmarshalStrict([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	role := ""
	for _, e := range p.Spec.Env {
		if e.Name == kube.NamespaceRoleEnv {
			role = e.Value
		}
	}
	if _, ok := d.roles[role]; !ok || d.clusterWide(role) {
		t.Errorf("the plugin's %s=%q: want a ClusterRole of rbac.yaml bound in no ClusterRoleBinding", kube.NamespaceRoleEnv, role)
	}
}

// TestRBACIsLeastPrivilege holds rbac.yaml to its rules (checkRBAC).
func TestRBACIsLeastPrivilege(t *testing.T) {
	d, err := parseRBAC(RBAC())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkRBAC(d) {
		t.Error(p)
	}
}

// TestRBACCheckCatches proves each rule of checkRBAC fails on a grant that
// breaks it, made on a copy of rbac.yaml.
func TestRBACCheckCatches(t *testing.T) {
	for _, c := range []struct {
		name, want string
		change     func(d *rbacDocs)
	}{
		{"a wildcard verb", "wildcard", func(d *rbacDocs) {
			addRule(d, "ectest-namespace", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}})
		}},
		{"a wildcard resource", "wildcard", func(d *rbacDocs) {
			addRule(d, "ectest-namespace", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*/exec"}, Verbs: []string{"create"}})
		}},
		{"a wildcard API group", "wildcard", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"runtimeclasses"}, Verbs: []string{"get"}})
		}},
		{"impersonating any user", "impersonate", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
		}},
		{"impersonating system:masters", "impersonate", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"groups"}, ResourceNames: []string{"system:masters"}, Verbs: []string{"impersonate"}})
		}},
		{"impersonating any service account cluster-wide", "impersonate", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}})
		}},
		{"bind on any role", "bind", func(d *rbacDocs) {
			addRule(d, "ectest-namespace", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}})
		}},
		{"escalate", "escalate", func(d *rbacDocs) {
			addRule(d, "ectest-namespace", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}, ResourceNames: []string{"x"}, Verbs: []string{"escalate"}})
		}},
		{"bind on the built-in roles cluster-wide", "bind", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, ResourceNames: []string{"admin", "edit", "view"}, Verbs: []string{"bind"}})
		}},
		{"deleting any namespace", "cluster-wide", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"delete", "patch"}})
		}},
		{"patching nodes", "cluster-wide", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"patch"}})
		}},
		{"making ClusterRoleBindings", "cluster-wide", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"create"}})
		}},
		{"exec in every namespace", "pods/exec", func(d *rbacDocs) {
			addRule(d, "ectest", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}})
		}},
		{"the namespaced role bound cluster-wide", "ectest-namespace", func(d *rbacDocs) {
			d.bindings = append(d.bindings, rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "ectest-namespace"}})
		}},
		{"a role sonobuoy delete leaves", "sonobuoy delete", func(d *rbacDocs) {
			r := d.roles["ectest-namespace"]
			r.Labels = nil
			d.roles["ectest-namespace"] = r
		}},
	} {
		d, err := parseRBAC(RBAC())
		if err != nil {
			t.Fatal(err)
		}
		c.change(d)
		problems := checkRBAC(d)
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, c.want) }) {
			t.Errorf("%s: want a problem saying %q, got %q", c.name, c.want, problems)
		}
	}
}

func addRule(d *rbacDocs, role string, r rbacv1.PolicyRule) {
	cr := d.roles[role]
	cr.Rules = append(cr.Rules, r)
	d.roles[role] = cr
}

// rbacDocs is rbac.yaml, parsed.
type rbacDocs struct {
	kinds    map[string]bool
	roles    map[string]rbacv1.ClusterRole
	bindings []rbacv1.ClusterRoleBinding
}

func parseRBAC(text string) (*rbacDocs, error) {
	d := &rbacDocs{kinds: map[string]bool{}, roles: map[string]rbacv1.ClusterRole{}}
	for _, doc := range strings.Split(text, "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, err
		}
		d.kinds[meta.Kind] = true
		switch meta.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
				return nil, err
			}
			d.roles[r.Name] = r
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			if err := yaml.UnmarshalStrict([]byte(doc), &b); err != nil {
				return nil, err
			}
			d.bindings = append(d.bindings, b)
		case "Namespace", "ServiceAccount":
		default:
			// A Role or RoleBinding would need rules of its own here.
			return nil, fmt.Errorf("rbac.yaml: a %s, which the least-privilege check does not know", meta.Kind)
		}
	}
	return d, nil
}

// clusterWide says whether a ClusterRoleBinding grants role in every namespace.
func (d *rbacDocs) clusterWide(role string) bool {
	return slices.ContainsFunc(d.bindings, func(b rbacv1.ClusterRoleBinding) bool { return b.RoleRef.Name == role })
}

// clusterWideWrites are the cluster-wide writes the suite needs on the
// resources that decide who can do what where, each with its reason.
var clusterWideWrites = map[string]string{
	"namespaces create":   "the suite makes its own namespaces (ectest-<token>); RBAC cannot limit create by name",
	"rolebindings create": "the first binding in a namespace the suite made (ectest-namespace, to itself); RBAC cannot limit create to some namespaces, bind limits what it binds",
	"nodes create":        "WIN-4 registers a Windows Node object of its own (no kubelet); RBAC cannot limit create by name",
	"nodes delete":        "WIN-4 deletes that Node (ectest-win-<token>, a random name, so no resourceNames)",
}

// guarded are the resources whose cluster-wide writes need an allowance.
var guarded = []string{"namespaces", "nodes", "roles", "rolebindings", "clusterroles", "clusterrolebindings"}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection", "bind", "escalate", "impersonate"}

// checkRBAC lists where the roles grant more than least privilege allows:
// wildcards; impersonation without resourceNames (but of service accounts
// in a role bound only per namespace) or of system: names; bind or escalate
// without resourceNames, escalate at all, bind cluster-wide on anything
// but the file's own per-namespace roles; cluster-wide writes on guarded
// resources beyond clusterWideWrites; cluster-wide rights on pods or their
// subresources; the per-namespace roles bound cluster-wide; users other
// than kube.ImpersonatedUsers; roles or bindings sonobuoy delete leaves.
func checkRBAC(d *rbacDocs) []string {
	var out []string
	used := map[string]bool{}
	sonobuoyLabels := func(kind, name string, l map[string]string) {
		if l["component"] != "sonobuoy" || l["namespace"] != "sonobuoy" {
			out = append(out, fmt.Sprintf("%s %s: without the labels component=sonobuoy and namespace=sonobuoy, sonobuoy delete leaves it", kind, name))
		}
	}
	for _, b := range d.bindings {
		sonobuoyLabels("ClusterRoleBinding", b.Name, b.Labels)
	}
	perNamespace := map[string]bool{}
	for name := range d.roles {
		perNamespace[name] = !d.clusterWide(name)
	}
	for _, name := range slices.Sorted(maps.Keys(d.roles)) {
		role := d.roles[name]
		sonobuoyLabels("ClusterRole", name, role.Labels)
		wide := d.clusterWide(name)
		if wide && name != "ectest" {
			out = append(out, fmt.Sprintf("ClusterRole %s is bound cluster-wide; only ectest may be, ectest-namespace is bound by the suite per namespace", name))
		}
		for _, r := range role.Rules {
			at := fmt.Sprintf("ClusterRole %s, rule %v %v %v %v", name, r.APIGroups, r.Resources, r.ResourceNames, r.Verbs)
			if len(r.NonResourceURLs) > 0 {
				if !slices.Equal(r.Verbs, []string{"get"}) {
					out = append(out, at+": non-resource URLs are for reading only")
				}
				continue
			}
			for _, v := range append(append(slices.Clone(r.Verbs), r.Resources...), r.APIGroups...) {
				if strings.Contains(v, "*") {
					out = append(out, at+": a wildcard ("+v+")")
				}
			}
			for _, v := range r.Verbs {
				switch v {
				case "impersonate":
					saOnly := !slices.ContainsFunc(r.Resources, func(s string) bool { return s != "serviceaccounts" })
					if len(r.ResourceNames) == 0 && (wide || !saOnly) {
						out = append(out, at+": impersonate without resourceNames (whoever may impersonate anyone may act as system:masters)")
					}
					for _, n := range r.ResourceNames {
						if strings.HasPrefix(n, "system:") {
							out = append(out, at+": impersonate a system: identity ("+n+")")
						}
					}
					if slices.Contains(r.Resources, "users") && !slices.Equal(slices.Sorted(slices.Values(r.ResourceNames)), slices.Sorted(slices.Values(kube.ImpersonatedUsers))) {
						out = append(out, fmt.Sprintf("%s: impersonate users other than the specs' (kube.ImpersonatedUsers %v)", at, kube.ImpersonatedUsers))
					}
				case "escalate":
					out = append(out, at+": escalate (a role may then grant what its maker does not hold)")
				case "bind":
					if len(r.ResourceNames) == 0 {
						out = append(out, at+": bind without resourceNames (any role, cluster-admin included)")
					}
					for _, n := range r.ResourceNames {
						if n == "cluster-admin" || (wide && !perNamespace[n]) {
							out = append(out, at+": bind "+n+" cluster-wide (only the file's per-namespace roles may be)")
						}
					}
				}
			}
			if !wide {
				continue
			}
			for _, res := range r.Resources {
				if res == "pods" || strings.HasPrefix(res, "pods/") || res == "secrets" || res == "serviceaccounts" {
					out = append(out, at+": "+res+" in every namespace (ectest-namespace holds them, in the suite's namespaces)")
				}
				if !slices.Contains(guarded, res) {
					continue
				}
				for _, v := range r.Verbs {
					if !slices.Contains(writeVerbs, v) || v == "bind" && len(r.ResourceNames) > 0 {
						continue
					}
					key := res + " " + v
					if _, ok := clusterWideWrites[key]; !ok {
						out = append(out, at+": cluster-wide "+key+" is not among the allowed (clusterWideWrites)")
					}
					used[key] = true
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(clusterWideWrites)) {
		if !used[key] {
			out = append(out, "clusterWideWrites allows "+key+", which rbac.yaml no longer grants: drop it")
		}
	}
	return out
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
