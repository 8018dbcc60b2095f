package cri

import (
	"regexp"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework/oracle"
)

// Tools are the commands a spec runs in a debug container, in the flavour
// of its image (images.Set.Tools): busybox's on Linux and in the suite's
// own debug image, Nano Server's (cmd, curl.exe, hostname, ipconfig,
// tasklist) on Windows.
type Tools struct {
	Flavor string
}

// ToolsFor is the tools of a flavour ("" is busybox).
func ToolsFor(flavor string) Tools {
	if flavor == "" {
		flavor = images.ToolsBusybox
	}
	return Tools{Flavor: flavor}
}

func (t Tools) nano() bool { return t.Flavor == images.ToolsNanoServer }

// Sleep keeps a debug container running, with marker in its command line.
func (t Tools) Sleep(marker string) []string {
	if t.nano() {
		return []string{"cmd", "/S", "/C", "ping -t 127.0.0.1 >NUL & rem " + marker}
	}
	return oracle.SleepWith(marker)
}

// HTTPGet prints the body of url on stdout, failing on any error.
func (t Tools) HTTPGet(url string) []string {
	if t.nano() {
		return []string{"curl.exe", "-fsS", "--max-time", "5", url}
	}
	return []string{"wget", "-qO-", url}
}

// Hostname prints the container's hostname.
func (t Tools) Hostname() []string { return []string{"hostname"} }

// Addresses prints the container's network addresses.
func (t Tools) Addresses() []string {
	if t.nano() {
		return []string{"ipconfig"}
	}
	return []string{"ip", "-o", "addr", "show"}
}

var ipconfigIPv4 = regexp.MustCompile(`(?m)^\s*IPv4 Address[ .]*:\s*(\S+)\s*$`)

// HasAddress reports whether Addresses' output lists ip.
func (t Tools) HasAddress(out, ip string) bool {
	if ip == "" {
		return false
	}
	if t.nano() {
		for _, m := range ipconfigIPv4.FindAllStringSubmatch(out, -1) {
			if strings.TrimSuffix(m[1], "(Preferred)") == ip {
				return true
			}
		}
		return false
	}
	return strings.Contains(out, " "+ip+"/")
}

// Processes lists the processes the container sees.
func (t Tools) Processes() []string {
	if t.nano() {
		return []string{"tasklist", "/FO", "CSV", "/NH"}
	}
	return []string{"ps", "-o", "pid,user,args"}
}

// WindowsTargetImage is the executable name of the target program in a
// Windows target image (the suite binary named so; see README).
const WindowsTargetImage = "target.exe"

// ShowsProcess reports whether Processes' output shows the process whose
// command line carries marker: by its argv with busybox's ps; by the
// target program's image name with tasklist, which shows no command lines.
func (t Tools) ShowsProcess(out, marker string) bool {
	if t.nano() {
		return strings.Contains(strings.ToLower(out), `"`+WindowsTargetImage+`"`)
	}
	procs, err := ParsePS(out)
	if err != nil {
		return false
	}
	for _, p := range procs {
		if strings.Contains(p.Args, marker) {
			return true
		}
	}
	return false
}
