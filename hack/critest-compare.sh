#!/usr/bin/env bash
# make critest-compare: the CRI suite's per-spec times next to critest's, on
# the same runtime in the same run. One embedded runtime (containerd-2, or
# $RUNTIME) is started outside both suites (ectest-runtime), serving the
# suite's test images from its loopback registry; critest (cri-tools
# $CRITEST_VERSION, built from the Go module proxy in a throwaway module,
# cached under the user cache dir) runs its conformance specs against it
# with the suite's debug image (a static busybox) as its default test image,
# then the CRI suite runs against the same endpoint, both in PROCS processes.
# Only specs that passed are compared (a failure may end early or wait out a
# timeout). Results: $REPORT_DIR/critest-compare/critest-compare.json (a
# gmeasure experiment) and the printed table; critest's own output in
# critest.log there.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
version=${CRITEST_VERSION:-v1.37.0}
procs=${PROCS:-4}
out=$(realpath -m "${REPORT_DIR:-_artifacts}/critest-compare")
rm -rf "$out"
mkdir -p "$out"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ectest/bin/critest-$version"
critest="$cache/critest"
bin=$(mktemp -d /tmp/ectest-critest-bin.XXXXXX)
runtime_pid=
cleanup() {
  [ -n "$runtime_pid" ] && { kill -TERM "$runtime_pid" 2>/dev/null; wait "$runtime_pid" 2>/dev/null; }
  rm -rf "$bin"
}
trap cleanup EXIT

build_critest() {
  local tmp rc
  tmp=$(mktemp -d /tmp/ectest-critest-build.XXXXXX)
  mkdir -p "$cache"
  (cd "$tmp" && $go mod init ectest.invalid/critest-build >/dev/null 2>&1 &&
    $go get -t "sigs.k8s.io/cri-tools/cmd/critest@$version" &&
    CGO_ENABLED=0 $go test -c -o "$critest.tmp" sigs.k8s.io/cri-tools/cmd/critest) && mv "$critest.tmp" "$critest"
  rc=$?
  rm -rf "$tmp"
  return $rc
}
if [ ! -x "$critest" ]; then
  progress "building critest $version from the Go module proxy" build_critest || exit 3
fi
build() {
  go_binary test "$bin/cri.test" ./suites/cri && go_binary build "$bin/ectest-runtime" ./cmd/ectest-runtime &&
    go_binary build "$bin/ectest-report" ./cmd/ectest-report && go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo
}
progress "compiling the CRI suite, ectest-runtime, ectest-report and ginkgo" build || exit 3

images_registry=127.0.0.1:5091
suite_registry=127.0.0.1:5092
exec 3< <(exec "$bin/ectest-runtime" ${RUNTIME:+-runtime=$RUNTIME} -registry-addr=$images_registry -serve-images="$out/images.json" -log-dir="$out" 2>"$out/runtime.log")
runtime_pid=$!
read -r endpoint <&3 || { echo "ectest: the runtime did not start:" >&2; cat "$out/runtime.log" >&2; exit 3; }
debug=$(sed -n 's/.*"debug":"\([^"]*\)".*/\1/p' "$out/images.json")
[ -n "$debug" ] || { echo "ectest: no debug image in $out/images.json" >&2; exit 3; }
printf 'defaultTestContainerImage: %s\nwebServerTestImage: %s\n' "$debug" "$debug" > "$out/critest-images.yaml"
echo "ectest: runtime at $endpoint; critest's test image $debug"

# critest's conformance specs, but for those needing images only a registry
# on the internet has (image management, users and groups of cri-tools'
# test images, a web server for port forwarding and multiple containers)
# or a network the runtime here lacks.
focus='\[Conformance\]'
skip='ImageManager|[Pp]ortforward|Multiple Containers|[Ii]mage|\b[Uu]ser|\b[Gg]roup|DNS|Networking|\b[Pp]ort\b|[Aa]pp[Aa]rmor|seccomp|Seccomp|SELinux'
start=$(date +%s)
(cd "$bin" && PATH="$bin:$PATH" "$critest" -runtime-endpoint="$endpoint" -image-endpoint="$endpoint" -test-images-file="$out/critest-images.yaml" \
  -parallel="$procs" -ginkgo.focus="$focus" -ginkgo.skip="$skip" -ginkgo.no-color -ginkgo.json-report="$out/critest.json") > "$out/critest.log" 2>&1
echo "ectest: critest $version: exit $? after $(( $(date +%s) - start ))s; $(grep -E '^(Ran|FAIL!|SUCCESS!)' "$out/critest.log" | tail -n 2 | tr '\n' ' ')"
start=$(date +%s)
(cd "$bin" && "./cri.test" -runtime-endpoint="$endpoint" -registry-addr=$suite_registry -parallel="$procs" -report-dir="$out/ectest") > "$out/ectest.log" 2>&1
echo "ectest: CRI suite: exit $? after $(( $(date +%s) - start ))s; $(tail -n 1 "$out/ectest.log")"
"$bin/ectest-report" -compare-critest -o "$out" "$out/ectest" "$out/critest.json"
