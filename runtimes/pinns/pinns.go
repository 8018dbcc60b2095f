// Package pinns is the project's stand-in for CRI-O's pinns, the helper
// CRI-O runs to create a pod's namespaces and pin each one to a file
// (bind-mounted from /proc/<pid>/ns/<type>) so it outlives every process.
// Upstream's pinns is C in CRI-O's repository (pinns/src), which the
// project does not build from a Go module; this package has the same
// command line and leaves the same files, so CRI-O execs its binary
// (cmd/ectest-pinns, installed as pinns) unchanged.
//
// Every report of a CRI-O run must say that its pinns was this stand-in,
// not upstream's (a later change wires that into the runtime's report).
//
// It follows CRI-O v1.36.3 (tag commit b24632ab):
//   - pinns/src/pinns.c main: the getopt_long table (short "mpchuUind:f:s:";
//     --uts --ipc --net --user --cgroup --mnt take an optional "=host",
//     which pins the caller's namespace instead of a new one; --dir,
//     --filename, --sysctl, --uid-mapping, --gid-mapping), the checks and
//     their order, and the binding order user, uts, ipc, net, cgroup, mnt;
//   - bind_ns and create_bind_root: <dir>/<type>ns/<filename>, the
//     directories made (0755, not recursively) when missing, the file
//     created empty (an existing one, which CRI-O makes for user
//     namespaces, is fine) and /proc/<pid>/ns/<type> bind-mounted on it;
//   - setup_unbindable_bindpath: for mnt, <dir>/mntns is bound onto itself
//     and made unbindable first;
//   - write_mapping_file: a mapping is "container-host-size" entries
//     joined by "@" (CRI-O ends each with "@"); setgroups is not denied;
//   - pinns/src/sysctl.c configure_sysctls: each -s key=value is written,
//     dots turned into slashes, to /proc/sys/<key> by the process that is
//     in the new namespaces (so net.* lands in the new network namespace,
//     kernel.shm*, kernel.msg*, kernel.sem and fs.mqueue.* in the new IPC
//     one); pinns itself has no per-namespace rules (CRI-O filters
//     sysctls before calling it, pkg/config/sysctl.go Validate);
//   - its caller, internal/config/nsmgr/nsmgr_linux.go NewPodNamespaces,
//     for the invocation (see the tests).
//
// Differences, none visible to CRI-O: namespaces are made by one child
// process (this binary re-executed with ChildArg, cloned with every new
// namespace at once, the user namespace's maps written before it runs,
// then uid and gid 0 in it) instead of fork and unshare; a sysctl key that
// would leave /proc/sys is refused; bad input is refused before anything
// is created; on failure the bind mounts this run made are undone; -h and
// -p print a line (upstream exits 1 silently); messages are worded anew
// but keep pinns's "[pinns:e]: " prefix, one line, exit status 1.
package pinns

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NSType is a namespace kind as /proc/<pid>/ns names it.
type NSType string

// The kinds pinns pins, in the order it binds them.
const (
	User   NSType = "user"
	UTS    NSType = "uts"
	IPC    NSType = "ipc"
	Net    NSType = "net"
	Cgroup NSType = "cgroup"
	Mnt    NSType = "mnt"
)

// bindOrder is pinns.c main's order of bind_ns calls.
var bindOrder = []NSType{User, UTS, IPC, Net, Cgroup, Mnt}

// Pin is one namespace to pin.
type Pin struct {
	Type NSType
	// New is false for "--<type>=host": the caller's namespace is pinned.
	New bool
}

// Sysctl is one -s key=value.
type Sysctl struct{ Key, Value string }

// IDMap is one line of a uid_map or gid_map.
type IDMap struct{ ContainerID, HostID, Size int }

// Options is a parsed command line.
type Options struct {
	Dir, Filename string
	// Pins are in binding order, each kind at most once.
	Pins        []Pin
	Sysctls     []Sysctl
	UIDMappings []IDMap
	GIDMappings []IDMap
}

// Path is the file t is pinned to: <dir>/<type>ns/<filename>, put together
// as bind_ns does (no cleaning).
func (o Options) Path(t NSType) string {
	return o.Dir + "/" + string(t) + "ns/" + o.Filename
}

