package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/ectest/ectest/kind/nodeimage"
	. "github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/version"
)

// A kubectl of a given release, for the kubectl debug profile specs. The
// node-image builder caches kubectl per release (a full Kubernetes build,
// ~/.cache/ectest/bin/kubernetes-<v>-<key>/kubectl, or kubectl alone,
// kubernetes-<v>-kubectl-<key>/kubectl, built by `ectest-kind kubectl` or
// `make kubectl-profiles`); the specs only look, they never build.
type kubectlBinary struct {
	Path    string
	Release string // what the binary says it is (kubectl version --client)
}

// kubectlReleasesEnv names the kubectl releases the profile matrix runs
// with (space or comma separated, e.g. "v1.35.8 v1.36.4"); unset, it runs
// with the kubectl the suite found for the server (env.Kubectl).
const kubectlReleasesEnv = "KUBECTL_RELEASES"

// matrixKubectlReleases are the releases the profile matrix's entries are
// made for, at tree construction ("" is the kubectl in use). Every
// parallel process sees the same environment, so the same tree.
func matrixKubectlReleases() []string {
	f := strings.FieldsFunc(os.Getenv(kubectlReleasesEnv), func(r rune) bool { return r == ',' || r == ' ' })
	if len(f) == 0 {
		return []string{""}
	}
	return f
}

// defaultKubectlReleases are the releases the default-profile spec asks:
// KUBECTL_RELEASES, else versions.yaml's apiServers (v1.33.13 to v1.37.1).
func defaultKubectlReleases() []string {
	if f := matrixKubectlReleases(); f[0] != "" {
		return f
	}
	r, err := nodeimage.KnownReleases()
	if err != nil {
		panic(err) // the embedded file is checked by kind/nodeimage's tests
	}
	return r.APIServers
}

var (
	kubectlMu    sync.Mutex
	kubectlCache = map[string]kubectlBinary{}
)

// kubectlOf finds the cached kubectl of release ("" for the one the suite
// found for the server) or skips, saying how to build it.
func kubectlOf(ctx context.Context, release string) kubectlBinary {
	GinkgoHelper()
	if release == "" {
		if env.Kubectl == "" {
			Skip("no kubectl within one minor version of the server " + env.ServerVersion + " (make kubectl-profiles builds kubectls of every release)")
		}
		kb, err := kubectlVersion(ctx, env.Kubectl)
		if err != nil {
			Skip(fmt.Sprintf("kubectl %s: %v", env.Kubectl, err))
		}
		return kb
	}
	v, err := nodeimage.ParseVersion(release)
	if err != nil {
		Fail(fmt.Sprintf("%s=%q: %v", kubectlReleasesEnv, release, err))
	}
	kubectlMu.Lock()
	defer kubectlMu.Unlock()
	if kb, ok := kubectlCache[v.String()]; ok {
		return kb
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		Skip("kubectl " + v.String() + ": no user cache dir: " + err.Error())
	}
	found, _ := filepath.Glob(filepath.Join(cache, "ectest", "bin", "kubernetes-"+v.String()+"-*", "kubectl"))
	sort.Strings(found)
	for _, p := range found {
		kb, err := kubectlVersion(ctx, p)
		if err == nil && kb.Release == v.String() {
			kubectlCache[v.String()] = kb
			return kb
		}
	}
	Skip(fmt.Sprintf("kubectl %s is not built here (looked for %s): `go run ./cmd/ectest-kind kubectl %s` or `make kubectl-profiles` builds it (about 1 to 2 minutes cold)",
		v, filepath.Join(cache, "ectest", "bin", "kubernetes-"+v.String()+"-*", "kubectl"), v))
	return kubectlBinary{}
}

func kubectlVersion(ctx context.Context, path string) (kubectlBinary, error) {
	out, err := exec.CommandContext(ctx, path, "version", "--client", "-o", "json").Output()
	if err != nil {
		return kubectlBinary{}, err
	}
	var cv struct {
		ClientVersion struct{ GitVersion string } `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &cv); err != nil {
		return kubectlBinary{}, err
	}
	if _, err := version.ParseGeneric(cv.ClientVersion.GitVersion); err != nil {
		return kubectlBinary{}, err
	}
	return kubectlBinary{Path: path, Release: cv.ClientVersion.GitVersion}, nil
}

// minor is the binary's minor version.
func (k kubectlBinary) minor() int {
	v, err := version.ParseGeneric(k.Release)
	if err != nil {
		return 0
	}
	return int(v.Minor())
}

// run runs kubectl in the spec's namespace; the exit status is kept apart
// from an error starting it.
func (k kubectlBinary) run(ctx context.Context, namespace string, args ...string) (out string, exitCode int) {
	GinkgoHelper()
	argv := append([]string{"--kubeconfig", env.Kubeconfig, "-n", namespace}, args...)
	cmd := exec.CommandContext(ctx, k.Path, argv...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(b), ee.ExitCode()
		}
		Fail(fmt.Sprintf("run kubectl %s %q: %v", k.Release, args, err))
	}
	return string(b), 0
}
