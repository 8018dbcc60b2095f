//go:build !windows

package environment

// localWindowsBuild is 0: this machine is not Windows.
func localWindowsBuild() uint16 { return 0 }
