#!/usr/bin/env bash
# make runtimes: the CRI suite against every embedded runtime this machine
# can run (runtimes/embedded.Flavors), past failures, then one table with
# the runtimes as columns: $REPORT_DIR/runtimes/runtimes.md and .json.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/runtimes")
procs=${PROCS:-4}
mkdir -p "$out"
bin=$(mktemp -d /tmp/ectest-runtimes-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
progress "compiling the CRI suite" go_binary test "$bin/cri.test" ./suites/cri || exit 3
progress "building ginkgo" go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
progress "building ectest-report" go_binary build "$bin/ectest-report" ./cmd/ectest-report || exit 3
args=()
runs=()
for r in ${RUNTIMES:-$("$bin/ectest-report" -list-runtimes)}; do
  echo "ectest: runtime $r"
  rm -rf "$out/$r"
  "$bin/ginkgo" -p --procs="$procs" --no-color "$bin/cri.test" -- -runtime="$r" -report-dir="$out/$r" ${ECTEST_FLAGS:-} > "$out/$r.log" 2>&1
  rc=$?
  grep -E '^ectest:' "$out/$r.log" | tail -n 3
  args+=("$r=$out/$r")
  # A run with a matrix is checked against what runtimes/expected/
  # states for its runtime (with the upstream code behind each deviation).
  [ -f "$out/$r/matrix.json" ] && runs+=("$out/$r=$rc")
done
"$bin/ectest-report" -runtimes -o "$out" "${args[@]}" || exit $?
[ -n "${ECTEST_FLAGS:-}" ] && exit 0 # other flags, other verdicts: nothing stated to check
echo "ectest: checking each runtime's verdicts against runtimes/expected/"
ECTEST_SELFTEST_RUNS="${runs[*]:-}" $go test -count=1 -run 'TestVerdictsMatchExpectations|TestOnlyNonconformanceFailsSpecs' ./suites/selftest/ ||
  { echo "ectest: a runtime's verdicts differ from what runtimes/expected/ states (above)"; exit 1; }
