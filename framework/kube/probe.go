package kube

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Probe loads a kubeconfig and asks its cluster for the server version, so
// that a malformed kubeconfig or an unreachable cluster is one clear error
// before any spec runs.
func Probe(kubeconfig string, timeout time.Duration) (string, error) {
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return "", fmt.Errorf("-kubeconfig %s: %w", kubeconfig, err)
	}
	c.Timeout = timeout
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return "", fmt.Errorf("-kubeconfig %s: %w", kubeconfig, err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("the cluster at %s (-kubeconfig %s) does not answer: %w", c.Host, kubeconfig, err)
	}
	return v.GitVersion, nil
}
