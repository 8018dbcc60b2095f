package kube

import (
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Connect loads a kubeconfig into a REST config and a client; errors name
// the kubeconfig.
func Connect(kubeconfig string, tune func(*rest.Config)) (*rest.Config, *kubernetes.Clientset, error) {
	c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("-kubeconfig %s: %w", kubeconfig, err)
	}
	if tune != nil {
		tune(c)
	}
	client, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, nil, fmt.Errorf("-kubeconfig %s: %w", kubeconfig, err)
	}
	return c, client, nil
}

// Probe loads a kubeconfig and asks its cluster for the server version, so
// that a malformed kubeconfig or an unreachable cluster is one clear error
// before any spec runs.
func Probe(kubeconfig string, timeout time.Duration) (string, error) {
	c, client, err := Connect(kubeconfig, func(c *rest.Config) { c.Timeout = timeout })
	if err != nil {
		return "", err
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return "", fmt.Errorf("the cluster at %s (-kubeconfig %s) does not answer: %w", c.Host, kubeconfig, err)
	}
	return v.GitVersion, nil
}
