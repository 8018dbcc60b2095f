package cri

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ectest/ectest/framework/oracle"
	"github.com/onsi/ginkgo/v2"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// cgroupRoot holds every sandbox's cgroup parent.
const cgroupRoot = "/ectest"

// PodCgroupParent is the cgroup parent of the sandbox called name in run
// runID: one of its own, as the kubelet gives every pod (cgroupfs form;
// containerd, CRI-O and Docker put each container below it), below one of
// the run's, which the run's end removes whatever its specs left (an
// interrupted spec's cleanup may not have run).
func PodCgroupParent(runID, name string) string { return path.Join(cgroupRoot, runID, name) }

// CgroupParent is the cgroup parent the sandbox asked for ("" for none).
func (sb *Sandbox) CgroupParent() string { return sb.Config.GetLinux().GetCgroupParent() }

// CgroupsOutside lists where p is charged outside parent: each hierarchy
// that charges resources (oracle.Process.ChargedCgroups) whose path is
// neither parent nor below it. An error when p's cgroups were not read.
func CgroupsOutside(p oracle.Process, parent string) ([]string, error) {
	if p.Cgroups == nil {
		return nil, fmt.Errorf("the cgroups of PID %d were not read", p.PID)
	}
	charged := p.ChargedCgroups()
	if len(charged) == 0 {
		return nil, fmt.Errorf("PID %d is charged to no cgroup hierarchy: %q", p.PID, p.Cgroups)
	}
	var keys []string
	for k := range charged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		got := charged[k]
		if got == parent || strings.HasPrefix(got, parent+"/") {
			continue
		}
		name := k
		if k == "" {
			name = "unified"
		}
		out = append(out, fmt.Sprintf("%s cgroup %q is not below the sandbox's parent %q", name, got, parent))
	}
	return out, nil
}

// removePodCgroup removes the sandbox's own cgroup parent from every
// cgroup hierarchy of this machine once the sandbox is gone, as the
// kubelet removes a pod's: runtimes remove only their containers'. Only
// an empty directory goes (a monitor such as conmon may leave it a moment
// after the removal); none is there for a remote runtime. What stays is
// noted, never an error: processes left behind are the leak checks' to
// judge.
func (s *Session) removePodCgroup(cfg *runtimeapi.PodSandboxConfig) {
	parent := cfg.GetLinux().GetCgroupParent()
	if !strings.HasPrefix(parent, cgroupRoot+"/") || !strings.HasPrefix(s.Endpoint, "unix://") {
		return
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return // no cgroup hierarchy to read: nothing of ours there
	}
	if left := removeEmptyCgroups(mounts, parent, s.Timeouts.Poll, s.Timeouts.ProcessStop); len(left) > 0 {
		ginkgo.GinkgoWriter.Printf("ectest: the sandbox's cgroup parent stays: %s\n", strings.Join(left, "; "))
	}
}

// removeEmptyCgroups removes dir (a cgroup path) and every directory below
// it, deepest first, from each hierarchy mounted at mounts: only empty
// ones go (rmdir), asked again while the kernel says busy (a monitor such
// as conmon leaves a moment after the removal) within settle. It returns
// what stays.
func removeEmptyCgroups(mounts []string, dir string, poll, settle time.Duration) []string {
	var left []string
	for _, m := range mounts {
		root := filepath.Join(m, dir)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			var err error
			remove := func() {
				_ = wait.PollUntilContextTimeout(context.Background(), poll, settle, true, func(context.Context) (bool, error) {
					err = os.Remove(dirs[i])
					return !errors.Is(err, syscall.EBUSY), nil
				})
			}
			remove()
			if errors.Is(err, syscall.EBUSY) && endProcessesIn(dirs[i]) {
				// Processes no container of the runtime's holds any more
				// (Down runs after every container and sandbox of the run
				// was removed): a runc init of a CreateContainer the
				// interrupt cancelled mid-way lingered here for over a
				// minute with containerd 2. The run's cgroup is the run's:
				// what is in it ends with it.
				remove()
			}
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				left = append(left, fmt.Sprintf("%s: %v", dirs[i], err))
			}
		}
	}
	return left
}

// endProcessesIn kills the processes in the cgroup dir (its cgroup.procs)
// and says whether there were any.
func endProcessesIn(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	pids := strings.Fields(string(b))
	for _, p := range pids {
		if pid, err := strconv.Atoi(p); err == nil && pid > 1 {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill() // SIGKILL
			}
		}
	}
	return len(pids) > 0
}

// RemoveRunCgroups removes, at the end of a run against a runtime on this
// machine, the run's cgroup directory (/ectest/<run ID>) and the empty
// sandbox parents below it that no spec's cleanup removed; an error names
// what stays (processes still in it).
func RemoveRunCgroups(runID string, poll, settle time.Duration) error {
	mounts, err := cgroupMounts()
	if err != nil || runID == "" {
		return nil
	}
	if left := removeEmptyCgroups(mounts, path.Join(cgroupRoot, runID), poll, settle); len(left) > 0 {
		return fmt.Errorf("cgroups of the run left: %s", strings.Join(left, "; "))
	}
	return nil
}

// cgroupMounts are the mount points of the cgroup (v1 and v2) hierarchies
// this process sees, each mounted at its root.
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "31 23 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, fs := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(fs) < 1 || (fs[0] != "cgroup" && fs[0] != "cgroup2") || fields[3] != "/" {
			continue
		}
		out = append(out, fields[4])
	}
	return out, sc.Err()
}
