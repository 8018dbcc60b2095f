#!/usr/bin/env bash
# make probe: the CRI suite with -profile=probe against a runtime that has no
# profile yet (ECTEST_FLAGS=-runtime-endpoint=..., or an embedded runtime with
# RUNTIME=name): every capability's specs run, only what every runtime must
# support is judged, and the run writes observed-profile.yaml, what the
# runtime actually did, for its vendor to review and commit as its profile.
# Exit codes: 4 the probe was done (make probe then succeeds), 1 a capability
# every runtime must support is nonconformant, 3 the run could not be done,
# 2 bad input.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
report=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/probe${RUNTIME:+/$RUNTIME}")
procs=${PROCS:-4}
bin=$(mktemp -d /tmp/ectest-probe-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
progress "compiling the CRI suite" go_binary test "$bin/cri.test" ./suites/cri || exit 3
progress "building ginkgo" go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
progress "building ectest-report" go_binary build "$bin/ectest-report" ./cmd/ectest-report || exit 3
# shellcheck disable=SC2086 # ECTEST_FLAGS is a list of flags
flags=(-profile=probe -report-dir="$report" ${RUNTIME:+-runtime=$RUNTIME} ${ECTEST_FLAGS:-})
# Bad input (a flag, the endpoint) is one ectest: line and exit 2 before anything runs.
"$bin/cri.test" "${flags[@]}" -ginkgo.dry-run -ginkgo.no-color > /dev/null || exit $?
mkdir -p "$report"
rm -f "$report/summary.json" "$report/observed-profile.yaml"
echo "ectest: probe (reports in $report)"
"$bin/ginkgo" -p --procs="$procs" "$bin/cri.test" -- "${flags[@]}"
# ginkgo -p exits 0 or 1 itself; the run's own outcome has the probe's code.
"$bin/ectest-report" -outcome "$report"
