// Command ectest-kind prepares hosts, builds offline node images and runs
// the suite's kind clusters. The Makefile's cluster targets call it; the
// logic lives in the kind package.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ectest/ectest/fixtures/criproxy"
	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/fixtures/ocifault"
	"github.com/ectest/ectest/fixtures/programs"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/environment"
	"github.com/ectest/ectest/internal/buildinfo"
	"github.com/ectest/ectest/internal/nodebuild"
	"github.com/ectest/ectest/kind"
	"github.com/ectest/ectest/kind/host"
	"github.com/ectest/ectest/kind/nodeimage"
)

var usageText = `usage: ectest-kind COMMAND [flags]
  prepare-host   install and configure a Docker engine for kind on this host (an engine ectest did not set up only with
                 ECTEST_DOCKER_CONFIGURE=1: docs/host.md)
  host-restore   undo what prepare-host changed on this host's Docker engine (docs/host.md)
  node-image     build the offline node image (prints its reference; with -topology, every node's)
  suite-images   the same for a cluster-suite run: takes the suite's own flags (-kubernetes-version, -node-runtime,
                 -topology, ...) and builds the node images the suite will make its cluster from (none with
                 -kubeconfig or -kind-node-image); the suite binary finds them, it does not build them
  up             create (or reuse) the kind cluster (prints its kubeconfig path)
  smoke          check the cluster runs a target pod and an ephemeral container pulled at debug time
  down           delete the kind cluster
  load-image ARCHIVE...
                 load image archives (go-containerregistry's or docker save's) into every node of the (running or new)
                 cluster, for pods that name images no registry serves (the sonobuoy self-test's)
  trust-registry HOST:PORT...
                 let every node pull from a plain-HTTP registry at HOST:PORT (the recipe of docs/cluster.md, done on
                 the kind nodes): for a suite run against the cluster as an existing one, with -registry-addr
  node-runtimes  list the node runtimes -node-runtime can name
  kubectl        build kubectl alone for each release named (default: versions.yaml's apiServers; or KUBECTL_RELEASES,
                 space or comma separated), cached beside the node-image builder's Kubernetes builds, where the
                 cluster suite's kubectl debug profile specs find them; prints "<release> <path>" per release
flags:
  -kubernetes-version vX.Y.Z   (default ` + nodeimage.DefaultKubernetesVersion + `)
  -node-runtime NAME           the built node image's container runtime (default ` + nodeimage.DefaultNodeRuntime + `; ` + "`ectest-kind node-runtimes`" + ` lists them)
  -kind-node-image IMAGE       use this node image (e.g. a stock kindest/node) instead of building one
  -topology single|skew|skew-pair
                               the cluster's nodes (default single): skew is a control plane of the -kubernetes-version
                               and one worker per kubelet of kind/nodeimage/versions.yaml's skewKubelets, skew-pair one
                               worker of the previous minor; workers are labelled ` + kind.LabelKubeletVersion + `
  -name NAME                   cluster name (default ` + kind.DefaultName + `, ` + kind.TopologySkew.DefaultName() + `, ` + kind.TopologySkewPair.DefaultName() + ` by topology)
  -cri-proxy-fault FAULT       up/smoke: a SELF-TEST cluster, with the fault-injecting CRI proxy (fixtures/criproxy)
                               between the kubelet and containerd, injecting FAULT (none forwards everything); for a
                               fault of the OCI runtime wrapper (fixtures/ocifault, oci-*), the node's containerd runs
                               the wrapper with it as its runc, and the proxy forwards everything
  -retain-on-failure           up: keep the nodes of a creation that failed, to look into; down removes them
  -report-dir DIR              where kind's logs go when smoke fails (default $ARTIFACTS or _artifacts)`

