package environment

import (
	"strings"
	"testing"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/runtimes/embedded"
)

// With -runtime-endpoint the host is a vendor's: whatever is missing, the
// suite never asks hostdeps to install (busyboxPlan's install is false), and
// a missing busybox is an error naming the ways to give one. The suite's
// own runtime at the default path always asks hostdeps, which installs
// busybox-static only when dpkg says it is missing.
func TestBusyboxPlanNeverInstallsForAnEndpoint(t *testing.T) {
	none := func(string) bool { return false }
	there := func(string) bool { return true }
	ep := "unix:///run/vendor/cri.sock"
	for _, c := range []struct {
		name     string
		cfg      framework.Config
		override images.Set
		exists   func(string) bool
		install  bool
		wantErr  string
	}{
		{"endpoint, default busybox missing", framework.Config{RuntimeEndpoint: ep, Busybox: images.DefaultBusybox}, nil, none, false, "nothing is installed when -runtime-endpoint is given"},
		{"endpoint, given busybox missing", framework.Config{RuntimeEndpoint: ep, Busybox: "/opt/busybox"}, nil, none, false, "install Debian's busybox-static, or give -busybox=PATH or -images-file"},
		{"endpoint, busybox there", framework.Config{RuntimeEndpoint: ep, Busybox: images.DefaultBusybox}, nil, there, false, ""},
		{"endpoint, images file names the debug image", framework.Config{RuntimeEndpoint: ep, Busybox: images.DefaultBusybox}, images.Set{images.Debug: "r/busybox:1"}, none, false, ""},
		{"embedded, default busybox missing", framework.Config{Busybox: images.DefaultBusybox}, nil, none, true, ""},
		{"embedded, default busybox there (hostdeps checks it is busybox-static)", framework.Config{Busybox: images.DefaultBusybox}, nil, there, true, ""},
		{"embedded, given busybox there", framework.Config{Busybox: "/opt/busybox"}, nil, there, false, ""},
		{"embedded, given busybox missing", framework.Config{Busybox: "/opt/busybox"}, nil, none, false, "-busybox /opt/busybox: no such file"},
		{"embedded, images file names the debug image", framework.Config{Busybox: images.DefaultBusybox}, images.Set{images.Debug: "r/busybox:1"}, none, false, ""},
	} {
		install, err := busyboxPlan(&c.cfg, c.override, c.exists)
		if install != c.install {
			t.Errorf("%s: install = %v, want %v", c.name, install, c.install)
		}
		if c.cfg.RuntimeEndpoint != "" && install {
			t.Errorf("%s: a run against a given endpoint would install busybox-static", c.name)
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.wantErr)
		}
	}
}

// A given endpoint never makes Up install an embedded runtime (its host
// packages or its builds), whichever -runtime and -embedded-containerd say.
func TestEndpointInstallsNoRuntime(t *testing.T) {
	for _, f := range embedded.Flavors {
		for _, containerd := range []string{framework.DefaultContainerd, "/opt/containerd"} {
			cfg := framework.Config{RuntimeEndpoint: "unix:///run/vendor/cri.sock", Runtime: f.Name, Containerd: containerd}
			if installsRuntime(&cfg, f) {
				t.Errorf("-runtime-endpoint with flavor %s, containerd %s: Up would install the flavor", f.Name, containerd)
			}
			cfg.RuntimeEndpoint = ""
			if want := containerd == framework.DefaultContainerd || len(f.Programs) > 0; installsRuntime(&cfg, f) != want {
				t.Errorf("embedded flavor %s, containerd %s: installsRuntime = %v, want %v", f.Name, containerd, !want, want)
			}
		}
	}
}