// ErrUsage marks bad input.
var ErrUsage = errors.New("bad input")

func usage(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

type argKind int

const (
	noArg argKind = iota
	requiredArg
	optionalArg
)

type longOpt struct {
	name string
	kind argKind
	id   string // the short option it stands for, or the long name
}

// longOpts is pinns.c's long_options table.
var longOpts = []longOpt{
	{"help", noArg, "h"},
	{"uts", optionalArg, "u"},
	{"ipc", optionalArg, "i"},
	{"net", optionalArg, "n"},
	{"user", optionalArg, "U"},
	{"cgroup", optionalArg, "c"},
	{"mnt", optionalArg, "m"},
	{"dir", requiredArg, "d"},
	{"filename", requiredArg, "f"},
	{"uid-mapping", optionalArg, "uid-mapping"},
	{"gid-mapping", optionalArg, "gid-mapping"},
	{"sysctl", optionalArg, "s"},
}

// shortNS maps pinns's namespace options to their kinds.
var shortNS = map[string]NSType{"u": UTS, "i": IPC, "n": Net, "U": User, "c": Cgroup, "m": Mnt}

const shortNoArg, shortWithArg = "mpchuUin", "dfs"

// Parse reads pinns's command line (without the program name) the way
// GNU getopt_long reads it for pinns: short options may be clustered
// (-uin) and take their argument attached or as the next word; long
// options may be abbreviated to a unique prefix, and an optional argument
// only comes attached (--net=host: "--net host" is a new network
// namespace and a word pinns ignores); words that are not options are
// ignored; "--" ends the options. A repeated namespace option pins a new
// namespace if any of its occurrences asked for one.
func Parse(args []string) (Options, error) {
	var o Options
	var dir, filename, uidMap, gidMap *string
	newNS := map[NSType]bool{}
	pinned := map[NSType]bool{}
	var sysctls []string

	apply := func(id string, arg *string, display string) error {
		if t, ok := shortNS[id]; ok {
			pinned[t] = true
			if arg == nil || *arg != "host" {
				newNS[t] = true
			}
			return nil
		}
		switch id {
		case "d":
			dir = arg
		case "f":
			filename = arg
		case "s":
			if arg == nil {
				return usage("option %s needs key=value (write --sysctl=key=value or -s key=value)", display)
			}
			sysctls = append(sysctls, *arg)
		case "uid-mapping":
			uidMap = arg
		case "gid-mapping":
			gidMap = arg
		case "h":
			return usage("usage: pinns -d DIR -f FILENAME [-u|--uts[=host]] [-i|--ipc[=host]] [-n|--net[=host]] [-U|--user --uid-mapping=M --gid-mapping=M] [-c|--cgroup[=host]] [-m|--mnt[=host]] [-s key=value]...")
		case "p":
			return usage("option -p: pinning a PID namespace is not supported (as in CRI-O's pinns)")
		}
		return nil
	}

	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			opt, err := findLong(name)
			if err != nil {
				return o, err
			}
			display := "--" + opt.name
			var arg *string
			switch opt.kind {
			case noArg:
				if hasVal {
					return o, usage("option %s takes no argument", display)
				}
			case requiredArg:
				if hasVal {
					arg = &val
				} else if i+1 < len(args) {
					i++
					arg = &args[i]
				} else {
					return o, usage("option %s needs an argument", display)
				}
			case optionalArg:
				if hasVal {
					arg = &val
				}
			}
			if err := apply(opt.id, arg, display); err != nil {
				return o, err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j : j+1]
				switch {
				case strings.Contains(shortNoArg, c):
					if err := apply(c, nil, "-"+c); err != nil {
						return o, err
					}
				case strings.Contains(shortWithArg, c):
					var arg string
					if j+1 < len(a) {
						arg = a[j+1:]
					} else if i+1 < len(args) {
						i++
						arg = args[i]
					} else {
						return o, usage("option -%s needs an argument", c)
					}
					if err := apply(c, &arg, "-"+c); err != nil {
						return o, err
					}
					j = len(a)
				default:
					return o, usage("unknown option -%s", c)
				}
			}
		}
	}

	if dir == nil {
		return o, usage("no directory to pin namespaces in (-d)")
	}
	if filename == nil {
		return o, usage("no file name to pin namespaces to (-f)")
	}
	o.Dir, o.Filename = *dir, *filename
	for _, t := range bindOrder {
		if pinned[t] {
			o.Pins = append(o.Pins, Pin{Type: t, New: newNS[t]})
		}
	}
	if len(o.Pins) == 0 {
		return o, usage("no namespace to pin")
	}
	if pinned[User] && (uidMap == nil || gidMap == nil) {
		return o, usage("a new user namespace needs --uid-mapping and --gid-mapping")
	}
	if !pinned[User] && (uidMap != nil || gidMap != nil) {
		return o, usage("--uid-mapping or --gid-mapping given without a user namespace")
	}
	var err error
	if uidMap != nil {
		if o.UIDMappings, err = ParseIDMap(*uidMap); err != nil {
			return o, usage("--uid-mapping: %v", err)
		}
		if o.GIDMappings, err = ParseIDMap(*gidMap); err != nil {
			return o, usage("--gid-mapping: %v", err)
		}
	}
	for _, s := range sysctls {
		kv, err := ParseSysctl(s)
		if err != nil {
			return o, err
		}
		if _, err := ProcSysPath(kv.Key); err != nil {
			return o, err
		}
		o.Sysctls = append(o.Sysctls, kv)
	}
	return o, nil
}

