package embedded

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ectest/ectest/framework/cri"
	"github.com/ectest/ectest/runtimes/catalog"
	"github.com/ectest/ectest/runtimes/embedded/crunwrapper"
	"github.com/ectest/ectest/runtimes/embedded/oomclamp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultBaseDir keeps one directory per run. It is not under /tmp: runs must
// be found and swept after a crash even when /tmp is cleaned separately.
const DefaultBaseDir = "/var/lib/ectest/embedded"

// Runtime is a running private containerd.
type Runtime struct {
	layout layout
	opts   Options
	cmd    *exec.Cmd
	exited chan error
	// name is the daemon's (containerd, crio), socket its CRI socket.
	name, socket string
	// companions are the programs started before the daemon (cri-dockerd's
	// containerd and Docker engine), in that order; Stop stops them after
	// it, in the reverse order.
	companions []*process
}

// process is a running companion.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan error
}

// Start sweeps what dead runs left behind, writes a fresh configuration and
// starts containerd (or CRI-O, o.Implementation), returning once its CRI
// service answers.
func Start(ctx context.Context, o Options) (*Runtime, error) {
	if o.BaseDir == "" {
		o.BaseDir = DefaultBaseDir
	}
	var d *daemon
	var err error
	switch o.Implementation {
	case catalog.CriO:
		d, err = crioDaemon(o)
	case catalog.CriDockerd:
		d, err = criDockerdDaemon(o)
	default:
		d, err = containerdDaemon(o)
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.CNIBinDir, "bridge")); err != nil {
		return nil, fmt.Errorf("embedded runtime: no CNI bridge plugin in %s (make deps installs Debian's)", o.CNIBinDir)
	}
	if err := Sweep(o.BaseDir); err != nil {
		return nil, fmt.Errorf("embedded runtime: sweeping earlier runs: %w", err)
	}
	id := freeNetworkID(o.BaseDir)
	l := layout{id: id, dir: filepath.Join(o.BaseDir, id)}
	if err := claim(o.BaseDir, l); err != nil {
		return nil, err
	}
	if err := makeBridge(l); err != nil {
		return nil, errors.Join(err, cleanupDir(l))
	}
	if err := d.prepare(l, o); err != nil {
		return nil, errors.Join(err, cleanupDir(l))
	}
	for _, dir := range append([]string{l.dir, l.cniConf()}, d.dirs...) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	if err := traversable(l.dir); err != nil {
		return nil, errors.Join(err, cleanupDir(l))
	}
	if _, ok := d.files[l.cniConf()+"/10-ectest.conflist"]; !ok {
		d.files[l.cniConf()+"/10-ectest.conflist"] = cniConfig(l)
	}
	if o.NoNetwork {
		delete(d.files, l.cniConf()+"/10-ectest.conflist")
	}
	for path, content := range d.files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	if o.LogPath == "" {
		o.LogPath = filepath.Join(l.dir, d.name+".log")
	}
	r := &Runtime{layout: l, opts: o, name: d.name, socket: d.socket(l)}
	for _, c := range d.companions {
		logPath := filepath.Join(filepath.Dir(o.LogPath), "embedded-"+c.name+".log")
		p, err := startProcess(c.name, c.bin, c.args, c.env, logPath)
		if err != nil {
			return nil, errors.Join(err, r.Stop())
		}
		r.companions = append(r.companions, p)
		if err := waitCompanion(ctx, p, c, logPath); err != nil {
			return nil, errors.Join(err, r.Stop())
		}
	}
	p, err := startProcess(d.name, d.bin, d.args, d.env, o.LogPath)
	if err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	r.cmd, r.exited = p.cmd, p.exited
	if err := r.waitReady(ctx); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	return r, nil
}

// startProcess starts one program of the runtime, its output to logPath.
func startProcess(name, bin string, args, env []string, logPath string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	// Own process group: a Ctrl-C at the terminal reaches the suite, which
	// then tears the runtime down in order. Pdeathsig: if the suite is
	// killed outright, the runtime does not outlive it (the next run
	// sweeps the rest). Pdeathsig fires when the thread that forked the
	// runtime exits, not the process (golang/go#27505): a goroutine of the
	// suite that locks a thread and lets it die (the oracle's setns into a
	// namespace) once SIGKILLed containerd in mid-run that way. So the
	// runtime is started from a thread locked for as long as it runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	exited, err := startOnLockedThread(cmd)
	if err != nil {
		return nil, fmt.Errorf("embedded runtime: start %s: %w", name, err)
	}
	return &process{name: name, cmd: cmd, exited: exited}, nil
}

