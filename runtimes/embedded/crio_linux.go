package embedded

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ectest/ectest/runtimes/catalog"
	"github.com/ectest/ectest/runtimes/embedded/crunwrapper"
	"github.com/ectest/ectest/runtimes/embedded/oomclamp"
	"github.com/ectest/ectest/runtimes/pinns"
)

// crioDaemon is CRI-O: BinDir's crio and runc (the flavor's builds),
// Debian's conmon from PATH, and the project's pinns, a link in the run
// directory to the running ectest binary (which runs runtimes/pinns under
// that name, fixtures/programs).
func crioDaemon(o Options) (*daemon, error) {
	if o.BinDir == "" {
		return nil, fmt.Errorf("embedded runtime: CRI-O is built by the suite (its flavor's programs), and no build directory was given")
	}
	bin := filepath.Join(o.BinDir, "crio")
	runc := filepath.Join(o.BinDir, catalog.Runc.Binary)
	if o.RuncBinary != "" {
		runc = o.RuncBinary
	}
	for _, p := range []string{bin, runc} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("embedded runtime: %w", err)
		}
	}
	conmon, err := exec.LookPath("conmon")
	if err != nil {
		return nil, fmt.Errorf("embedded runtime: conmon not found (Debian's conmon package): %w", err)
	}
	d := &daemon{name: "crio", bin: bin, socket: layout.crioSocket}
	d.prepare = func(l layout, o Options) error {
		if err := setUpPinns(l); err != nil {
			return err
		}
		wrapper, err := setUpOOMClamp(l, l.dir, runc)
		if err != nil {
			return err
		}
		d.args = crioArgs(l)
		d.env = crioEnv(l)
		crun := ""
		if o.has(catalog.Crun.Name) {
			// The crun handler: oomclamp (CRI-O's infra containers ask for
			// an oom_score_adj no process here may set) in front of
			// ectest-crun (crun on a hybrid cgroup host, as for
			// containerd-2-crun) in front of Debian's crun.
			if err := os.WriteFile(l.crunEmpty(), nil, 0o600); err != nil {
				return err
			}
			real, err := setUpCrun(l, o)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(l.crioCrunClampDir(), 0o700); err != nil {
				return err
			}
			if crun, err = setUpOOMClamp(l, l.crioCrunClampDir(), l.crunWrapper()); err != nil {
				return err
			}
			// conmon passes CRI-O's environment on to the runtime.
			d.env = append(d.env, crunwrapper.EnvCrun+"="+real)
		}
		d.dirs = []string{l.crioConfigDir(), l.crioStorage(), l.crioRunRoot(), l.crioNS(), l.crioRuncRoot(), l.dir + "/tmp", l.crioAttach()}
		d.files = crioFiles(l, o, wrapper, crun, conmon)
		if crun != "" {
			d.files[l.crunEmpty()] = ""
		}
		// The network is named by the run: at start CRI-O deletes the
		// attachments the host's CNI cache (/var/lib/cni, not configurable)
		// records for its network's name, whoever made them, and another
		// run's containerd may be using "ectest" at that moment.
		d.files[l.cniConf()+"/10-ectest.conflist"] = cniConfigNamed(l, "ectest-"+l.id)
		return nil
	}
	return d, nil
}

// setUpPinns links pinns, in the run directory, to the running binary and
// checks that it answers as pinns does: a binary that does not dispatch
// its programs (fixtures/programs) would run its own main instead.
func setUpPinns(l layout) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := os.Symlink(self, l.pinns()); err != nil {
		return err
	}
	// Without a directory pinns refuses, with its own prefix.
	out, _ := exec.Command(l.pinns()).CombinedOutput()
	if !strings.HasPrefix(string(out), pinns.ErrPrefix) {
		return fmt.Errorf("embedded runtime: %s (the running binary as %s) does not run the project's pinns: %s", l.pinns(), pinns.Name, strings.TrimSpace(string(out)))
	}
	return nil
}

// setUpOOMClamp links a handler's runtime, ectest-runc-oomclamp in dir (the
// run directory for runc), to the running binary, with the runtime it
// runs (runc, or crun's wrapper) named in the file next to it
// (runtimes/embedded/oomclamp), and returns the link.
func setUpOOMClamp(l layout, dir, runc string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	link := dir + "/" + oomclamp.Name
	if err := os.Symlink(self, link); err != nil {
		return "", err
	}
	if err := os.WriteFile(oomclamp.Real(link), []byte(runc+"\n"), 0o600); err != nil {
		return "", err
	}
	out, err := exec.Command(link, "--version").CombinedOutput()
	if err != nil || !(strings.HasPrefix(string(out), "runc version") || strings.HasPrefix(string(out), "crun version")) {
		return "", fmt.Errorf("embedded runtime: %s (the running binary as %s) does not run runc: %v: %s", link, oomclamp.Name, err, strings.TrimSpace(string(out)))
	}
	return link, nil
}
