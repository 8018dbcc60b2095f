// Package crunwrapper is ectest-crun, the OCI runtime binary the embedded
// runtime containerd-2-crun gives its runtime handler crun: Debian's crun
// 1.8 refuses hybrid cgroup hosts (cgroup v1 with a cgroup2 hierarchy at
// /sys/fs/cgroup/unified whose cgroup.controllers lists a controller, here
// hugetlb: "cgroups in hybrid mode not supported, drop all controllers from
// cgroupv2"), and --cgroup-manager=disabled does not help. Run in a mount
// namespace of its own, with an empty file bound over that one
// cgroup.controllers, it takes the host for cgroup v1 and works, limits
// enforced; the host's view is unchanged.
//
// It is one of the programs every ectest binary carries
// (fixtures/programs): the embedded runtime links Name, in its run
// directory, to the running suite binary, and the runc shim runs it as
// crun, with crun's arguments.
package crunwrapper

// Name is the program's name (argv[0]'s base name).
const Name = "ectest-crun"

// EnvCrun names the real crun (default: crun on PATH).
const EnvCrun = "ECTEST_CRUN"

// EmptyFile is the empty file, next to the wrapper (argv[0]'s directory),
// bound over the hybrid hierarchy's cgroup.controllers.
const EmptyFile = "ectest-crun.empty"

// Controllers is the file crun reads to refuse hybrid hosts.
const Controllers = "/sys/fs/cgroup/unified/cgroup.controllers"
