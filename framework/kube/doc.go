// Package kube drives a Kubernetes cluster for specs: a namespace per spec
// that is deleted (and waited for) when the spec ends, pods of the suite's
// images, ephemeral containers through the pods/ephemeralcontainers
// subresource, exec/attach/logs through the API server, and impersonated
// clients for RBAC specs.
package kube
