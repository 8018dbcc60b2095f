// Command ectest-sonobuoy makes the cluster suite's in-cluster form
// (deploy/sonobuoy): the suite image, the sonobuoy plugin definition and
// its RBAC, and sonobuoy's own image from a sonobuoy binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/ectest/ectest/deploy/sonobuoy"
	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/kind/nodeimage"
)

var usageText = `usage: ectest-sonobuoy COMMAND [flags]
  image            build the suite image: -suite PATH (a static cluster.test: CGO_ENABLED=0 go test -c ./suites/cluster),
                   [-kubectl PATH] (without it the kubectl specs skip), [-busybox PATH] (default ` + images.DefaultBusybox + `),
                   [-ref REF] (default ` + sonobuoy.SuiteRepository + `:<version>), then -o ARCHIVE (a tarball for
                   ctr/docker load or kind's load-image) and/or -push (to REF's registry, with your docker credentials)
  sonobuoy-image   build sonobuoy's image (aggregator and worker) from a sonobuoy binary: -sonobuoy PATH [-ref REF]
                   (default ` + sonobuoy.SonobuoyImage + `) -o ARCHIVE and/or -push
  plugin           print the plugin definition for sonobuoy run --plugin: [-image REF] [-registry-port N] (default ` + fmt.Sprint(sonobuoy.DefaultRegistryPort) + `)
                   [-parallel N] (default ` + fmt.Sprint(sonobuoy.DefaultParallel) + `) [-flags "EXTRA SUITE FLAGS"]
  rbac             print the plugin's namespace, service account and least-privilege RBAC (kubectl apply -f)
  defaults         print the defaults as shell assignments (suite_image, sonobuoy_version, sonobuoy_image,
                   registry_port, kubernetes_version: the node image's release, whose kubectl the suite image carries)
  version          print this binary's version`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "-help" || os.Args[1] == "--help" {
		fmt.Println(usageText)
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	if os.Args[1] == "-version" || os.Args[1] == "--version" {
		os.Args[1] = "version" // the same line, as every binary answers -version
	}
	if err := run(ctx, os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "ectest-sonobuoy: "+strings.ReplaceAll(err.Error(), "\n", " "))
		var bad badInput
		if errors.As(err, &bad) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type badInput struct{ error }

func run(ctx context.Context, cmd string, args []string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.Usage = func() {}
	fs.SetOutput(discard{})
	var (
		suite    = fs.String("suite", "", "")
		kubectl  = fs.String("kubectl", "", "")
		busybox  = fs.String("busybox", images.DefaultBusybox, "")
		binary   = fs.String("sonobuoy", "", "")
		ref      = fs.String("ref", "", "")
		out      = fs.String("o", "", "")
		push     = fs.Bool("push", false, "")
		image    = fs.String("image", "", "")
		port     = fs.Int("registry-port", 0, "")
		parallel = fs.Int("parallel", 0, "")
		flags    = fs.String("flags", "", "")
	)
	if err := fs.Parse(args); err != nil {
		return badInput{fmt.Errorf("%s: %v (ectest-sonobuoy help lists the commands and flags)", cmd, err)}
	}
	if fs.NArg() > 0 {
		return badInput{fmt.Errorf("%s: unexpected arguments %q (ectest-sonobuoy help lists the commands and flags)", cmd, fs.Args())}
	}
	switch cmd {
	case "image", "sonobuoy-image":
		if (cmd == "image" && *suite == "") || (cmd == "sonobuoy-image" && *binary == "") || (*out == "" && !*push) {
			return badInput{fmt.Errorf("%s needs %s and -o ARCHIVE or -push (ectest-sonobuoy help)", cmd, map[string]string{"image": "-suite", "sonobuoy-image": "-sonobuoy"}[cmd])}
		}
		var img v1.Image
		var err error
		if cmd == "image" {
			if *ref == "" {
				*ref = sonobuoy.SuiteImageRef()
			}
			img, err = sonobuoy.SuiteImage(*suite, *kubectl, *busybox)
		} else {
			if *ref == "" {
				*ref = sonobuoy.SonobuoyImage
			}
			img, err = sonobuoy.SonobuoyImageOf(*binary)
		}
		if err != nil {
			return err
		}
		return write(ctx, img, *ref, *out, *push)
	case "plugin":
		p, err := sonobuoy.Plugin(sonobuoy.PluginOptions{Image: *image, RegistryPort: *port, Parallel: *parallel, Flags: *flags})
		if err != nil {
			return badInput{err}
		}
		fmt.Print(p)
		return nil
	case "rbac":
		fmt.Print(sonobuoy.RBAC())
		return nil
	case "defaults":
		fmt.Printf("suite_image=%s\nsonobuoy_version=%s\nsonobuoy_image=%s\nregistry_port=%d\nkubernetes_version=%s\n",
			sonobuoy.SuiteImageRef(), sonobuoy.SonobuoyVersion, sonobuoy.SonobuoyImage, sonobuoy.DefaultRegistryPort, nodeimage.DefaultKubernetesVersion)
		return nil
	case "version":
		fmt.Println(framework.VersionLine())
		return nil
	}
	return badInput{fmt.Errorf("unknown command %q (ectest-sonobuoy help lists the commands)", cmd)}
}

// write saves img as ref into an archive and/or pushes it there.
func write(ctx context.Context, img v1.Image, ref, out string, push bool) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return badInput{fmt.Errorf("-ref %q: %v", ref, err)}
	}
	if out != "" {
		if err := tarball.WriteToFile(out, tag, img); err != nil {
			return fmt.Errorf("write %s: %w", out, err)
		}
		fmt.Fprintf(os.Stderr, "ectest-sonobuoy: %s written to %s\n", ref, out)
	}
	if push {
		if err := remote.Write(tag, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
		fmt.Fprintf(os.Stderr, "ectest-sonobuoy: %s pushed\n", ref)
	}
	fmt.Println(strings.TrimSpace(ref))
	return nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
