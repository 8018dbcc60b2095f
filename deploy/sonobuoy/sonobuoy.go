// Package sonobuoy is the cluster suite's in-cluster form: the suite image
// (the static suite binary, busybox for its entry point and its debug
// image, kubectl for the kubectl specs), the sonobuoy plugin definition
// that runs it, its least-privilege RBAC, and, for the self-test that
// proves all of it on a kind cluster (make sonobuoy-selftest), sonobuoy's
// own image made from a sonobuoy binary built from the Go module proxy.
// cmd/ectest-sonobuoy is its command.
package sonobuoy

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"text/template"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
)

var (
	//go:embed plugin.yaml
	pluginTemplate string
	//go:embed rbac.yaml
	rbac string
	//go:embed run.sh
	runScript []byte
)

// Defaults of the plugin definition.
const (
	// DefaultRegistryPort is where the suite's registry listens on the
	// node the plugin pod runs on.
	DefaultRegistryPort = 5111
	// DefaultParallel is the suite's processes in the pod.
	DefaultParallel = 2
	// SuiteRepository is the suite image's repository.
	SuiteRepository = "ectest/cluster-suite"
	// SonobuoyVersion is the sonobuoy release the self-test proves the
	// plugin with; SonobuoyImage is its image as the project makes it.
	SonobuoyVersion = "v0.57.5"
	SonobuoyImage   = "ectest/sonobuoy:" + SonobuoyVersion
)

// SuiteImageRef is the suite image's reference for this build.
func SuiteImageRef() string {
	return SuiteRepository + ":" + regexp.MustCompile(`[^A-Za-z0-9_.-]`).ReplaceAllString(framework.Build().Version, "-")
}

// PluginOptions fill the plugin definition.
type PluginOptions struct {
	Image        string
	RegistryPort int
	Parallel     int
	// Flags are extra cluster-suite flags (space separated, no quotes).
	Flags string
}

// Plugin is the plugin definition for `sonobuoy run --plugin`.
func Plugin(o PluginOptions) (string, error) {
	if o.Image == "" {
		o.Image = SuiteImageRef()
	}
	if o.RegistryPort == 0 {
		o.RegistryPort = DefaultRegistryPort
	}
	if o.Parallel == 0 {
		o.Parallel = DefaultParallel
	}
	if o.RegistryPort < 1 || o.RegistryPort > 65535 || o.Parallel < 1 {
		return "", fmt.Errorf("-registry-port %d and -parallel %d: a port and at least one process", o.RegistryPort, o.Parallel)
	}
	if strings.ContainsAny(o.Flags+o.Image, "\"\\\n") {
		return "", fmt.Errorf("-flags and -image hold no quotes, backslashes or newlines")
	}
	t, err := template.New("plugin").Parse(pluginTemplate)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, o); err != nil {
		return "", err
	}
	return b.String(), nil
}

// RBAC is the plugin's service account and least-privilege RBAC, for
// `kubectl apply -f` before `sonobuoy run`.
func RBAC() string { return rbac }

// SuiteImage is the suite image: busybox (the entry point's shell, and
// the busybox the suite makes its debug image of), the static cluster
// suite binary at /ectest/cluster.test, the entry point /ectest/run.sh,
// and kubectl on PATH when given (without it the kubectl specs skip; the
// suite gives kubectl debug -it a pseudo-terminal itself).
func SuiteImage(suite, kubectl, busybox string) (v1.Image, error) {
	files, err := images.BusyboxFiles(busybox)
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(suite)
	if err != nil {
		return nil, fmt.Errorf("the suite binary: %w", err)
	}
	files = append(files,
		images.Entry{Path: "ectest", Mode: 0o755, Dir: true},
		images.Entry{Path: "ectest/cluster.test", Mode: 0o755, Data: bin},
		images.Entry{Path: "ectest/run.sh", Mode: 0o755, Data: runScript},
	)
	if kubectl != "" {
		k, err := os.ReadFile(kubectl)
		if err != nil {
			return nil, fmt.Errorf("kubectl: %w", err)
		}
		files = append(files,
			images.Entry{Path: "usr/local", Mode: 0o755, Dir: true},
			images.Entry{Path: "usr/local/bin", Mode: 0o755, Dir: true},
			images.Entry{Path: "usr/local/bin/kubectl", Mode: 0o755, Data: k},
		)
	}
	return images.Image(runtime.GOARCH, dedupe(files), []string{"/bin/sh", "/ectest/run.sh"})
}

// dedupe keeps the first entry of each path (a directory both the busybox
// layout and the suite's own files name).
func dedupe(files []images.Entry) []images.Entry {
	seen := map[string]bool{}
	var out []images.Entry
	for _, f := range files {
		p := strings.TrimSuffix(f.Path, "/")
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, f)
	}
	return out
}

// SonobuoyImageOf is sonobuoy's image (aggregator and worker) made of a
// sonobuoy binary, as its Dockerfile lays it out: /sonobuoy, plus /tmp.
func SonobuoyImageOf(binary string) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("the sonobuoy binary: %w", err)
	}
	files := append(images.Passwd(),
		images.Entry{Path: "tmp", Mode: 0o1777, Dir: true},
		images.Entry{Path: "sonobuoy", Mode: 0o755, Data: bin},
	)
	return images.Image(runtime.GOARCH, files, []string{"/sonobuoy"})
}
