//go:build windows

package environment

import "github.com/Microsoft/hcsshim/osversion"

// localWindowsBuild is this machine's OS build (hcsshim reads it with
// RtlGetVersion, which tells the truth without an application manifest).
func localWindowsBuild() uint16 { return osversion.Build() }