// findLong finds a long option by its name or a unique prefix of it.
func findLong(name string) (longOpt, error) {
	var found []longOpt
	for _, l := range longOpts {
		if l.name == name {
			return l, nil
		}
		if name != "" && strings.HasPrefix(l.name, name) {
			found = append(found, l)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return longOpt{}, usage("unknown option --%s", name)
	default:
		return longOpt{}, usage("option --%s is ambiguous", name)
	}
}

// ParseSysctl splits key=value at the first "=" (sysctl.c's
// separate_sysctl_key_value: neither side may be empty).
func ParseSysctl(s string) (Sysctl, error) {
	k, v, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return Sysctl{}, usage("sysctl %q is not key=value", s)
	case k == "":
		return Sysctl{}, usage("sysctl %q has an empty key", s)
	case v == "":
		return Sysctl{}, usage("sysctl %q has an empty value", s)
	}
	return Sysctl{Key: k, Value: v}, nil
}

// ProcSysPath is the file under /proc/sys a sysctl key names: dots become
// slashes (sysctl.c's write_sysctl_to_file). A key that would leave
// /proc/sys is refused.
func ProcSysPath(key string) (string, error) {
	rel := strings.ReplaceAll(key, ".", "/")
	if strings.HasPrefix(rel, "/") {
		return "", usage("sysctl key %q is outside /proc/sys", key)
	}
	return "/proc/sys/" + rel, nil
}

// ParseIDMap reads CRI-O's form of a uid or gid map: entries
// "container-host-size" each followed (or separated) by "@", as
// nsmgr_linux.go's getMappingsForPinns writes them.
func ParseIDMap(s string) ([]IDMap, error) {
	var m []IDMap
	for e := range strings.SplitSeq(s, "@") {
		if e == "" {
			continue
		}
		f := strings.Split(e, "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("entry %q is not container-host-size", e)
		}
		var n [3]int
		for i, x := range f {
			v, err := strconv.ParseUint(x, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("entry %q: %q is not a number", e, x)
			}
			n[i] = int(v)
		}
		if n[2] == 0 {
			return nil, fmt.Errorf("entry %q has size 0", e)
		}
		m = append(m, IDMap{ContainerID: n[0], HostID: n[1], Size: n[2]})
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%q has no entry", s)
	}
	return m, nil
}

// Main is the pinns command: it pins the namespaces args ask for and
// returns 0, or writes one line on stderr and returns 1, as pinns does.
func Main(args []string, stderr io.Writer) int {
	o, err := Parse(args)
	if err == nil {
		err = Run(o)
	}
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")
		msg = strings.Join(strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
		fmt.Fprintf(stderr, "%s%s\n", ErrPrefix, msg)
		return 1
	}
	return 0
}
