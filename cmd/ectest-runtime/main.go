// Command ectest-runtime starts one of the project's embedded runtimes as a
// runtime started outside the suite, as a vendor's would be: the suite then
// reaches it only through -runtime-endpoint (make certify), and must install
// and start nothing itself. It is a tool for the suite's own self-tests and
// for trying the vendor path on a machine without a runtime of one's own:
//
//	ectest-runtime -runtime=containerd-2 -registry-addr=127.0.0.1:5078 -endpoint-file=/tmp/ep
//
// With -fault, the runtime is reached through the fault-injecting CRI proxy
// (fixtures/criproxy), whose version string marks every report made through
// it a SELF-TEST, never a conformance result. It prints the endpoint, runs
// until SIGINT or SIGTERM, then stops the runtime and removes what it made.
// The suite serves the sandbox (pause) image from its loopback registry, so
// the suite's -registry-addr must be this -registry-addr.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ectest/ectest/fixtures/criproxy"
	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/programs"
	"github.com/ectest/ectest/fixtures/registry"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/internal/atomicfile"
	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/runtimes/embedded"
)

// main first runs the program named by argv[0], if it is one of the
// suite's (fixtures/programs): the embedded runtimes link their helpers
// (cri-o's pinns and runc wrapper, containerd-2-crun's crun wrapper) to
// the running binary, this one.
func main() {
	programs.Dispatch()
	os.Exit(run())
}

// run returns the exit code after its deferred cleanup has run.
func run() int {
	name := flag.String("runtime", framework.DefaultRuntime, "the embedded runtime to start (ectest-install -list)")
	registryAddr := flag.String("registry-addr", "127.0.0.1:5078", "the suite's loopback registry (give the suite the same -registry-addr): the sandbox image comes from there")
	fault := flag.String("fault", "", "reach the runtime through the fault-injecting CRI proxy with this fault (a self-test; none forwards unchanged)")
	endpointFile := flag.String("endpoint-file", "", "write the CRI endpoint here once the runtime answers")
	logDir := flag.String("log-dir", "", "directory for the runtime's log (default: its run directory)")
	serveImages := flag.String("serve-images", "", "also serve the suite's test images from its loopback registry at -registry-addr while the runtime runs, and write their references here (JSON, role to reference): for another CRI test suite against the same runtime (make critest-compare); a suite run against this runtime then takes another -registry-addr")
	noNetwork := flag.Bool("no-network", false, "start the runtime without a CNI network configuration, as Debian's containerd is installed: a runtime whose Status says NetworkReady false (a self-test of a runtime that is not ready)")
	baseDir := flag.String("base-dir", "/var/lib/ectest/outside", "directory for the runtime's state, apart from the suites' embedded runtimes (/var/lib/ectest/embedded), which a suite sweeps")
	showVersion := buildinfo.Flag(flag.CommandLine, "ectest-runtime")
	flag.Parse()
	showVersion()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ectest-runtime: "+format+"\n", args...) }
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "ectest: "+strings.ReplaceAll(err.Error(), "\n", "; "))
		return code
	}
	flavor, err := embedded.LookupFlavor(*name)
	if err != nil {
		return fail(framework.ExitBadInput, err)
	}
	if *fault != "" {
		if _, err := criproxy.Lookup(*fault); err != nil {
			return fail(framework.ExitBadInput, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cache, err := os.UserCacheDir()
	if err != nil {
		return fail(framework.ExitRunFailed, err)
	}
	binDir, err := flavor.Install(ctx, filepath.Join(cache, "ectest"), logf)
	if err != nil {
		return fail(framework.ExitRunFailed, err)
	}
	opts := flavor.Options(binDir)
	opts.CNIBinDir, opts.RegistryAddr, opts.SandboxImage = framework.DefaultCNIBinDir(), *registryAddr, *registryAddr+"/ectest/pause:latest"
	opts.BaseDir, opts.NoNetwork = *baseDir, *noNetwork
	if *logDir != "" {
		opts.LogPath = filepath.Join(*logDir, flavor.DaemonName()+".log")
	}
	if *serveImages != "" {
		reg, err := registry.Start(*registryAddr)
		if err != nil {
			return fail(framework.ExitRunFailed, err)
		}
		defer reg.Close()
		set, err := images.BuildAndPush(ctx, reg.Addr(), images.BuildOptions{})
		if err != nil {
			return fail(framework.ExitRunFailed, err)
		}
		b, _ := json.Marshal(set)
		if err := atomicfile.WriteFile(*serveImages, append(b, '\n'), 0o644); err != nil {
			return fail(framework.ExitRunFailed, err)
		}
		logf("the suite's test images are served at %s: %s", reg.Addr(), *serveImages)
	}
	rt, err := embedded.Start(ctx, opts)
	if err != nil {
		return fail(framework.ExitRunFailed, err)
	}
	defer func() {
		if err := rt.Stop(); err != nil {
			logf("stopping the runtime: %v", err)
		}
	}()
	endpoint := rt.Endpoint()
	if *fault != "" {
		dir, err := os.MkdirTemp("", "ectest-runtime-proxy-")
		if err != nil {
			return fail(framework.ExitRunFailed, err)
		}
		defer os.RemoveAll(dir)
		p, err := criproxy.Start(filepath.Join(dir, "cri.sock"), strings.TrimPrefix(endpoint, "unix://"), *fault)
		if err != nil {
			return fail(framework.ExitRunFailed, err)
		}
		defer p.Stop()
		endpoint = p.Endpoint()
		logf("SELF-TEST: the runtime is reached through the fault-injecting CRI proxy, fault %s", *fault)
	}
	if *endpointFile != "" {
		if err := atomicfile.WriteFile(*endpointFile, []byte(endpoint+"\n"), 0o644); err != nil {
			return fail(framework.ExitRunFailed, err)
		}
	}
	fmt.Println(endpoint)
	logf("runtime %s answers at %s; SIGINT or SIGTERM stops it", flavor.Name, endpoint)
	<-ctx.Done()
	logf("stopping")
	return 0
}
