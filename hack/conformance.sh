#!/usr/bin/env bash
# The main job: the CRI suite against the embedded runtime (or ECTEST_FLAGS'
# endpoint), then the cluster suite against the default kind cluster (made
# and deleted here, or CLUSTER_FLAGS' -kubeconfig), then one matrix with
# both layers side by side and one summary line. Its exit code is the
# merged outcome's (see README, "Exit codes"): 0 conformant, 1 the runtime
# or cluster is nonconformant, 2 bad input (before anything runs), 3 the
# run itself could not be done.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
report=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}")
procs=${PROCS:-4}
bin=$(mktemp -d /tmp/ectest-conformance-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
echo "ectest: compiling the suites and tools (a minute or more on a new machine)"
for s in cri cluster; do
  $go test -c -o "$bin/$s.test" "./suites/$s" || exit 3
done
$go build -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
$go build -o "$bin/ectest-report" ./cmd/ectest-report || exit 3
$go build -o "$bin/ectest-kind" ./cmd/ectest-kind || exit 3
# Bad input of either suite is one ectest: line and exit 2, before anything
# starts (a dry run checks the flags and the selection without running).
"$bin/cri.test" -report-dir="$report/cri" ${ECTEST_FLAGS:-} -ginkgo.dry-run -ginkgo.no-color > /dev/null || exit $?
"$bin/cluster.test" -report-dir="$report/cluster" ${CLUSTER_FLAGS:-} -ginkgo.dry-run -ginkgo.no-color > /dev/null || exit $?
mkdir -p "$report"
rm -f "$report"/cri/summary.json "$report"/cluster/summary.json
color=()
[ -t 1 ] || color=(--no-color)

echo "ectest: CRI suite (reports in $report/cri)"
"$bin/ginkgo" -p --procs="$procs" "${color[@]}" "$bin/cri.test" -- -report-dir="$report/cri" ${ECTEST_FLAGS:-}
echo "ectest: CRI suite: ginkgo exit $?"
echo "ectest: cluster suite (reports in $report/cluster)"
# The suite makes its cluster from node images built here first (it does
# not link the builder); a failed build leaves the suite to report it.
"$bin/ectest-kind" suite-images ${CLUSTER_FLAGS:-} || echo "ectest: the node images for the cluster suite could not be built (above)"
"$bin/ginkgo" -p --procs="$procs" "${color[@]}" "$bin/cluster.test" -- -report-dir="$report/cluster" ${CLUSTER_FLAGS:-}
echo "ectest: cluster suite: ginkgo exit $?"
echo
# The merged matrix, coverage and summary; its last line and exit code are
# the run's (a built binary: go run would turn exit 3 into 1).
"$bin/ectest-report" -o "$report" "$report/cri" "$report/cluster"