// waitCompanion waits until c answers (c.ready), failing when it exits
// first or does not answer within 60s.
func waitCompanion(ctx context.Context, p *process, c companion, logPath string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	for {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("embedded runtime: %s exited before it was ready (%v); last log lines:\n%s", c.name, err, tail(logPath, 15))
		default:
		}
		if lastErr = c.ready(ctx); lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedded runtime: %s not ready after 60s: %v; last log lines:\n%s", c.name, lastErr, tail(logPath, 15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop ends p: SIGTERM, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
	}
}

// daemon is what Start runs: one CRI implementation's program, its
// command line, environment and files in the run directory.
type daemon struct {
	name string // containerd, crio: for messages and the default log's name
	bin  string
	args []string
	env  []string
	// dirs are made, files written (path to content) before it starts.
	dirs  []string
	files map[string]string
	// socket is its CRI socket in the run directory.
	socket func(layout) string
	// prepare fills args, env, dirs and files for the run (with o as
	// Start completed it); it may set up files of its own.
	prepare func(l layout, o Options) error
	// companions are started, in order, before the daemon, each once the
	// one before answers (cri-dockerd's containerd and Docker engine);
	// their logs are next to the daemon's, embedded-<name>.log.
	companions []companion
}

// companion is a program the daemon needs running first.
type companion struct {
	name string
	bin  string
	args []string
	env  []string
	// ready answers nil once the program serves.
	ready func(ctx context.Context) error
}

// containerdDaemon is containerd (o.Containerd, or BinDir's, or PATH's)
// with the runc shim, as the flavors configure it.
func containerdDaemon(o Options) (*daemon, error) {
	if o.Containerd == "" {
		o.Containerd = "containerd"
		if o.BinDir != "" {
			o.Containerd = filepath.Join(o.BinDir, "containerd")
		}
	}
	bin, err := exec.LookPath(o.Containerd)
	if err != nil {
		return nil, fmt.Errorf("embedded runtime: %s not found (make deps installs Debian's; or give -runtime-endpoint)", o.Containerd)
	}
	shim := "containerd-shim-runc-v2"
	if o.BinDir != "" {
		shim = filepath.Join(o.BinDir, shim)
	}
	if _, err := exec.LookPath(shim); err != nil {
		return nil, fmt.Errorf("embedded runtime: %s not found (make deps installs Debian's)", shim)
	}
	d := &daemon{name: "containerd", bin: bin, socket: layout.socket}
	d.prepare = func(l layout, o Options) error {
		d.args = []string{"--config", l.config()}
		d.dirs = []string{l.hostsDir()}
		d.files = map[string]string{l.config(): containerdConfig(l, o)}
		for path, content := range shimConfigs(l, o) {
			d.files[path] = content
		}
		for _, r := range o.registries() {
			d.files[filepath.Join(l.hostsDir(), r, "hosts.toml")] = hostsTOML(r)
		}
		if o.BinDir != "" {
			// containerd finds its shim on PATH.
			d.env = append(d.env, "PATH="+o.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		}
		if o.has(catalog.Crun.Name) {
			d.files[l.crunEmpty()] = ""
			if err := os.WriteFile(l.crunEmpty(), nil, 0o600); err != nil {
				return err
			}
			crun, err := setUpCrun(l, o)
			if err != nil {
				return err
			}
			// The shim passes containerd's environment on to the wrapper.
			d.env = append(d.env, crunwrapper.EnvCrun+"="+crun)
		}
		return nil
	}
	return d, nil
}

// startOnLockedThread starts cmd from an OS thread that stays locked, and
// so alive, until cmd has exited: a Pdeathsig of cmd fires only when cmd's
// parent thread exits. The channel receives cmd.Wait's result.
func startOnLockedThread(cmd *exec.Cmd) (chan error, error) {
	exited := make(chan error, 1)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	return exited, <-started
}

// setUpCrun links the wrapper ectest-crun, in the run directory, to the
// running ectest binary (which runs it by argv[0], see fixtures/programs)
// and checks that it starts crun, returning crun's path.
func setUpCrun(l layout, o Options) (string, error) {
	if o.Implementation == catalog.Containerd && o.ConfigVersion != 3 {
		return "", errors.New("embedded runtime: the crun handler needs a version 3 configuration (containerd 2.x)")
	}
	crun, err := exec.LookPath("crun")
	if err != nil {
		return "", fmt.Errorf("embedded runtime: crun not found (Debian's crun package): %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := os.Symlink(self, l.crunWrapper()); err != nil {
		return "", err
	}
	out, err := crunCommand(l, crun, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "crun version") {
		return "", fmt.Errorf("embedded runtime: %s (the running binary as %s) does not run crun: %v: %s", l.crunWrapper(), crunwrapper.Name, err, strings.TrimSpace(string(out)))
	}
	return crun, nil
}

// crunCommand runs crun through the wrapper, as the shim does; the
// running binary plays the wrapper (its argv[0] names it), so this works
// for a dead run's directory too, whose link may point at a binary that
// is gone.
func crunCommand(l layout, crun string, args ...string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	cmd := &exec.Cmd{Path: self, Args: append([]string{l.crunWrapper()}, args...)}
	cmd.Env = append(os.Environ(), crunwrapper.EnvCrun+"="+crun)
	return cmd
}

// Endpoint is the CRI endpoint of the running runtime.
func (r *Runtime) Endpoint() string { return "unix://" + r.socket }

// Dir is the run directory (config, state, log).
func (r *Runtime) Dir() string { return r.layout.dir }

func (r *Runtime) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	for {
		select {
		case err := <-r.exited:
			r.exited <- err
			return fmt.Errorf("embedded runtime: %s exited before it was ready (%v); last log lines:\n%s", r.name, err, tail(r.opts.LogPath, 15))
		default:
		}
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := cri.Probe(pctx, r.Endpoint())
		pcancel()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedded runtime: %s not ready after 60s: %v; last log lines:\n%s", r.name, lastErr, tail(r.opts.LogPath, 15))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop removes every sandbox through the CRI, stops containerd (SIGTERM, then
// SIGKILL), kills what survived, unmounts and deletes the run directory. It
// returns every error it met.
func (r *Runtime) Stop() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if r.cmd != nil {
		if err := removeAllSandboxes(ctx, r.Endpoint()); err != nil {
			errs = append(errs, err)
		}
		(&process{name: r.name, cmd: r.cmd, exited: r.exited}).stop(10 * time.Second)
	}
	for i := len(r.companions) - 1; i >= 0; i-- {
		r.companions[i].stop(15 * time.Second)
	}
	if err := cleanupDir(r.layout); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func removeAllSandboxes(ctx context.Context, endpoint string) error {
	conn, err := cri.Dial(endpoint)
	if err != nil {
		return err
	}
	defer conn.Close()
	list, err := conn.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("embedded runtime: list sandboxes: %s", cri.StatusText(err))
	}
	var errs []error
	for _, sb := range list.Items {
		if _, err := conn.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %s", sb.Id, cri.StatusText(err)))
		}
		if _, err := conn.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %s", sb.Id, cri.StatusText(err)))
		}
	}
	return errors.Join(errs...)
}

