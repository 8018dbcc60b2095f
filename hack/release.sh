#!/usr/bin/env bash
# make release VERSION=vX.Y.Z: per-platform archives of static binaries
# (CGO_ENABLED=0), each with its .sha256 and .sha512, and a manifest:
#
#   ectest-$VERSION-$OS-$ARCH.tar.gz   the platform's binaries, README, docs
#   manifest.json                      version, commit, Go, per archive its
#                                      platform, files and checksums
#
# The CRI suite (ectest-cri) ships for linux amd64/arm64 and windows amd64
# (the runtime's node); the cluster suite (ectest-cluster) and the report
# tools (ectest-report, ectest-matrix) for linux amd64/arm64, windows amd64
# and darwin amd64/arm64 (wherever a kubeconfig is). Every binary is
# stamped with the version and the commit (-version, and every report it
# writes). Archives are reproducible: sorted entries, owner 0, the commit's
# time as every file's time, gzip without a name or time.
#
# Output in $REPORT_DIR/release/$VERSION (default _artifacts/release/...).
# RELEASE_PLATFORMS="linux/amd64 ..." for some platforms only,
# RELEASE_BINARIES="ectest-cri ..." for some binaries only, and
# RELEASE_ALLOW_DIRTY=1 builds from a checkout with uncommitted changes
# (the Windows cell's nightly and self-test builds; never a release).
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
version=${VERSION:-}
if ! [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "ectest: make release needs VERSION=vX.Y.Z (semantic version with a v, e.g. VERSION=v0.3.0; got \"$version\")" >&2
  exit 2
fi
commit=$(git rev-parse HEAD 2>/dev/null) || { echo "ectest: make release builds from a git checkout (the commit is stamped into every binary)" >&2; exit 2; }
if [ -z "${RELEASE_ALLOW_DIRTY:-}" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  echo "ectest: make release: the checkout has uncommitted changes; a release is built from a commit as it is" >&2
  exit 2
fi
epoch=$(git log -1 --format=%ct)
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-_artifacts}}/release/$version")
rm -rf "$out"
mkdir -p "$out"
ldflags="-s -w $(ECTEST_VERSION=$version version_ldflags)"
platforms=${RELEASE_PLATFORMS:-"linux/amd64 linux/arm64 windows/amd64 darwin/amd64 darwin/arm64"}
work=$(mktemp -d /tmp/ectest-release.XXXXXX)
trap 'rm -rf "$work"' EXIT

# what_ships OS: the binaries of a platform, as "name package kind".
what_ships() {
  case $1 in
    linux | windows) echo "ectest-cri ./suites/cri test" ;;
  esac
  echo "ectest-cluster ./suites/cluster test"
  echo "ectest-report ./cmd/ectest-report cmd"
  echo "ectest-matrix ./cmd/ectest-matrix cmd"
}

build_platform() {
  local os=$1 arch=$2 name pkg kind ext="" dir
  [ "$os" = windows ] && ext=.exe
  dir=$work/ectest-$version-$os-$arch
  mkdir -p "$dir"
  while read -r name pkg kind; do
    if [ -n "${RELEASE_BINARIES:-}" ] && [[ " $RELEASE_BINARIES " != *" $name "* ]]; then
      continue
    fi
    if [ "$kind" = test ]; then
      CGO_ENABLED=0 GOOS=$os GOARCH=$arch $go test -c -trimpath -buildvcs=false -ldflags "$ldflags" -o "$dir/$name$ext" "$pkg" || return 1
    else
      CGO_ENABLED=0 GOOS=$os GOARCH=$arch $go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$dir/$name$ext" "$pkg" || return 1
    fi
  done < <(what_ships "$os")
  # What is committed only: an untracked file never ships.
  cp README.md "$dir/"
  mkdir -p "$dir/docs" && git ls-files -z 'docs/*.md' | xargs -0 -I{} cp {} "$dir/docs/"
  [ -f LICENSE ] && cp LICENSE "$dir/"
  local archive=ectest-$version-$os-$arch.tar.gz
  (cd "$work" && tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX,go-w --mtime="@$epoch" -cf - "ectest-$version-$os-$arch") | gzip -n -9 > "$out/$archive" || return 1
  (cd "$out" && sha256sum "$archive" > "$archive.sha256" && sha512sum "$archive" > "$archive.sha512") || return 1
}

for p in $platforms; do
  progress "building $p" build_platform "${p%/*}" "${p#*/}" || exit 3
done

# The manifest: what each archive holds, with the checksums.
{
  printf '{\n  "version": "%s",\n  "commit": "%s",\n  "go": "%s",\n  "archives": [' "$version" "$commit" "$($go env GOVERSION)"
  sep=""
  for p in $platforms; do
    os=${p%/*} arch=${p#*/}
    archive=ectest-$version-$os-$arch.tar.gz
    files=$(tar -tzf "$out/$archive" | grep -v '/$' | sed "s|^ectest-$version-$os-$arch/||" | sed 's/.*/"&"/' | paste -sd, -)
    printf '%s\n    {"os": "%s", "arch": "%s", "file": "%s", "sha256": "%s", "sha512": "%s", "files": [%s]}' "$sep" "$os" "$arch" "$archive" \
      "$(cut -d' ' -f1 "$out/$archive.sha256")" "$(cut -d' ' -f1 "$out/$archive.sha512")" "$files"
    sep=","
  done
  printf '\n  ]\n}\n'
} > "$out/manifest.json"
(cd "$out" && sha256sum -c --quiet ./*.sha256 && sha512sum -c --quiet ./*.sha512) || { echo "ectest: make release: a checksum does not verify" >&2; exit 3; }
echo "ectest: release $version (commit ${commit:0:12}) in $out:"
(cd "$out" && ls -l --time-style=+ ./*.tar.gz | awk '{print "  " $NF "  " $5 " bytes"}')
