package hostdeps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Installing a package must not start or enable a service: the host is
// someone's machine, and a Debian package with a service (containerd,
// docker.io) starts it and enables it at boot from its maintainer scripts.
// Two of Debian's documented mechanisms keep it from doing so:
//
//   - starting: invoke-rc.d and deb-systemd-invoke, through which
//     maintainer scripts start services, ask /usr/sbin/policy-rc.d first,
//     and exit code 101 forbids the action (init-system-helpers'
//     README.policy-rc.d). For the install's duration a policy-rc.d that
//     exits 101 is put in place; the host's own, if any, is moved aside and
//     moved back, the very same file.
//   - enabling: deb-systemd-helper enable and update-rc.d defaults run
//     regardless of any policy, so the links that enable services at boot
//     are listed before and after the install, and each new one is disabled
//     again as an administrator would: systemctl disable (which works
//     without a running systemd, and which Debian's maintainer scripts
//     respect: deb-systemd-helper's was-enabled finds the links gone and
//     upgrades leave the unit disabled) and update-rc.d disable for System
//     V init scripts. (deb-systemd-helper itself refuses to run outside
//     dpkg.) Any new link still there is then removed.

// policyRCD is Debian's policy layer for starting services.
var policyRCD = "/usr/sbin/policy-rc.d"

// policyMarker marks ectest's policy-rc.d: found at a later install, it is
// the leftover of a process killed mid-install, and the host's is restored.
const policyMarker = "# ectest (internal/hostdeps): no service starts while ectest installs packages"

// policyScript forbids every action.
const policyScript = "#!/bin/sh\n" + policyMarker + "\n# Removed, and the host's own policy-rc.d (if any) put back, when the install ends.\nexit 101\n"

// savedSuffix names where the host's own policy-rc.d waits meanwhile.
const savedSuffix = ".ectest-saved"

// forbidServiceStarts puts a policy-rc.d that exits 101 at path and
// returns what puts the host's back: its own file (moved aside, then back:
// the same inode, content and mode), or none.
func forbidServiceStarts(path string) (restore func() error, err error) {
	if err := recoverPolicy(path); err != nil {
		return nil, err
	}
	saved := path + savedSuffix
	had := false
	if _, err := os.Lstat(path); err == nil {
		if err := os.Rename(path, saved); err != nil {
			return nil, fmt.Errorf("moving the host's %s aside: %w", path, err)
		}
		had = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	restore = func() error {
		if had {
			if err := os.Rename(saved, path); err != nil {
				return fmt.Errorf("putting the host's %s back (it is at %s): %w", path, saved, err)
			}
			return nil
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.WriteFile(path, []byte(policyScript), 0o755); err != nil {
		return nil, errors.Join(fmt.Errorf("writing %s: %w", path, err), restore())
	}
	// WriteFile's mode is subject to the umask; the script must run.
	if err := os.Chmod(path, 0o755); err != nil {
		return nil, errors.Join(err, restore())
	}
	return restore, nil
}

// recoverPolicy undoes what a process killed mid-install left at path:
// ectest's policy-rc.d, and the host's own moved aside.
func recoverPolicy(path string) error {
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), policyMarker) {
		return nil // the host's own, or none
	}
	saved := path + savedSuffix
	if _, err := os.Lstat(saved); err == nil {
		return os.Rename(saved, path)
	}
	return os.Remove(path)
}

// bootLinks are the links that enable services at boot, under root:
// systemd's (etc/systemd/system/*.wants/*, *.requires/*) and System V
// init's start links (etc/rc?.d/S*), as paths relative to root.
func bootLinks(root string) map[string]bool {
	out := map[string]bool{}
	for _, pattern := range []string{"etc/systemd/system/*.wants/*", "etc/systemd/system/*.requires/*", "etc/rc?.d/S*"} {
		matches, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, m := range matches {
			rel, err := filepath.Rel(root, m)
			if err == nil {
				out[filepath.ToSlash(rel)] = true
			}
		}
	}
	return out
}

var sysvStart = regexp.MustCompile(`^S[0-9]*(.+)$`)

// newlyEnabled are the systemd units and System V init scripts whose boot
// links are in after but not in before, sorted, once each.
func newlyEnabled(before, after map[string]bool) (units, scripts []string) {
	seenU, seenS := map[string]bool{}, map[string]bool{}
	for link := range after {
		if before[link] {
			continue
		}
		dir, base := filepath.Dir(filepath.FromSlash(link)), filepath.Base(link)
		if strings.HasPrefix(filepath.ToSlash(dir), "etc/systemd/") {
			if !seenU[base] {
				seenU[base] = true
				units = append(units, base)
			}
			continue
		}
		if m := sysvStart.FindStringSubmatch(base); m != nil && !seenS[m[1]] {
			seenS[m[1]] = true
			scripts = append(scripts, m[1])
		}
	}
	sort.Strings(units)
	sort.Strings(scripts)
	return units, scripts
}

// disableAtBoot disables again what the install enabled (the difference
// of bootLinks before and after it, under /), and says what it disabled.
func disableAtBoot(ctx context.Context, before map[string]bool, logf func(string, ...any)) error {
	after := bootLinks("/")
	units, scripts := newlyEnabled(before, after)
	var errs []error
	if _, err := exec.LookPath("systemctl"); err == nil {
		for _, u := range units {
			if out, err := exec.CommandContext(ctx, "systemctl", "disable", "--no-reload", u).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("systemctl disable %s: %v: %s", u, err, lastLines(string(out), 3)))
			}
		}
	}
	if _, err := exec.LookPath("update-rc.d"); err == nil {
		for _, s := range scripts {
			if out, err := exec.CommandContext(ctx, "update-rc.d", s, "disable").CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("update-rc.d %s disable: %v: %s", s, err, lastLines(string(out), 3)))
			}
		}
	}
	// Whatever a helper left (or could not run for), the links go.
	for link := range after {
		if !before[link] {
			if err := os.Remove(filepath.Join("/", link)); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if u, s := newlyEnabled(before, bootLinks("/")); len(u)+len(s) > 0 {
		errs = append(errs, fmt.Errorf("still enabled at boot after disabling: %s", strings.Join(append(u, s...), " ")))
	}
	if what := append(units, scripts...); len(what) > 0 {
		logf("host packages: their services were neither started nor left enabled at boot: %s (systemctl enable or update-rc.d NAME enable, to have them)", strings.Join(what, " "))
	}
	return errors.Join(errs...)
}
