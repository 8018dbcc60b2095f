#!/usr/bin/env bash
# make conformance-cri / conformance-cluster (and so make matrix's cells):
# one suite, compiled into a private folder and run with ginkgo -p. Ginkgo's
# own compile writes suites/<suite>/<suite>.test and deletes it at the end,
# so two runs of a suite side by side would overwrite and delete each
# other's binary; these do not. Exit codes as the README's table: bad input
# (exit 2) is caught by a dry run before anything starts, and the run's own
# outcome ends the output (ginkgo -p exits 0 or 1 itself).
#   [LABELS=filter] hack/suite.sh cri|cluster [suite flags]
set -uo pipefail
cd "$(dirname "$0")/.."
suite=${1:?usage: hack/suite.sh cri|cluster [suite flags]}
shift
case $suite in cri|cluster) ;; *) echo "ectest: hack/suite.sh: unknown suite $suite (cri or cluster)" >&2; exit 2 ;; esac
go=${GO:-go}
report=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/$suite")
procs=${PROCS:-4}
bin=$(mktemp -d "/tmp/ectest-$suite-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
$go test -c -o "$bin/$suite.test" "./suites/$suite" || exit 3
$go build -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
$go build -o "$bin/ectest-report" ./cmd/ectest-report || exit 3
labels=()
[ -n "${LABELS:-}" ] && labels=(--label-filter="$LABELS")
"$bin/$suite.test" -report-dir="$report" "$@" ${LABELS:+-ginkgo.label-filter="$LABELS"} -ginkgo.dry-run -ginkgo.no-color > /dev/null || exit $?
if [ "$suite" = cluster ]; then
  # The suite makes its kind cluster from node images built before; it
  # does not link the builder. Build (or find cached) what these flags need.
  $go run ./cmd/ectest-kind suite-images "$@" || exit 3
fi
mkdir -p "$report"
rm -f "$report/summary.json"
echo "ectest: $suite suite (reports in $report)"
color=()
[ -t 1 ] || color=(--no-color) # a log file (make matrix's cell.log), read in a browser
"$bin/ginkgo" -p --procs="$procs" "${color[@]}" "${labels[@]}" "$bin/$suite.test" -- -report-dir="$report" "$@"
"$bin/ectest-report" -outcome "$report"
