// Package cri drives a CRI runtime for specs: dialing unix sockets and
// Windows named pipes, per-spec sandboxes and containers that clean
// themselves up, exec/attach/logs, and reading what a container observes.
package cri
