package oracle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// parseStatus is a /proc/<pid>/status text as its fields ("State" to "S
// (sleeping)"), each value trimmed.
func parseStatus(text string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if key, value, ok := strings.Cut(line, ":"); ok {
			fields[key] = strings.TrimSpace(value)
		}
	}
	return fields
}

// applyStatus fills p's fields read from status: state, parent, user and
// groups, capabilities, no_new_privs, seccomp and the nested PIDs.
func (p *Process) applyStatus(status map[string]string) error {
	words := func(v string) string { return strings.Join(strings.Fields(v), " ") }
	for key, value := range status {
		switch key {
		case "State":
			p.State = value
		case "PPid":
			p.PPid, _ = strconv.Atoi(value)
		case "Uid":
			p.UID = words(value)
		case "Gid":
			p.GID = words(value)
		case "Groups":
			p.Groups = words(value)
		case "CapEff":
			p.CapEff = value
		case "CapBnd":
			p.CapBnd = value
		case "CapPrm":
			p.CapPrm = value
		case "CapInh":
			p.CapInh = value
		case "CapAmb":
			p.CapAmb = value
		case "NoNewPrivs":
			p.NoNewPrivs = value
		case "Seccomp":
			p.Seccomp = value
		case "Seccomp_filters":
			p.SeccompFilters = value
		case "NSpid":
			p.NSpid = nil
			for _, f := range strings.Fields(value) {
				n, err := strconv.Atoi(f)
				if err != nil {
					return fmt.Errorf("NSpid %q: %v", value, err)
				}
				p.NSpid = append(p.NSpid, n)
			}
		}
	}
	return nil
}

// CgroupLines are the lines of a /proc/<pid>/cgroup text, each trimmed.
func CgroupLines(text string) []string {
	out := []string{}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// cgroupLine splits "4:memory,foo:/path" into its controllers and path
// (a path may hold colons).
func cgroupLine(l string) (id, controllers, path string, ok bool) {
	f := strings.SplitN(l, ":", 3)
	if len(f) != 3 {
		return "", "", "", false
	}
	return f[0], f[1], f[2], true
}

// CgroupPath is the process's cgroup in the hierarchy of controller
// ("memory", "name=systemd"), or for "" in the unified (cgroup2) one:
// hierarchy 0 with no controllers. ok is false when the process has none.
func (p Process) CgroupPath(controller string) (string, bool) {
	for _, l := range p.Cgroups {
		id, cs, path, ok := cgroupLine(l)
		if !ok {
			continue
		}
		if controller == "" {
			if id == "0" && cs == "" {
				return path, true
			}
			continue
		}
		for _, c := range strings.Split(cs, ",") {
			if c == controller {
				return path, true
			}
		}
	}
	return "", false
}

// ChargedCgroups are the cgroups that account the process's resources, by
// their controllers ("cpu,cpuacct"; "" for the unified hierarchy): every
// cgroup v1 hierarchy with controllers, and the unified one only where no
// v1 controller is mounted (cgroup v2). A named hierarchy (name=systemd)
// and the unified one of a hybrid host hold no controller: nothing is
// charged there, and a runtime need not move an exec session into them.
func (p Process) ChargedCgroups() map[string]string {
	out := map[string]string{}
	unified, hasUnified := "", false
	for _, l := range p.Cgroups {
		id, cs, path, ok := cgroupLine(l)
		switch {
		case !ok:
		case id == "0" && cs == "":
			unified, hasUnified = path, true
		case cs != "" && !strings.HasPrefix(cs, "name="):
			out[cs] = path
		}
	}
	if len(out) == 0 && hasUnified {
		out[""] = unified
	}
	return out
}

// within reports whether cgroup path is dir or lies below it.
func within(path, dir string) bool {
	return path == dir || dir == "/" && strings.HasPrefix(path, "/") || strings.HasPrefix(path, dir+"/")
}

// cgroupDifferences lists where b's charged cgroups (ChargedCgroups) are
// not a's nor below them; nothing when either was not read.
func cgroupDifferences(a, b Process) []string {
	if a.Cgroups == nil || b.Cgroups == nil {
		return nil
	}
	ca, cb := a.ChargedCgroups(), b.ChargedCgroups()
	keys := map[string]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		x, inA := ca[k]
		y, inB := cb[k]
		name := k + " cgroup"
		if k == "" {
			name = "unified cgroup"
		}
		switch {
		case inA && inB && within(y, x):
		case !inB:
			out = append(out, fmt.Sprintf("%s (none), not %q", name, x))
		case !inA:
			out = append(out, fmt.Sprintf("%s %q, not (none)", name, y))
		default:
			out = append(out, fmt.Sprintf("%s %q, not %q nor below it", name, y, x))
		}
	}
	return out
}

// FromInside is a process as a view from inside its container read it:
// its status, cgroup and oom_score_adj texts ("" for one not read), and
// its namespace links by kind. A sandbox with a kernel of its own shows
// what it implements; Differences compares two such views.
func FromInside(status, cgroup, oomScoreAdj string, links map[Kind]string) (Process, error) {
	p := Process{Namespaces: map[Kind]string{}}
	for k, l := range links {
		if l != "" {
			p.Namespaces[k] = l
		}
	}
	if err := p.applyStatus(parseStatus(status)); err != nil {
		return p, err
	}
	if strings.TrimSpace(cgroup) != "" {
		p.Cgroups = CgroupLines(cgroup)
	}
	p.OOMScoreAdj = strings.TrimSpace(oomScoreAdj)
	return p, nil
}
