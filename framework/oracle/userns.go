package oracle

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// UserNS is a process's user namespace as the node's /proc shows it from
// outside: its identity (the ns/user link) and its id maps, which
// /proc/<pid>/uid_map and gid_map render relative to the reader's user
// namespace (for a reader in the node's: "inside outside length", host IDs
// in the middle column).
type UserNS struct {
	Link   string `json:"link"`
	UIDMap string `json:"uidMap"`
	GIDMap string `json:"gidMap"`
}

// String is a one-line summary for evidence.
func (u UserNS) String() string {
	return fmt.Sprintf("%s uid_map %q gid_map %q", orNone(u.Link), u.UIDMap, u.GIDMap)
}

// UserNS is the user namespace Read found for the process.
func (p Process) UserNS() UserNS {
	return UserNS{Link: p.Namespaces[User], UIDMap: p.UIDMap, GIDMap: p.GIDMap}
}

// UserNS reads only pid's user namespace link and id maps: all three must
// be readable (ErrGone when the process exited).
func (p Proc) UserNS(pid int) (UserNS, error) {
	dir := filepath.Join(p.Root, strconv.Itoa(pid))
	var u UserNS
	var err error
	if u.Link, err = os.Readlink(filepath.Join(dir, "ns", string(User))); err != nil {
		return u, gone(err)
	}
	for _, m := range []struct {
		file string
		to   *string
	}{{"uid_map", &u.UIDMap}, {"gid_map", &u.GIDMap}} {
		b, err := os.ReadFile(filepath.Join(dir, m.file))
		if err != nil {
			return u, gone(err)
		}
		*m.to = NormalizeMap(string(b))
	}
	return u, nil
}

// InNamespace reads every process in the namespace of kind k whose link
// is link (the processes of one pod's network namespace, say), in PID
// order; processes that exit meanwhile are left out.
func (p Proc) InNamespace(k Kind, link string) ([]Process, error) {
	if link == "" {
		return nil, fmt.Errorf("oracle: InNamespace needs a %s namespace link", k)
	}
	pids, err := p.pids()
	if err != nil {
		return nil, err
	}
	var out []Process
	for _, pid := range pids {
		l, err := os.Readlink(filepath.Join(p.Root, strconv.Itoa(pid), "ns", string(k)))
		if err != nil || l != link {
			continue
		}
		proc, err := p.Read(pid)
		if err != nil {
			continue
		}
		out = append(out, proc)
	}
	return out, nil
}