// traversable lets every user search (not list) dir and each ancestor up
// to the first one that already lets them (0700 becomes 0711): the root of
// a pod's user namespace is an unprivileged host UID (KEP-127), and runc,
// already in that user namespace, resolves the container's rootfs under
// containerd's state directory, which containerd makes 0711 for that
// reason, as it makes its default /var/lib/containerd and /run/containerd;
// a 0700 directory above it (the suite's /var/lib/ectest) fails the
// sandbox with EACCES ("remount-propagation ... permission denied").
func traversable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 != 0 {
			return nil
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
			return fmt.Errorf("embedded runtime: letting user namespaces reach the runtime's state: %w", err)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// claim makes the run's directory with its owner file already in it: the
// directory is made under a hidden name, the owner written, and then it is
// renamed into place, so that a Sweep of another process starting at the
// same moment never sees a run directory without its owner (it took one
// for a dead run's and killed the runtime being started there).
func claim(baseDir string, l layout) error {
	if err := os.MkdirAll(baseDir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(baseDir, "."+l.id)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	owner := strconv.Itoa(os.Getpid()) + " " + ownPIDNamespace()
	if err := os.WriteFile(filepath.Join(tmp, filepath.Base(l.ownerFile())), []byte(owner), 0o600); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, l.dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

// makeBridge makes the run's CNI bridge before the runtime starts, with an
// address of its own (layout.bridgeMAC). A bridge the CNI bridge plugin
// makes has none: Linux then gives it the lowest address of its ports,
// which changes as sandboxes come and go, and a CNI CHECK of a sandbox
// made a moment before (CRI-O checks each new sandbox's network) fails
// with "Bridge interface ... Mac doesn't match": RunPodSandbox failed so
// once in make test (CRI-O, -parallel=4, IPC NODE's sandbox), an error of
// the suite's own network, not the runtime's. The plugin takes the bridge
// as it finds it; cleanupDir deletes it.
func makeBridge(l layout) error {
	bridge, _ := l.network()
	if out, err := exec.Command("ip", "link", "add", "name", bridge, "address", l.bridgeMAC(), "type", "bridge").CombinedOutput(); err != nil {
		return fmt.Errorf("embedded runtime: make the CNI bridge %s: %v: %s", bridge, err, out)
	}
	return nil
}

// freeNetworkID picks a run ID whose bridge and /24 (layout.network) no
// other run of baseDir has, nor a bridge on the host: runs side by side
// (make test's mutation lanes, the matrix's cells) must not share a
// subnet, which gives two pods one address and lets one run's cleanup
// remove the other's bridge. With 256 slots, a free one is found long
// before the tries run out; if not, the last ID is used as before.
func freeNetworkID(baseDir string) string {
	taken := map[string]bool{}
	if entries, err := os.ReadDir(baseDir); err == nil {
		for _, e := range entries {
			bridge, _ := layout{id: strings.TrimPrefix(e.Name(), ".")}.network()
			taken[bridge] = true
		}
	}
	id := randomID()
	for try := 0; try < 64; try++ {
		bridge, _ := layout{id: id}.network()
		if _, err := os.Stat("/sys/class/net/" + bridge); !taken[bridge] && os.IsNotExist(err) {
			return id
		}
		id = randomID()
	}
	return id
}

// Sweep cleans up the directories of runs whose owner process is gone.
// Hidden entries are runs being claimed (claim), never judged.
func Sweep(baseDir string) error {
	entries, err := os.ReadDir(baseDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		l := layout{id: e.Name(), dir: filepath.Join(baseDir, e.Name())}
		pid, pidns, err := readOwner(l.ownerFile())
		if err == nil && (processAlive(pid) || pidns != ownPIDNamespace()) {
			// Alive, or a run of another PID namespace (a suite in a
			// container): its PID says nothing here, so it is not judged
			// dead (a run in a namespace of its own once killed the
			// runtime of a run beside it this way).
			continue
		}
		if err := cleanupDir(l); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cleanupDir removes everything a run left: processes whose command line names
// the run directory (containerd, shims), containers still known to runc,
// mounts below the directory, the CNI bridge, and the directory itself.
func cleanupDir(l layout) error {
	var errs []error
	killProcessesMentioning(l.dir)
	// The state of every runc-like handler of the catalog (the runc shim
	// runs it, with its state under the run directory): its containers.
	for _, h := range catalogHandlers() {
		root := l.dir + "/" + h.StateDir
		if _, err := os.Stat(root); err != nil {
			continue
		}
		switch h.Name {
		case catalog.Crun.Name:
			errs = append(errs, killCrunContainers(l, root+"/"+namespaceK8s))
		case catalog.Runc.Name:
			errs = append(errs, killRuncContainers(runcOf(l, h), root+"/"+namespaceK8s))
		default:
			errs = append(errs, killRuncContainers(h.Binary, root+"/"+namespaceK8s))
		}
	}
	// cri-dockerd's Docker engine: the containers runc keeps for it.
	for _, root := range l.dockerRuncRoots() {
		runc := runcOf(l, catalog.HostRunc)
		ids := runcContainerIDs(runc, root)
		errs = append(errs, killRuncContainers(runc, root))
		errs = append(errs, removeShimSockets(l.socket(), dockerContainerdNamespace, ids))
	}
	killProcessesMentioning(l.dir)
	errs = append(errs, unmountBelow(l.dir))
	bridge, subnet := l.network()
	// A containerd that died (killed, or the machine's) left its sandboxes'
	// network namespaces, named by CNI and kept in /run/netns, with their
	// veths: those with an address in the run's subnet are the run's.
	errs = append(errs, removeNetnsIn(subnet))
	if _, err := os.Stat("/sys/class/net/" + bridge); err == nil {
		if out, err := exec.Command("ip", "link", "delete", bridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("delete bridge %s: %v: %s", bridge, err, out))
		}
	}
	// CRI-O's attach sockets, outside the run directory (AttachBase).
	if err := os.RemoveAll(l.crioAttach()); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", l.crioAttach(), err))
	}
	if err := os.RemoveAll(l.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", l.dir, err))
	}
	return errors.Join(errs...)
}

// runcOf is the runc a run used: a CRI-O run names its build in the file
// next to its wrapper (oomclamp.Real), which outlives the binary the
// wrapper links to; otherwise runc from PATH.
func runcOf(l layout, h catalog.Handler) string {
	if b, err := os.ReadFile(oomclamp.Real(l.dir + "/" + oomclamp.Name)); err == nil {
		return strings.TrimSpace(string(b))
	}
	return h.Binary
}

// removeNetnsIn deletes the CNI network namespaces (/run/netns/cni-*)
// whose eth0 has an address in subnet.
func removeNetnsIn(subnet string) error {
	_, ipnet, err := net.ParseCIDR(subnet)
	if err != nil {
		return err
	}
	names, _ := filepath.Glob("/run/netns/cni-*")
	var errs []error
	for _, path := range names {
		name := filepath.Base(path)
		out, err := exec.Command("ip", "-n", name, "-o", "-4", "addr", "show", "dev", "eth0").Output()
		if err != nil {
			continue // no eth0: not a sandbox of the suite's bridge network
		}
		for _, f := range strings.Fields(string(out)) {
			ip, _, err := net.ParseCIDR(f)
			if err != nil || !ipnet.Contains(ip) {
				continue
			}
			if out, err := exec.Command("ip", "netns", "delete", name).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("delete network namespace %s: %v: %s", name, err, out))
			}
			break
		}
	}
	return errors.Join(errs...)
}

// runcContainerIDs lists the containers runc knows in root.
func runcContainerIDs(bin, root string) []string {
	out, err := exec.Command(bin, "--root", root, "list", "-q").Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// removeShimSockets removes the sockets the runc shims of a containerd
// 1.6 at address kept for the containers ids of namespace ns: they live
// outside the run directory, in /run/containerd/s, named by the SHA-256 of
// <address>/<namespace>/<id> (containerd's runtime/v2/shim SocketAddress),
// and a shim killed outright (a dead run's, swept) leaves its socket.
func removeShimSockets(address, ns string, ids []string) error {
	var errs []error
	for _, id := range ids {
		path := shimSocket(address, ns, id)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func shimSocket(address, ns, id string) string {
	sum := sha256.Sum256([]byte(filepath.Join(address, ns, id)))
	return "/run/containerd/s/" + hex.EncodeToString(sum[:])
}

// killRuncContainers kills and deletes the containers runc (or an OCI
// runtime of its command line, bin from PATH) knows in root.
func killRuncContainers(bin, root string) error {
	out, err := exec.Command(bin, "--root", root, "list", "-q").Output()
	if err != nil {
		return nil // no such runtime or no state: nothing to kill
	}
	var errs []error
	for _, id := range strings.Fields(string(out)) {
		_ = exec.Command(bin, "--root", root, "kill", "--all", id, "KILL").Run()
		if o, err := exec.Command(bin, "--root", root, "delete", "--force", id).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s delete %s: %v: %s", bin, id, err, o))
		}
	}
	return errors.Join(errs...)
}

// killCrunContainers is killRuncContainers for crun, through its wrapper
// (crun's kill and delete fail on hybrid hosts without it).
func killCrunContainers(l layout, root string) error {
	crun, err := exec.LookPath("crun")
	if err != nil {
		return nil // no crun: it ran no container
	}
	out, err := crunCommand(l, crun, "--root", root, "list", "-q").Output()
	if err != nil {
		return nil // no crun state: nothing to kill
	}
	var errs []error
	for _, id := range strings.Fields(string(out)) {
		_ = crunCommand(l, crun, "--root", root, "kill", "--all", id, "KILL").Run()
		if o, err := crunCommand(l, crun, "--root", root, "delete", "--force", id).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("crun delete %s: %v: %s", id, err, o))
		}
	}
	return errors.Join(errs...)
}

func killProcessesMentioning(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := os.Getpid()
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), dir) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Split(p, "/")[2])
		if pid == self {
			continue
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitGone(pid, 5*time.Second)
	}
}

func waitGone(pid int, d time.Duration) {
	deadline := time.Now().Add(d)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling a kernel process table; no event to wait on
	}
}

func unmountBelow(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var mounts []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			mounts = append(mounts, fields[4])
		}
	}
	// Deepest first.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	var errs []error
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// readOwner reads an owner file: the owner's PID and the PID namespace it
// is a PID of (empty in a file of an older run: taken as this one's).
func readOwner(path string) (pid int, pidns string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, "", fmt.Errorf("%s is empty", path)
	}
	if pid, err = strconv.Atoi(fields[0]); err != nil {
		return 0, "", err
	}
	pidns = ownPIDNamespace()
	if len(fields) > 1 {
		pidns = fields[1]
	}
	return pid, pidns, nil
}

// ownPIDNamespace names this process's PID namespace (pid:[inode]).
func ownPIDNamespace() string {
	link, _ := os.Readlink("/proc/self/ns/pid")
	return link
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie is not alive.
	fields := strings.Fields(string(b))
	return len(fields) < 3 || fields[2] != "Z"
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
