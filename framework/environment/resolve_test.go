package environment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/ectest/ectest/framework"
)

// The cluster suite finds its cluster as kubectl does, but for
// ~/.kube/config: -kubeconfig, a kind flag, $KUBECONFIG, the in-cluster
// service account, else a kind cluster, saying which.
func TestResolveCluster(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kc")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sa := filepath.Join(dir, "sa")
	_ = os.MkdirAll(sa, 0o755)
	for _, f := range []string{"token", "ca.crt"} {
		_ = os.WriteFile(filepath.Join(sa, f), []byte("x"), 0o600)
	}
	_ = os.WriteFile(filepath.Join(sa, "namespace"), []byte("sonobuoy\n"), 0o600)
	defer func(d string) { inCluster.dir = d }(inCluster.dir)
	inCluster.dir = sa
	pod := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			out[a] = b
		}
		return out
	}
	for _, c := range []struct {
		name       string
		cfg        framework.Config
		env        map[string]string
		kubeconfig string // "" kind; "in-cluster" the file written
		source     string
		err        string
	}{
		{"-kubeconfig wins", framework.Config{Kubeconfig: "/given"}, with(pod, "KUBECONFIG", kc), "/given", "-kubeconfig /given", ""},
		{"a kind flag asks for kind", framework.Config{NodeRuntime: "cri-o"}, with(pod, "KUBECONFIG", kc), "", "kind cluster", ""},
		{"-kind", framework.Config{Kind: true}, with(pod, "KUBECONFIG", kc), "", "kind cluster", ""},
		{"$KUBECONFIG before the pod's", framework.Config{}, with(pod, "KUBECONFIG", kc), kc, "$KUBECONFIG " + kc, ""},
		{"$KUBECONFIG missing", framework.Config{}, map[string]string{"KUBECONFIG": filepath.Join(dir, "none")}, "", "", "$KUBECONFIG: "},
		{"$KUBECONFIG of two files", framework.Config{}, map[string]string{"KUBECONFIG": kc + string(os.PathListSeparator) + kc}, "", "", "lists 2 files"},
		{"in a pod", framework.Config{}, pod, "in-cluster", "in-cluster service account (namespace sonobuoy) at https://10.96.0.1:443", ""},
		{"nothing: kind, saying so", framework.Config{}, nil, "", "no cluster configured", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.ReportDir = t.TempDir()
			src, err := resolveCluster(&cfg, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil || !strings.Contains(src, c.source) {
				t.Fatalf("source %q (%v), want one saying %q", src, err, c.source)
			}
			switch c.kubeconfig {
			case "in-cluster":
				kc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
				if err != nil || kc.Host != "https://10.96.0.1:443" || kc.BearerTokenFile != filepath.Join(sa, "token") || kc.TLSClientConfig.CAFile != filepath.Join(sa, "ca.crt") {
					t.Errorf("in-cluster kubeconfig %s: %+v, %v", cfg.Kubeconfig, kc, err)
				}
			default:
				if cfg.Kubeconfig != c.kubeconfig {
					t.Errorf("kubeconfig %q, want %q", cfg.Kubeconfig, c.kubeconfig)
				}
			}
		})
	}
}
