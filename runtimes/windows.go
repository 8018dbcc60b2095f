package runtimes

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Microsoft/hcsshim/osversion"
)

// windowsReleases are the Windows Server releases a windows profile may be
// written for, with their OS builds (hcsshim's osversion constants).
var windowsReleases = map[string]uint16{
	"ltsc2019": osversion.LTSC2019,
	"ltsc2022": osversion.LTSC2022,
	"ltsc2025": osversion.LTSC2025,
}

// WindowsReleaseBuild is the OS build of a Windows Server release name.
func WindowsReleaseBuild(release string) (uint16, error) {
	if b, ok := windowsReleases[release]; ok {
		return b, nil
	}
	known := make([]string, 0, len(windowsReleases))
	for k := range windowsReleases {
		known = append(known, k)
	}
	sort.Strings(known)
	return 0, fmt.Errorf("unknown Windows release %q (want %s)", release, strings.Join(known, ", "))
}
