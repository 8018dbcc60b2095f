package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// RuntimeClassHandler is the runtime handler of a RuntimeClass of the
// cluster; an unknown RuntimeClass is an error naming those there are.
func RuntimeClassHandler(ctx context.Context, client kubernetes.Interface, name string) (string, error) {
	rc, err := client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return rc.Handler, nil
	}
	if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("-runtime-class %s: %w", name, err)
	}
	names := []string{}
	if list, lerr := client.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{}); lerr == nil {
		for _, r := range list.Items {
			names = append(names, r.Name+" (handler "+r.Handler+")")
		}
	}
	if len(names) == 0 {
		names = append(names, "none")
	}
	return "", fmt.Errorf("-runtime-class %s: the cluster has no such RuntimeClass; it has: %s", name, strings.Join(names, ", "))
}

// ProbeRuntimeClass checks, before any spec runs, that the cluster at
// kubeconfig has the RuntimeClass ("" needs none).
func ProbeRuntimeClass(kubeconfig, name string, timeout time.Duration) error {
	if name == "" {
		return nil
	}
	_, client, err := Connect(kubeconfig, func(c *rest.Config) { c.Timeout = timeout })
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err = RuntimeClassHandler(ctx, client, name)
	return err
}
