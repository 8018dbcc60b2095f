// Package host prepares this machine for kind clusters: a Docker engine
// and, where the capability bounding set lacks capabilities a privileged
// container would ask for, an extra OCI runtime that drops them, used by
// kind's nodes only. It changes an engine only when ectest owns it or is
// told to, records what it changed (StateFile), and Restore undoes it.
package host
