//go:build !linux

package pinns

import "errors"

// ChildArg is Run's child's marker (Linux only).
const ChildArg = "__ectest_pinns_child__"

// Run fails: namespaces are Linux's.
func Run(Options) error { return errors.New("pinning namespaces works only on Linux") }

// ChildMain does nothing: there is no child on this OS.
func ChildMain() {}
