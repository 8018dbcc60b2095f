#!/usr/bin/env bash
# make conformance-cri / conformance-cluster / certify (and make matrix's
# cells): one suite, linked only when its sources changed (go_binary), a
# copy of it in a private folder (a relink never changes a running binary)
# and run as `<suite>.test -parallel=N`. The binary
# checks its flags and the selection first (bad input: one ectest: line and
# exit 2 before anything starts), runs the specs in N processes through the
# Ginkgo CLI linked into it, and ends on the run's line with the run's exit
# code (README, "Reading results").
#   [LABELS=filter] [SUITE_REPORT_DIR=dir] hack/suite.sh cri|cluster [suite flags]
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
suite=${1:-}
case $suite in cri|cluster) ;; *) echo "ectest: hack/suite.sh: unknown suite '$suite' (cri or cluster)" >&2; exit 2 ;; esac
shift
report=$(realpath -m "${SUITE_REPORT_DIR:-${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/$suite}")
procs=${PROCS:-4}
bin=$(mktemp -d "/tmp/ectest-$suite-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
progress "compiling the $suite suite" go_binary -stamp test "$bin/$suite.test" "./suites/$suite" || exit 3
args=(-report-dir="$report" "$@")
[ -n "${LABELS:-}" ] && args+=(-ginkgo.label-filter="$LABELS")
if [ "$suite" = cluster ]; then
  # The suite makes its kind cluster from node images built before (it does
  # not link the builder): check the flags first, then build (or find
  # cached) what they need.
  "$bin/$suite.test" "${args[@]}" -ginkgo.dry-run > /dev/null || exit $?
  progress "building ectest-kind" go_binary build "$bin/ectest-kind" ./cmd/ectest-kind || exit 3
  progress "the node images for the cluster suite" "$bin/ectest-kind" suite-images "$@" || exit 3
fi
echo "ectest: $suite suite, $procs processes (reports in $report)"
"$bin/$suite.test" -parallel="$procs" "${args[@]}"
