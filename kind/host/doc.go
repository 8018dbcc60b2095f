// Package host prepares this machine for kind clusters, idempotently:
// a Docker engine, and, where the capability bounding set lacks
// capabilities a privileged container would ask for, an OCI runtime
// wrapper for dockerd that drops them. It does nothing that is not needed.
package host
