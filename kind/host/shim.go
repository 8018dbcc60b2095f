package host

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/ectest/ectest/internal/flock"
)

// The kind library runs the docker CLI by name and has no setting for the
// node containers' OCI runtime or its network's IPv4 subnet. A `docker`
// script first on this process's PATH adds both to the two commands kind
// runs for them (`docker run`, `docker network create ... kind`), so the
// engine's default runtime and address pools stay as they are.

// kindSubnets are where kind's network may go: the lower half of
// 198.19.0.0/16 (the range reserved for network tests), below the
// clusters' pod and service ranges (kind.PodSubnet, kind.ServiceSubnet).
var (
	kindSubnets   = netip("198.19.0.0/17")
	clusterRanges = netip("198.19.128.0/17")
)

func netip(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

// ShimDir is where the docker script goes: root's is /run/ectest/kind-docker.
func ShimDir() (string, error) {
	if os.Geteuid() == 0 {
		return "/run/ectest/kind-docker", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "ectest", "kind-docker"), nil
}

// useShim writes the docker script for runtime ("" for the engine's
// default) and a free subnet for kind's network, and puts its directory
// first on this process's PATH (inherited by its children).
func useShim(ctx context.Context, logf func(string, ...any), runtime string) error {
	dir, err := ShimDir()
	if err != nil {
		return err
	}
	real, err := realDocker(dir)
	if err != nil {
		return err
	}
	subnet, err := kindSubnet(ctx)
	if err != nil {
		return err
	}
	if err := flock.PrivateDir(dir); err != nil {
		return err
	}
	script := ShimScript(real, runtime, subnet)
	path := filepath.Join(dir, "docker")
	if old, err := os.ReadFile(path); err != nil || string(old) != script {
		if err := atomicfile.WriteFile(path, []byte(script), 0o700); err != nil {
			return err
		}
		if err := os.Chmod(path, 0o700); err != nil {
			return err
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+pathWithout(os.Getenv("PATH"), dir))
	if runtime != "" {
		logf("kind's node containers run with the OCI runtime %s (docker run --runtime, through %s first on PATH); the engine's default runtime is unchanged", runtime, path)
	}
	return nil
}

// ShimScript is the docker script: real is the docker CLI, runtime and
// subnet are added when not empty.
func ShimScript(real, runtime, subnet string) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# ectest (kind/host/shim.go): the kind library's docker commands, with the\n# node containers' OCI runtime and kind's network subnet added.\n")
	fmt.Fprintf(&b, "docker=%s\n", shellQuote(real))
	b.WriteString("case \"$1\" in\n")
	if runtime != "" {
		fmt.Fprintf(&b, "run) shift; exec \"$docker\" run --runtime=%s \"$@\" ;;\n", shellQuote(runtime))
	}
	if subnet != "" {
		b.WriteString("network)\n  if [ \"$2\" = create ]; then\n    for last; do :; done\n")
		// --gateway too: without it docker inspect shows none, and the
		// suite finds the registry's address there (kind.NetworkGateway).
		fmt.Fprintf(&b, "    if [ \"$last\" = kind ]; then shift 2; exec \"$docker\" network create --subnet=%s --gateway=%s \"$@\"; fi\n  fi ;;\n", shellQuote(subnet), shellQuote(gateway(subnet)))
	}
	b.WriteString("esac\nexec \"$docker\" \"$@\"\n")
	return b.String()
}

// gateway is the subnet's first address.
func gateway(subnet string) string {
	_, n, err := net.ParseCIDR(subnet)
	if err != nil {
		return ""
	}
	ip := n.IP.To4()
	return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// pathWithout is list without dir.
func pathWithout(list, dir string) string {
	var keep []string
	for _, d := range filepath.SplitList(list) {
		if filepath.Clean(d) != filepath.Clean(dir) {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// realDocker finds the docker CLI on PATH, skipping the script's directory.
func realDocker(shimDir string) (string, error) {
	for _, d := range filepath.SplitList(pathWithout(os.Getenv("PATH"), shimDir)) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "docker")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("docker: %w", exec.ErrNotFound)
}

// kindSubnet is the first /24 of kindSubnets that no other docker network
// and no host address overlaps. A network "kind" that is already there is
// reused by kind as it is: it is refused only if it overlaps the clusters'
// pod and service ranges.
func kindSubnet(ctx context.Context) (string, error) {
	nets, err := dockerSubnets(ctx)
	if err != nil {
		return "", err
	}
	var taken []*net.IPNet
	for name, subnets := range nets {
		for _, s := range subnets {
			if name == "kind" {
				if s.IP.To4() != nil && overlaps(s, clusterRanges) {
					return "", fmt.Errorf("docker network kind (%s) overlaps the clusters' pod and service addresses %s: remove it (docker network rm kind) once no kind cluster uses it", s, clusterRanges)
				}
				continue
			}
			taken = append(taken, s)
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				taken = append(taken, n)
			}
		}
	}
	return FreeSubnet(kindSubnets, taken)
}

// FreeSubnet is the first /24 of within that overlaps none of taken.
func FreeSubnet(within *net.IPNet, taken []*net.IPNet) (string, error) {
	base := within.IP.To4()
	ones, _ := within.Mask.Size()
	for i := 0; i < 1<<(24-ones); i++ {
		c := &net.IPNet{IP: net.IPv4(base[0], base[1], base[2]+byte(i), 0).To4(), Mask: net.CIDRMask(24, 32)}
		free := true
		for _, t := range taken {
			if overlaps(c, t) {
				free = false
				break
			}
		}
		if free {
			return c.String(), nil
		}
	}
	return "", fmt.Errorf("no free /24 for kind's docker network in %s: other docker networks or host addresses use all of it", within)
}

func overlaps(a, b *net.IPNet) bool { return a.Contains(b.IP) || b.Contains(a.IP) }

// dockerSubnets lists each docker network's subnets.
func dockerSubnets(ctx context.Context) (map[string][]*net.IPNet, error) {
	names, err := exec.CommandContext(ctx, "docker", "network", "ls", "--format", "{{.Name}}").Output()
	if err != nil {
		return nil, fmt.Errorf("docker network ls: %w", err)
	}
	out := map[string][]*net.IPNet{}
	list := strings.Fields(string(names))
	if len(list) == 0 {
		return out, nil
	}
	args := append([]string{"network", "inspect", "--format", "{{.Name}}{{range .IPAM.Config}} {{.Subnet}}{{end}}"}, list...)
	b, err := exec.CommandContext(ctx, "docker", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("docker network inspect: %w", err)
	}
	return parseSubnets(string(b)), nil
}

func parseSubnets(s string) map[string][]*net.IPNet {
	out := map[string][]*net.IPNet{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		out[f[0]] = out[f[0]][:0:0]
		for _, c := range f[1:] {
			if _, n, err := net.ParseCIDR(c); err == nil {
				out[f[0]] = append(out[f[0]], n)
			}
		}
	}
	return out
}
