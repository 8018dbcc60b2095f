package nodeimage

// DebianSuite is the node's Debian release: the host's, whose packages the
// machine's apt mirror serves.
const DebianSuite = "bookworm"

// NodePackages are what every kind node needs from Debian (kind's base
// image list, with Debian's CNI plugins instead of builds; libseccomp2 for
// runc, built with cgo). A node runtime adds its own (NodeRuntime.Packages).
var NodePackages = []string{
	"systemd", "dbus", "conntrack", "iptables", "nftables", "iproute2", "ethtool", "util-linux",
	"mount", "kmod", "libseccomp2", "bash", "ca-certificates", "procps", "socat",
	"containernetworking-plugins",
}

// NodePath is where a program goes in the node (kind's places: runc in
// /usr/local/sbin, the rest in /usr/local/bin).
func NodePath(binary string) string {
	if binary == "runc" {
		return "usr/local/sbin/" + binary
	}
	return "usr/local/bin/" + binary
}
