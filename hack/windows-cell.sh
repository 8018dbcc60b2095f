#!/usr/bin/env bash
# hack/windows-cell.sh: the nightly matrix's Windows cell (the workflow's
# windows job, on a GitHub-hosted Windows Server 2022 runner, in Git Bash).
# It builds the windows/amd64 release archive of the CRI suite
# (hack/release.sh) and checks it against its checksum, installs containerd
# for Windows (a pinned release, checked against its published checksum),
# builds the suite's Windows target image on the runner, and runs the
# unpacked ectest-cri.exe against containerd over its named pipe with the
# profile of the runner's build, its reports in the cell's folder
# ($REPORT_DIR, default _artifacts/matrix/cells/$CELL) for the merge job.
#
# Every step prints what it did. On a host that is not Windows (make test's
# Windows self-test) it runs the steps that are not Windows-only and stops,
# exit 0, at the first one that is, saying what that step would have done.
#
# Exit: the suite's (0 conformant, 1 nonconformant, 3 a run error), 3 when
# a step of the cell itself failed.
set -euo pipefail
cd "$(dirname "$0")/.."
cell=${CELL:-cri-windows-ltsc2022}
out=$(realpath -m "${REPORT_DIR:-_artifacts/matrix/cells/$cell}")
build=${WINDOWS_BUILD:-ltsc2022}            # the runner's OS build: windows-2022 runners are ltsc2022
containerd_version=${CONTAINERD_WINDOWS_VERSION:-2.1.4}
cni_version=${WINDOWS_CNI_VERSION:-v0.3.1}  # microsoft/windows-container-networking's nat plugin
version=${CELL_VERSION:-v0.0.0-nightly.$(date -u +%Y%m%d)}  # not $VERSION: CI images set it for other things
work=$(mktemp -d "${TMPDIR:-/tmp}/ectest-windows-cell.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

say() { echo "ectest: windows cell: $*"; }
fail() { say "FAILED: $*"; exit 3; }
on_windows() {
  case "$(uname -s)" in MINGW* | MSYS* | CYGWIN*) return 0 ;; esac
  return 1
}
# windows_only STEP WHAT: past this point only a Windows host goes on.
windows_only() {
  if ! on_windows; then
    say "step $1 is Windows-only, and this host is $(uname -s): stopping here (it would $2)"
    exit 0
  fi
  say "step $1: $2"
}

# 1. The suite as released: the windows/amd64 archive, checked, unpacked.
say "step release: building ectest-cri $version for windows/amd64 (hack/release.sh)"
VERSION=$version RELEASE_PLATFORMS=windows/amd64 RELEASE_BINARIES=ectest-cri RELEASE_ALLOW_DIRTY=1 \
  REPORT_DIR="$work" bash hack/release.sh || fail "hack/release.sh"
archive=$work/release/$version/ectest-$version-windows-amd64.tar.gz
(cd "$(dirname "$archive")" && sha256sum -c "$(basename "$archive").sha256") || fail "the archive's checksum"
tar -xzf "$archive" -C "$work"
suite=$work/ectest-$version-windows-amd64/ectest-cri.exe
[ -f "$suite" ] || fail "no ectest-cri.exe in $archive"
say "step release: $(basename "$archive") verified (sha256), ectest-cri.exe unpacked ($(wc -c < "$suite") bytes)"

# 2. The images file: the runner's build, Microsoft's Nano Server as the
# debug image, the suite's own target image built in step 4.
images=$out/images.yaml
cat > "$images" <<EOF
windows:
  $build:
    debug: mcr.microsoft.com/windows/nanoserver:$build
    target: localhost/ectest/target:$build
EOF
say "step images: wrote $images (debug mcr.microsoft.com/windows/nanoserver:$build, target localhost/ectest/target:$build)"

