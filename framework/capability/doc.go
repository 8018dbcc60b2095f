// Package capability names what a runtime can do for debug containers,
// judges what a spec observed against what a profile declared, and builds the
// capability matrix. It is a leaf: it imports nothing else from this module.
package capability