func main() {
	programs.Dispatch()
	criproxy.Dispatch() // the node's CRI proxy is a copy of this binary
	ocifault.Dispatch() // so is the OCI runtime wrapper of a cluster with an OCI fault
	buildinfo.Arg("ectest-kind")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usageText)
		os.Exit(2)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ectest-kind: "+format+"\n", args...) }
	if os.Args[1] == "kubectl" {
		if err := kubectls(ctx, os.Args[2:], logf); err != nil {
			fmt.Fprintln(os.Stderr, "ectest-kind: "+strings.ReplaceAll(err.Error(), "\n", "\n  "))
			os.Exit(1)
		}
		return
	}
	if os.Args[1] == "suite-images" {
		if err := suiteImages(ctx, os.Args[2:], logf); err != nil {
			fmt.Fprintln(os.Stderr, "ectest-kind: "+strings.ReplaceAll(err.Error(), "\n", "\n  "))
			os.Exit(1)
		}
		return
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ContinueOnError)
	var o kind.Options
	fs.StringVar(&o.KubernetesVersion, "kubernetes-version", nodeimage.DefaultKubernetesVersion, "")
	fs.StringVar(&o.NodeImage, "kind-node-image", "", "")
	fs.StringVar(&o.NodeRuntime, "node-runtime", nodeimage.DefaultNodeRuntime, "")
	fs.StringVar(&o.Name, "name", "", "")
	topology := fs.String("topology", string(kind.TopologySingle), "")
	reportDir := fs.String("report-dir", defaultReportDir(), "")
	fault := fs.String("cri-proxy-fault", "", "")
	fs.BoolVar(&o.RetainOnFailure, "retain-on-failure", false, "")
	fs.Usage = func() { fmt.Fprintln(os.Stderr, usageText) }
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
	}
	if _, err := nodeimage.LookupNodeRuntime(o.NodeRuntime); err != nil {
		fmt.Fprintln(os.Stderr, "ectest-kind: "+err.Error())
		os.Exit(2)
	}
	if *fault != "" {
		f, err := criproxy.Lookup(*fault)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ectest-kind: -cri-proxy-fault: "+err.Error())
			os.Exit(2)
		}
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ectest-kind: the CRI proxy is a copy of this binary: "+err.Error())
			os.Exit(1)
		}
		o.CRIProxy = &kind.CRIProxy{Fault: *fault, Binary: self}
		if f.OCIFault != "" {
			o.OCIFault = &kind.OCIFault{Fault: f.OCIFault, Binary: self, Busybox: images.DefaultBusybox}
		}
	}
	t, err := kind.ParseTopology(*topology)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ectest-kind: -topology: "+err.Error())
		os.Exit(2)
	}
	o.Topology = t
	if o.Name == "" {
		o.Name = t.DefaultName()
	}
	o.Keep, o.Log, o.Images = true, logf, &nodebuild.Builder{Log: logf}
	if err := run(ctx, os.Args[1], o, *reportDir, fs.Args(), logf); err != nil {
		fmt.Fprintln(os.Stderr, "ectest-kind: "+strings.ReplaceAll(err.Error(), "\n", "\n  "))
		os.Exit(1)
	}
}

// suiteImages builds the node images a cluster-suite run given args (the
// suite's flags; Ginkgo's are skipped) makes its cluster from, by the
// suite's own flag set and checks.
func suiteImages(ctx context.Context, args []string, logf func(string, ...any)) error {
	var cfg framework.Config
	fs := flag.NewFlagSet("suite-images", flag.ContinueOnError)
	environment.RegisterFlags(fs, &cfg, framework.SuiteCluster)
	var own []string
	for _, a := range args {
		if !strings.HasPrefix(strings.TrimLeft(a, "-"), "ginkgo.") {
			own = append(own, a)
		}
	}
	if err := fs.Parse(own); err != nil {
		return err
	}
	if err := errors.Join(cfg.Validate(), environment.CheckConfig(&cfg)); err != nil {
		return err
	}
	if cfg.Kubeconfig != "" || cfg.KindNodeImage != "" {
		logf("suite-images: the run uses -kubeconfig or -kind-node-image: no node image to build")
		return nil
	}
	t, err := kind.ParseTopology(cfg.Topology)
	if err != nil {
		return fmt.Errorf("-topology: %w", err)
	}
	o := kind.Options{KubernetesVersion: cfg.KubernetesVersion, NodeRuntime: cfg.NodeRuntime, Topology: t}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = nodeimage.DefaultKubernetesVersion
	}
	if o.NodeRuntime == "" {
		o.NodeRuntime = nodeimage.DefaultNodeRuntime
	}
	return run(ctx, "node-image", o, "", nil, logf)
}

