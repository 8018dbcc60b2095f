#!/usr/bin/env bash
# The main job (make conformance): the CRI suite against the embedded runtime
# (or ECTEST_FLAGS' endpoint), then the cluster suite against the default
# kind cluster (made and deleted here, or CLUSTER_FLAGS' -kubeconfig), then
# one matrix with both layers side by side and one last line. Its exit code
# is the merged outcome's (README, "Reading results"): 0 conformant (with
# EXPECT: as expected), 1 nonconformant (changed), 2 bad input (one line,
# before anything runs), 3 the run itself could not be done (an
# interrupted run included: Ctrl-C stops it here, the cluster suite does
# not start after an interrupted CRI suite).
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
report=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}")
procs=${PROCS:-4}
expect=()
[ -n "${EXPECT:-}" ] && expect=(-expect="$EXPECT")
echo "ectest: make conformance: the CRI suite, then the cluster suite, then one matrix; reports in $report"
bin=$(mktemp -d /tmp/ectest-conformance-bin.XXXXXX)
interrupted=
trap 'interrupted=1' INT TERM
trap 'rm -rf "$bin"' EXIT
# The two suites link side by side (each link is one core's work), and the
# tools after the flags were checked: bad input is told once the suites exist.
build_suites() {
  both go_binary -stamp test "$bin/cri.test" ./suites/cri -- go_binary -stamp test "$bin/cluster.test" ./suites/cluster
}
build_tools() {
  both go_binary build "$bin/ectest-report" ./cmd/ectest-report -- go_binary build "$bin/ectest-kind" ./cmd/ectest-kind
}
progress "compiling the suites (minutes on a new machine)" build_suites || exit 3
# Bad input of either suite is one ectest: line and exit 2, before anything
# starts (a dry run checks the flags and the selection without running).
# shellcheck disable=SC2086 # ECTEST_FLAGS and CLUSTER_FLAGS are lists of flags
"$bin/cri.test" -report-dir="$report/cri" "${expect[@]}" ${ECTEST_FLAGS:-} -ginkgo.dry-run > /dev/null || exit $?
# shellcheck disable=SC2086
"$bin/cluster.test" -report-dir="$report/cluster" "${expect[@]}" ${CLUSTER_FLAGS:-} -ginkgo.dry-run > /dev/null || exit $?
progress "compiling the tools" build_tools || exit 3
mkdir -p "$report"
rm -f "$report"/cri/summary.json "$report"/cluster/summary.json "$report/summary.json"

stopped() {
  echo "ectest: RUN FAILED: make conformance was interrupted during $1; no verdict (exit 3)" >&2
  exit 3
}
echo "ectest: CRI suite, $procs processes (reports in $report/cri)"
# shellcheck disable=SC2086
"$bin/cri.test" -parallel="$procs" -report-dir="$report/cri" "${expect[@]}" ${ECTEST_FLAGS:-}
[ -n "$interrupted" ] && stopped "the CRI suite"
echo "ectest: cluster suite, $procs processes (reports in $report/cluster)"
# The suite makes its cluster from node images built here first (it does
# not link the builder); a failed build leaves the suite to report it.
# shellcheck disable=SC2086
progress "the node images for the cluster suite" "$bin/ectest-kind" suite-images ${CLUSTER_FLAGS:-} ||
  echo "ectest: the node images for the cluster suite could not be built (above)"
[ -n "$interrupted" ] && stopped "the node image build"
# shellcheck disable=SC2086
"$bin/cluster.test" -parallel="$procs" -report-dir="$report/cluster" "${expect[@]}" ${CLUSTER_FLAGS:-}
[ -n "$interrupted" ] && stopped "the cluster suite"
echo
# The merged matrix, coverage and summary; its last line and exit code are
# the run's.
"$bin/ectest-report" "${expect[@]}" -o "$report" "$report/cri" "$report/cluster"
