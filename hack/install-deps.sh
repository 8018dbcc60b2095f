#!/usr/bin/env bash
# Installs, idempotently, what the embedded runtime and the suite's images
# need from Debian: containerd, runc, the CNI plugins, a static busybox (the
# debug image), iptables and iproute2. Installs nothing already present.
set -euo pipefail

packages=(containerd runc containernetworking-plugins busybox-static iptables iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "hack/install-deps.sh: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The embedded runtime is private: Debian's containerd service is not needed.
if command -v systemctl >/dev/null 2>&1 && systemctl is-enabled containerd >/dev/null 2>&1; then
  echo "hack/install-deps.sh: note: Debian's containerd service is enabled; the suite does not use it"
fi
