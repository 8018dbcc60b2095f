// Package embedded runs the suite's zero-configuration runtime: a private
// containerd (own config, root, state, socket and CNI network) that is started
// for one run and leaves nothing behind. Runs that died without cleaning up
// are swept by the next one.
package embedded