# 3. containerd for Windows, from its release, as a service.
windows_only containerd "download containerd $containerd_version for windows/amd64 from its GitHub release, check it against the release's .sha256sum, unpack it into C:\\Program Files\\containerd, write its default configuration and the CNI nat plugin ($cni_version) on the runner's nat network, register and start the containerd service"
pkg=containerd-$containerd_version-windows-amd64.tar.gz
url=https://github.com/containerd/containerd/releases/download/v$containerd_version/$pkg
curl -fsSL -o "$work/$pkg" "$url" || fail "download $url"
curl -fsSL -o "$work/$pkg.sha256sum" "$url.sha256sum" || fail "download $url.sha256sum"
(cd "$work" && sha256sum -c "$pkg.sha256sum") || fail "checksum of $pkg"
dest="/c/Program Files/containerd"
mkdir -p "$dest" && tar -xzf "$work/$pkg" -C "$dest" --strip-components=1
"$dest/containerd.exe" config default > "$dest/config.toml"
# The CNI nat plugin on the runner's HNS nat network (Docker's, which the
# runner has), where containerd's default configuration looks for it.
cni=windows-container-networking-cni-amd64-$cni_version.zip
curl -fsSL -o "$work/$cni" "https://github.com/microsoft/windows-container-networking/releases/download/$cni_version/$cni" || fail "download the CNI plugins $cni_version"
mkdir -p "$dest/cni/bin" "$dest/cni/conf"
(cd "$dest/cni/bin" && unzip -o -q "$work/$cni") || fail "unzip $cni"
subnet=$(docker network inspect nat -f '{{(index .IPAM.Config 0).Subnet}}') || fail "the runner's HNS nat network (docker network inspect nat)"
gateway=$(docker network inspect nat -f '{{(index .IPAM.Config 0).Gateway}}')
printf '{"cniVersion": "0.3.0", "name": "nat", "type": "nat", "master": "Ethernet", "ipam": {"subnet": "%s", "routes": [{"GW": "%s"}]}, "capabilities": {"portMappings": true, "dns": true}}\n' "$subnet" "$gateway" > "$dest/cni/conf/0-containerd-nat.conf"
say "step containerd: CNI nat plugin $cni_version on the nat network $subnet (gateway $gateway)"
"$dest/containerd.exe" --register-service || fail "containerd --register-service"
powershell.exe -NoProfile -Command "Start-Service containerd" || fail "Start-Service containerd"
"$dest/ctr.exe" version || fail "containerd does not answer"
say "step containerd: containerd $containerd_version running as a service on npipe:////./pipe/containerd-containerd"

# 4. The target image: the suite binary as target.exe on Nano Server of the
# runner's build, built with the runner's Docker, imported into containerd.
windows_only target-image "build the target image with Docker and import it into containerd's k8s.io namespace"
mkdir -p "$work/target" && cp "$suite" "$work/target/target.exe"
printf 'FROM mcr.microsoft.com/windows/nanoserver:%s\nCOPY target.exe C:/target.exe\nENTRYPOINT ["C:\\\\target.exe"]\n' "$build" > "$work/target/Dockerfile"
docker build -t "localhost/ectest/target:$build" "$work/target" || fail "docker build of the target image"
docker save "localhost/ectest/target:$build" -o "$work/target.tar" || fail "docker save"
"$dest/ctr.exe" -n k8s.io images import "$work/target.tar" || fail "ctr images import"
say "step target-image: localhost/ectest/target:$build in containerd"

# 5. The run: the released suite against containerd over the named pipe,
# Not with -expect=builtin: the expectation files have no OS, and
# containerd for Windows (v2.1.4) would be held to the Linux containerd-2's
# known deviations. Its verdicts stand as they are (exit 0 or 1).
windows_only run "run ectest-cri.exe against npipe:////./pipe/containerd-containerd with the profile containerd-windows-$build"
set +e
"$suite" -runtime-endpoint=npipe:////./pipe/containerd-containerd -images-file="$images" -windows-build="$build" \
  -registry-addr=127.0.0.1:5000 -report-dir="$out/cri" -ginkgo.no-color
code=$?
set -e
say "step run: ectest-cri.exe exited $code; reports in $out/cri"
exit "$code"
