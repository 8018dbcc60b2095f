package pinns

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	ChildMain() // Run re-executes the test binary as its child
	os.Exit(m.Run())
}

// The invocations CRI-O v1.36.3 builds (tag commit b24632ab):
// internal/config/nsmgr/nsmgr_linux.go NewPodNamespaces puts
// "-d", namespaces_dir (default /var/run), "-f", a new UUID, then
// "-s", key=value for each sysctl (one word each, values may hold spaces),
// then one option per namespace in the order
// server/sandbox_run_linux.go configureGeneratorForSandboxNamespaces lists
// them, IPC, NET, UTS, then USER only with ID mappings ("--ipc", "--net",
// "--uts", "--user", "=host" appended for host IPC and host network), and
// with ID mappings "--uid-mapping=" and "--gid-mapping=" joined from
// getMappingsForPinns ("%d-%d-%d@" per entry). It runs pinns with
// CombinedOutput and takes any non-zero exit as failure.
var crioInvocations = []struct {
	name string
	args []string
	want Options
}{
	{
		name: "pod with its own namespaces and a sysctl",
		args: []string{"-d", "/var/run", "-f", "6f1c0b9e-6b7e-4c53-9a55-3a0e8d1f2c4b",
			"-s", "net.ipv4.ping_group_range=0 2147483647", "--ipc", "--net", "--uts"},
		want: Options{Dir: "/var/run", Filename: "6f1c0b9e-6b7e-4c53-9a55-3a0e8d1f2c4b",
			Pins:    []Pin{{UTS, true}, {IPC, true}, {Net, true}},
			Sysctls: []Sysctl{{"net.ipv4.ping_group_range", "0 2147483647"}}},
	},
	{
		name: "hostNetwork and hostIPC pod",
		args: []string{"-d", "/var/run", "-f", "0b8f", "--ipc=host", "--net=host", "--uts"},
		want: Options{Dir: "/var/run", Filename: "0b8f",
			Pins: []Pin{{UTS, true}, {IPC, false}, {Net, false}}},
	},
	{
		name: "pod with a user namespace (hostUsers: false)",
		args: []string{"-d", "/var/run", "-f", "a1", "-s", "kernel.shm_rmid_forced=1",
			"-s", "net.ipv4.ping_group_range=0 65535", "--ipc", "--net", "--uts", "--user",
			"--uid-mapping=0-1000000-65536@", "--gid-mapping=0-1000000-65536@65536-3000000-10@"},
		want: Options{Dir: "/var/run", Filename: "a1",
			Pins: []Pin{{User, true}, {UTS, true}, {IPC, true}, {Net, true}},
			Sysctls: []Sysctl{{"kernel.shm_rmid_forced", "1"},
				{"net.ipv4.ping_group_range", "0 65535"}},
			UIDMappings: []IDMap{{0, 1000000, 65536}},
			GIDMappings: []IDMap{{0, 1000000, 65536}, {65536, 3000000, 10}}},
	},
}

func TestParseCRIOInvocations(t *testing.T) {
	for _, c := range crioInvocations {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", c.args, got, c.want)
			}
		})
	}
}

// getopt_long's reading of pinns's option table.
func TestParseGetoptForms(t *testing.T) {
	for _, c := range []struct {
		args []string
		want Options
	}{
		// Clustered short options, attached arguments.
		{[]string{"-uin", "-d/x", "-fy"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{UTS, true}, {IPC, true}, {Net, true}}}},
		{[]string{"-cm", "-d", "/x", "-f", "y", "-snet.a=b=c"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{Cgroup, true}, {Mnt, true}}, Sysctls: []Sysctl{{"net.a", "b=c"}}}},
		// An optional argument only comes attached: "host" here is a
		// word pinns ignores, and the namespace is a new one.
		{[]string{"--net", "host", "-d", "/x", "-f", "y"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{Net, true}}}},
		// Any other value than host is a new namespace.
		{[]string{"--net=other", "--cgroup=host", "--mnt=host", "--dir=/x", "--filename", "y"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{Net, true}, {Cgroup, false}, {Mnt, false}}}},
		// Unique prefixes; a new namespace asked for once stays new.
		{[]string{"--ne=host", "--ne", "--di=/x", "--fi=y", "--sys=k=v"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{Net, true}}, Sysctls: []Sysctl{{"k", "v"}}}},
		// The last -d wins; "--" ends the options.
		{[]string{"-d", "/a", "-d", "/x", "-f", "y", "-i", "--", "-n"}, Options{Dir: "/x", Filename: "y",
			Pins: []Pin{{IPC, true}}}},
	} {
		got, err := Parse(c.args)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.args, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", c.args, got, c.want)
		}
	}
}