// kubectls builds kubectl alone (one release after another; each about 1 to
// 2 minutes cold on 2 cores) for the releases given as arguments, or in
// KUBECTL_RELEASES, or versions.yaml's apiServers. The builds are cached
// by the node-image builder (~/.cache/ectest/bin/kubernetes-<v>-kubectl-<key>,
// or a full build of that release), where the suite looks for them.
func kubectls(ctx context.Context, args []string, logf func(string, ...any)) error {
	src := args
	if len(src) == 0 {
		src = []string{os.Getenv("KUBECTL_RELEASES")}
	}
	var names []string
	for _, a := range src {
		names = append(names, strings.FieldsFunc(a, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	if len(names) == 0 {
		r, err := nodeimage.KnownReleases()
		if err != nil {
			return err
		}
		names = r.APIServers
	}
	b := &nodebuild.Builder{Log: logf}
	for _, n := range names {
		v, err := nodeimage.ParseVersion(n)
		if err != nil {
			return err
		}
		dir, err := b.KubernetesComponents(ctx, v, "kubectl")
		if err != nil {
			return err
		}
		fmt.Printf("%s %s\n", v, filepath.Join(dir, "kubectl"))
	}
	return nil
}

func run(ctx context.Context, cmd string, o kind.Options, reportDir string, args []string, logf func(string, ...any)) error {
	switch cmd {
	case "load-image", "trust-registry":
		if len(args) == 0 {
			return fmt.Errorf("%s needs at least one argument\n%s", cmd, usageText)
		}
		// On the cluster there is: these make none.
		if running, err := kind.Running(o.Name); err != nil {
			return err
		} else if !running {
			return fmt.Errorf("%s: no kind cluster %q runs: make it first (ectest-kind up -name %s)", cmd, o.Name, o.Name)
		}
		c, err := kind.Up(ctx, o)
		if err != nil {
			return err
		}
		for _, a := range args {
			if cmd == "load-image" {
				err = c.LoadImageArchive(a)
			} else {
				err = c.ConfigureRegistry(a)
			}
			if err != nil {
				return err
			}
			logf("%s %s: done on every node of %s", cmd, a, c.Name)
		}
		return nil
	case "prepare-host":
		return host.Prepare(ctx, host.Options{Log: logf})
	case "host-restore":
		return host.Restore(ctx, logf)
	case "node-image":
		v, err := nodeimage.ParseVersion(o.KubernetesVersion)
		if err != nil {
			return err
		}
		rt, err := nodeimage.LookupNodeRuntime(o.NodeRuntime)
		if err != nil {
			return err
		}
		if err := host.Prepare(ctx, host.Options{Log: logf}); err != nil {
			return err
		}
		workers, err := o.Topology.Workers(v)
		if err != nil {
			return err
		}
		b := &nodebuild.Builder{Log: logf}
		ref, err := b.NodeImage(ctx, v, rt)
		if err != nil {
			return err
		}
		fmt.Println(ref)
		for _, w := range workers {
			if ref, err = b.WorkerImage(ctx, v, w, rt); err != nil {
				return err
			}
			fmt.Println(ref)
		}
		return nil
	case "up":
		c, err := kind.Up(ctx, o)
		if err != nil {
			return err
		}
		fmt.Println(c.Kubeconfig)
		logf("use it with: export KUBECONFIG=%s", c.Kubeconfig)
		return nil
	case "smoke":
		c, err := kind.Up(ctx, o)
		if err != nil {
			return err
		}
		if err := kind.Smoke(ctx, c, logf); err != nil {
			dir := filepath.Join(reportDir, "kind-logs")
			if lerr := c.ExportLogs(dir); lerr != nil {
				logf("exporting kind's logs: %v", lerr)
			} else {
				logf("kind's logs exported to %s", dir)
			}
			return err
		}
		return nil
	case "down":
		return kind.Delete(o.Name, logf)
	case "node-runtimes":
		for _, rt := range nodeimage.NodeRuntimes {
			classes := ""
			if len(rt.RuntimeClasses) > 0 {
				classes = " (RuntimeClass " + strings.Join(rt.RuntimeClassNames(), ", ") + ")"
			}
			fmt.Printf("%-20s %s%s\n", rt.Name, rt.Description, classes)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usageText)
}

func defaultReportDir() string {
	if a := os.Getenv("ARTIFACTS"); a != "" {
		return a
	}
	return "_artifacts"
}
