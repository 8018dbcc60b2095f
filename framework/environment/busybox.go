package environment

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/ectest/ectest/fixtures/images"
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/internal/hostdeps"
)

// busyboxPlan says whether buildImages asks hostdeps for Debian's
// busybox-static (hostdeps.Ensure installs it only when dpkg says it is
// missing: a dynamic /bin/busybox from Debian's busybox is not it), given
// the images file's Linux set (override) and whether a file exists. Only
// the suite's own runtime at the default path installs; with
// -runtime-endpoint the host is a vendor's and nothing is installed
// (CheckConfig's checkVendorBusybox has said, before any spec, what is
// missing); a -busybox that is not there is bad input.
func busyboxPlan(c *framework.Config, override images.Set, exists func(string) bool) (install bool, err error) {
	if override[images.Debug] != "" {
		return false, nil // no busybox is read (BuildOptions.NoDebug)
	}
	if c.RuntimeEndpoint != "" {
		if !exists(c.Busybox) {
			return false, fmt.Errorf("the suite's debug image is made of a static busybox and there is none at %s: install Debian's busybox-static, or give -busybox=PATH or -images-file with a debug image (nothing is installed when -runtime-endpoint is given)", c.Busybox)
		}
		return false, nil
	}
	if c.Busybox != images.DefaultBusybox {
		if !exists(c.Busybox) {
			return false, fmt.Errorf("-busybox %s: no such file (a static busybox for the debug image; or give -images-file with a debug image)", c.Busybox)
		}
		return false, nil
	}
	return true, nil
}

// fileExists is busyboxPlan's exists on the host.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// CheckBusybox is the bad input busyboxPlan finds before any spec starts
// for the suite's own runtime: a -busybox that is not there (the suite
// builds its Linux images only where it runs on Linux). With
// -runtime-endpoint, CheckConfig (checkVendorBusybox) checks the busybox.
// Suites hand it to Main.
func CheckBusybox(c *framework.Config) error {
	if runtime.GOOS != "linux" || c.RuntimeEndpoint != "" {
		return nil
	}
	f, err := ImagesFile(c)
	if err != nil {
		return nil // CheckConfig says what is wrong with it
	}
	_, err = busyboxPlan(c, f.For("linux", 0), fileExists)
	return err
}

// checkVendorBusybox: with -runtime-endpoint (a vendor's runtime), nothing is
// installed on the host, so the static busybox the debug image is made of
// must be there already, unless an images file names a debug image.
func checkVendorBusybox(c *framework.Config) error {
	if c.Suite != framework.SuiteCRI || c.RuntimeEndpoint == "" || runtime.GOOS != "linux" {
		return nil
	}
	if f, err := ImagesFile(c); err == nil && f != nil && f.For("linux", 0)[images.Debug] != "" {
		return nil
	}
	missing := ""
	if _, err := os.Stat(c.Busybox); err != nil {
		missing = c.Busybox + " does not exist"
	} else if _, err := exec.LookPath("dpkg-query"); err == nil && c.Busybox == images.DefaultBusybox {
		if pkgs := hostdeps.Missing(context.Background(), hostdeps.DebugImage); len(pkgs) > 0 {
			missing = "Debian's " + strings.Join(pkgs, " ") + " is not installed (" + c.Busybox + " is not the static one)"
		}
	}
	if missing == "" {
		return nil
	}
	return fmt.Errorf("the debug image is built from a static busybox and %s; nothing is installed when -runtime-endpoint is given: install it (apt-get install busybox-static), or give -busybox=PATH or a debug image in -images-file", missing)
}
