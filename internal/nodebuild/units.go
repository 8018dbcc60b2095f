package nodebuild

import "github.com/ectest/ectest/kind/nodeimage"

const importUnit = `[Unit]
Description=Import the images kubeadm needs (this node cannot pull them)
After=containerd.service
Requires=containerd.service
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for i in $(seq 1 100); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done; ctr -n k8s.io images import --no-unpack=false /kind/images/images.tar'

[Install]
WantedBy=multi-user.target
`

// ectestInit records which cgroup hierarchies the entrypoint set up, then
// starts systemd.
const ectestInit = `#!/bin/sh
awk '$9 == "cgroup" {print $5}' /proc/self/mountinfo > /run/ectest-cgroups-at-boot 2>/dev/null || true
exec /sbin/init "$@"
`

// On cgroup v1 hosts, the node's systemd mounts hierarchies the host does
// not have (hugetlb, net_cls/net_prio, perf_event); kubelets then crash-loop
// on missing paths. Unmount every cgroup v1 mount the entrypoint did not set up.
const cgroupFix = `#!/bin/sh
[ -f /sys/fs/cgroup/cgroup.controllers ] && exit 0
[ -f /run/ectest-cgroups-at-boot ] || exit 0
awk '$9 == "cgroup" {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
  grep -qx "$m" /run/ectest-cgroups-at-boot || umount "$m" 2>/dev/null || true
done
`

const criProxyUnit = `[Unit]
Description=ectest's fault-injecting CRI proxy (a SELF-TEST tool, not a runtime) between the kubelet and containerd
ConditionPathExists=` + nodeimage.CRIProxyDir + `/` + nodeimage.CRIProxyFault + `
After=containerd.service
Requires=containerd.service
Before=kubelet.service

[Service]
ExecStart=` + nodeimage.CRIProxyDir + `/` + nodeimage.CRIProxyProgram + ` -listen=` + nodeimage.CRIProxySocket + ` -backend=/run/containerd/containerd.sock -fault-file=` + nodeimage.CRIProxyDir + `/` + nodeimage.CRIProxyFault + `
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`

const cgroupFixUnit = `[Unit]
Description=Unmount cgroup v1 hierarchies the host does not have
DefaultDependencies=no
After=local-fs.target
Before=containerd.service kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/ectest-cgroup-fix

[Install]
WantedBy=multi-user.target
`

// nodeCNI is the single node's pod network, replacing kindnetd (whose image
// cannot be pulled offline): a bridge in the first /24 of kind.PodSubnet.
var nodeCNI = nodeimage.NodeCNI(nodeimage.FirstNodeSubnet)
