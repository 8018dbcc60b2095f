// Package oracle reads, from a /proc the runtime under test does not
// control, where processes really are: their namespaces, id maps,
// capabilities and user. Verdicts on namespace modes rest on it, never on
// what a runtime reports about its own containers. It is a leaf: it
// imports nothing of ectest, so both layers (the CRI suite reading the
// node's /proc, the cluster suite reading it through an observer on the
// node) judge the same way.
package oracle
