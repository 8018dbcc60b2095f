package environment

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/internal/atomicfile"
)

// inCluster is where a pod finds its service account (rest.InClusterConfig's
// files), a variable so that a test can point it elsewhere.
var inCluster = struct{ dir string }{dir: "/var/run/secrets/kubernetes.io/serviceaccount"}

// ResolveCluster decides which cluster the cluster suite runs against, as
// kubectl finds one, and says so in cfg.ClusterSource: -kubeconfig; a
// flag that asks for the kind cluster; $KUBECONFIG (one file); the service
// account of the pod the suite runs in; and only when none of these is
// there the kind cluster.
// ~/.kube/config is not looked at: a suite that creates and deletes
// objects runs against no cluster it was not pointed at. A cluster it
// finds sets cfg.Kubeconfig (for the in-cluster one, a file in the report
// directory), so everything after sees a given cluster.
func ResolveCluster(cfg *framework.Config) error {
	src, err := resolveCluster(cfg, os.Getenv)
	cfg.ClusterSource = src
	return err
}

func resolveCluster(cfg *framework.Config, getenv func(string) string) (string, error) {
	if cfg.Kubeconfig != "" {
		return "-kubeconfig " + cfg.Kubeconfig, nil
	}
	if cfg.KindRequested() {
		return "a kind cluster made or reused here (asked for by a kind flag)", nil
	}
	if paths := framework.KubeconfigPaths(getenv("KUBECONFIG")); len(paths) > 0 { // ":" names no file: as unset, for kubectl too
		if len(paths) != 1 {
			// Merging them would write their credentials to a file of
			// the run's: the user merges them, knowingly.
			return "", fmt.Errorf("$KUBECONFIG lists %d files; the suite takes one: give -kubeconfig=FILE (kubectl config view --flatten > FILE merges them)", len(paths))
		}
		if _, err := os.Stat(paths[0]); err != nil {
			return "", fmt.Errorf("$KUBECONFIG: %v (unset it, or give -kind, for a kind cluster)", err)
		}
		// Absolute: the spec processes of -parallel start elsewhere.
		abs, err := filepath.Abs(paths[0])
		if err != nil {
			return "", err
		}
		cfg.Kubeconfig = abs
		return "$KUBECONFIG " + abs, nil
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	token, ca := filepath.Join(inCluster.dir, "token"), filepath.Join(inCluster.dir, "ca.crt")
	if host != "" && port != "" {
		if _, err := os.Stat(token); err == nil {
			ns, _ := os.ReadFile(filepath.Join(inCluster.dir, "namespace"))
			// In the report directory: it names the token's file, not the
			// token, and says which cluster the run judged.
			path, err := filepath.Abs(filepath.Join(cfg.ReportDir, InClusterKubeconfigFile))
			if err != nil {
				return "", err
			}
			if err := os.MkdirAll(cfg.ReportDir, 0o755); err != nil {
				return "", err
			}
			if err := atomicfile.WriteFile(path, []byte(inClusterKubeconfig(host, port, token, ca, strings.TrimSpace(string(ns)))), 0o644); err != nil {
				return "", fmt.Errorf("in-cluster configuration: %v", err)
			}
			cfg.Kubeconfig = path
			return fmt.Sprintf("the in-cluster service account (namespace %s) at https://%s", strings.TrimSpace(string(ns)), hostPort(host, port)), nil
		}
	}
	return "no cluster configured (no -kubeconfig, $KUBECONFIG or in-cluster service account): a kind cluster made or reused here", nil
}

// inClusterKubeconfig is a kubeconfig that reads the service account's
// token and CA from their files (the kubelet rotates the token in place).
func inClusterKubeconfig(host, port, token, ca, ns string) string {
	if ns == "" {
		ns = "default"
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: in-cluster
  cluster:
    server: https://%s
    certificate-authority: %s
users:
- name: service-account
  user:
    tokenFile: %s
contexts:
- name: in-cluster
  context:
    cluster: in-cluster
    user: service-account
    namespace: %s
current-context: in-cluster
`, hostPort(host, port), ca, token, ns)
}

func hostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// InClusterKubeconfigFile, in the report directory, is the kubeconfig of
// the in-cluster service account a run found (its token's file, not the
// token).
const InClusterKubeconfigFile = "in-cluster.kubeconfig"
