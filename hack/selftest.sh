#!/usr/bin/env bash
# Tests the suite itself against the embedded runtime: runs the CRI suite
# serially and in parallel, then checks both runs' reports against the
# verdicts expected for the embedded runtime's version (suites/selftest).
# Both runs use the compiled suite binary the way a vendor does: copied to a
# directory outside the source tree and run with a PATH that has no Go
# toolchain, so the binary must be self-contained.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
out=$(realpath -m "${SELFTEST_DIR:-_artifacts/selftest}")
rm -rf "$out"
mkdir -p "$out"
bin=$(mktemp -d /tmp/ectest-selftest-bin.XXXXXX)
# The runs' own temporary directory: what they leave behind is checked there,
# so another ectest run on the same machine (or one killed earlier) cannot
# make this check fail or pass.
runtmp=$(mktemp -d /tmp/ectest-selftest-tmp.XXXXXX)
trap 'rm -rf "$bin" "$runtmp"' EXIT
go_binary test "$bin/cri.test" ./suites/cri || exit 1
# (The cluster suite for the tests of bad input below: suites/selftest
# finds both in ECTEST_SELFTEST_SUITE_DIR.)
go_binary test "$bin/cluster.test" ./suites/cluster || exit 1
go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 1
go_binary build "$bin/ectest-install" ./cmd/ectest-install || exit 3
# The runs below have no Go on PATH, as a vendor's: build the default
# embedded runtime first (cached after the first time).
"$bin/ectest-install" || exit 3
plain_path=/usr/sbin:/usr/bin:/sbin:/bin
runs=""
# Serial: the plain test binary, as a vendor runs it, from elsewhere. It
# (one spec at a time, mostly waiting) goes beside the CRI-O run below,
# each with an embedded runtime of its own; their output in this order.
"$bin/ectest-install" cri-o || exit 3
(cd "$bin" && env PATH=$plain_path TMPDIR="$runtmp" ./cri.test -report-dir="$out/serial" -ginkgo.no-color) > "$out/serial.log" 2>&1 &
serial_pid=$!
(cd "$bin" && env PATH=$plain_path TMPDIR="$runtmp" ./cri.test -runtime=cri-o -parallel=4 -report-dir="$out/cri-o" -ginkgo.no-color) > "$out/cri-o.log" 2>&1
crio_code=$?
wait "$serial_pid"
code=$?
echo "=== CRI suite, serial (cri.test from $bin, PATH=$plain_path)"
echo "exit code $code; $(grep -E '^(Ran|FAIL!|SUCCESS!)' "$out/serial.log" | tr '\n' ' ')"
tail -n 1 "$out/serial.log"
runs+=" $out/serial=$code"
# Parallel: through the Ginkgo CLI, four processes, every spec in random order
# (specs must not depend on each other).
echo "=== CRI suite, ginkgo -p (the same binary)"
(cd "$bin" && env PATH=$plain_path TMPDIR="$runtmp" ./ginkgo -p --procs=4 --randomize-all --no-color ./cri.test -- -report-dir="$out/parallel") > "$out/parallel.log" 2>&1
code=$?
echo "exit code $code; $(grep -E '^(Ran|FAIL!|SUCCESS!)' "$out/parallel.log" | tr '\n' ' ')"
runs+=" $out/parallel=$code"
sed -n '/^ *Capability matrix/,/^ *nonconformant capabilities/p' "$out/parallel.log"

# A second CRI implementation: the same binary against the embedded CRI-O
# (built from the Go module proxy on first use, then cached), every spec in
# parallel (beside the serial run, above); its verdicts are checked below
# against runtimes/expected/cri-o.yaml like the runs above against theirs.
echo "=== CRI suite against CRI-O (-runtime=cri-o -parallel=4, beside the serial run)"
echo "exit code $crio_code; $(tail -n 1 "$out/cri-o.log")"
runs+=" $out/cri-o=$crio_code"

# The registry stopped after setup: the spec that needs it must end as an
# error of the run (exit 3), never as the runtime's nonconformance.
echo "=== CRI suite, the pull-at-debug-time spec with the registry stopped after setup (a self-test)"
(cd "$bin" && env PATH=$plain_path TMPDIR="$runtmp" ECTEST_SELFTEST_REGISTRY_DOWN=1 ./cri.test -report-dir="$out/registry-down" -ginkgo.no-color \
  -ginkgo.label-filter=image-pull-at-debug-time) > "$out/registry-down.log" 2>&1
code=$?
echo "exit code $code; $(tail -n 1 "$out/registry-down.log")"
down="$out/registry-down=$code"

# The interrupt self-test runs every CRI implementation: cri-dockerd too.
"$bin/ectest-install" cri-dockerd || exit 3
echo "=== self-test of the reports"
ECTEST_SELFTEST_SUITE_DIR="$bin" ECTEST_SELFTEST_RUNS_TMPDIR="$runtmp" ECTEST_SELFTEST_REGISTRY_DOWN_RUN="$down" ECTEST_SELFTEST_RUNS="$runs" $go test -count=1 -v ./suites/selftest 2>&1 | tee "$out/selftest.log" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+\S+_test.go)'
exit "${PIPESTATUS[0]}"