func TestParseBadInput(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-n", "-f", "y"},                                // no -d
		{"-n", "-d", "/x"},                               // no -f
		{"-d", "/x", "-f", "y"},                          // no namespace
		{"-d", "/x", "-f", "y", "-n", "-p"},              // pid: in the optstring, refused
		{"-d", "/x", "-f", "y", "-h"},                    // help: exits 1
		{"-d", "/x", "-f", "y", "--help"},                //
		{"-d", "/x", "-f", "y", "-n", "-z"},              // unknown short
		{"-d", "/x", "-f", "y", "--pid"},                 // unknown long
		{"-d", "/x", "-f", "y", "--u"},                   // ambiguous: uts, user, uid-mapping
		{"-d", "/x", "-f", "y", "--help=1"},              // no argument allowed
		{"-d", "/x", "-f", "y", "-n", "-s"},              // -s needs an argument
		{"-d", "/x", "-f", "y", "-n", "--dir"},           // --dir needs an argument
		{"-d", "/x", "-f", "y", "-n", "--sysctl", "k=v"}, // optional: only attached
		{"-d", "/x", "-f", "y", "-n", "-s", "novalue"},
		{"-d", "/x", "-f", "y", "-n", "-s", "=v"},
		{"-d", "/x", "-f", "y", "-n", "-s", "k="},
		{"-d", "/x", "-f", "y", "-U"},                         // no mappings
		{"-d", "/x", "-f", "y", "-U", "--uid-mapping=0-1-1@"}, // no gid mapping
		{"-d", "/x", "-f", "y", "-n", "--uid-mapping=0-1-1@", "--gid-mapping=0-1-1@"}, // no user ns
		{"-d", "/x", "-f", "y", "-U", "--uid-mapping=0-1-1@", "--gid-mapping="},
		{"-d", "/x", "-f", "y", "-U", "--uid-mapping=0 1 1", "--gid-mapping=0-1-1@"},
		{"-d", "/x", "-f", "y", "-U", "--uid-mapping=0-1-0@", "--gid-mapping=0-1-1@"},
		{"-d", "/x", "-f", "y", "-U", "--uid-mapping=0--1-1@", "--gid-mapping=0-1-1@"},
	} {
		if o, err := Parse(args); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", args, o)
		} else if !errors.Is(err, ErrUsage) {
			t.Errorf("Parse(%q): %v is not ErrUsage", args, err)
		}
	}
}

// Bad input: one line on stderr, exit status 1, nothing created.
func TestMainBadInput(t *testing.T) {
	dir := t.TempDir() + "/pins"
	for _, args := range [][]string{
		{"-d", dir, "-f", "y"},
		{"-d", dir, "-f", "y", "-n", "-s", "k"},
		{"-d", dir, "-f", "y", "--bogus"},
		{"-d", dir, "-f", "y", "-n", "-s", "/etc/passwd=x"},
	} {
		var stderr bytes.Buffer
		if code := Main(args, &stderr); code != 1 {
			t.Errorf("Main(%q) = %d, want 1", args, code)
		}
		out := stderr.String()
		if !strings.HasPrefix(out, "[pinns:e]: ") || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Errorf("Main(%q) wrote %q, want one [pinns:e] line", args, out)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("Main(%q) created %s", args, dir)
		}
	}
}

func TestProcSysPath(t *testing.T) {
	for key, want := range map[string]string{
		"net.ipv4.ip_forward":  "/proc/sys/net/ipv4/ip_forward",
		"kernel.shmmax":        "/proc/sys/kernel/shmmax",
		"net/ipv4/ip_forward":  "/proc/sys/net/ipv4/ip_forward",
		"fs.mqueue.msg_max":    "/proc/sys/fs/mqueue/msg_max",
		"net.ipv4.conf.all.rp": "/proc/sys/net/ipv4/conf/all/rp",
	} {
		if got, err := ProcSysPath(key); err != nil || got != want {
			t.Errorf("ProcSysPath(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	for _, key := range []string{"/etc/passwd", ".."} {
		if got, err := ProcSysPath(key); err == nil {
			t.Errorf("ProcSysPath(%q) = %q, want an error", key, got)
		}
	}
}
