#!/usr/bin/env bash
# Tests the suite itself against the embedded runtime: runs the CRI suite
# serially and in parallel, then checks both runs' reports against the
# verdicts expected for the embedded runtime's version (suites/selftest).
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
out=${SELFTEST_DIR:-_artifacts/selftest}
rm -rf "$out"
mkdir -p "$out"

$go test -c -o "$out/cri.test" ./suites/cri || exit 1
runs=""
# Serial: the plain test binary, as a vendor runs it.
echo "=== CRI suite, serial"
"$out/cri.test" -report-dir="$out/serial" -ginkgo.no-color > "$out/serial.log" 2>&1
code=$?
echo "exit code $code; $(grep -E '^(Ran|FAIL!|SUCCESS!)' "$out/serial.log" | tr '\n' ' ')"
runs+=" $PWD/$out/serial=$code"
# Parallel: through the Ginkgo CLI, four processes, every spec in random order
# (specs must not depend on each other).
echo "=== CRI suite, ginkgo -p"
$go tool ginkgo -p --procs=4 --randomize-all --no-color ./suites/cri -- -report-dir="$PWD/$out/parallel" > "$out/parallel.log" 2>&1
code=$?
echo "exit code $code; $(grep -E '^(Ran|FAIL!|SUCCESS!)' "$out/parallel.log" | tr '\n' ' ')"
runs+=" $PWD/$out/parallel=$code"
sed -n '/^ *Capability matrix/,/^ *nonconformant capabilities/p' "$out/parallel.log"

echo "=== self-test of the reports"
ECTEST_SELFTEST_RUNS="$runs" $go test -count=1 -v ./suites/selftest 2>&1 | tee "$out/selftest.log" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+\S+_test.go)'
exit "${PIPESTATUS[0]}"
