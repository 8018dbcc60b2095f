// Package kind gives the suites a Kubernetes cluster: a kind cluster made
// with sigs.k8s.io/kind's library from an offline-built node image (or a
// given one), or any existing cluster by kubeconfig.
package kind
