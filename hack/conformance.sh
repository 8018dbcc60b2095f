#!/usr/bin/env bash
# The main job: the CRI suite against the embedded runtime (or ECTEST_FLAGS'
# endpoint), then the cluster suite against the default kind cluster (made
# and deleted here, or CLUSTER_FLAGS' -kubeconfig), then one matrix with
# both layers side by side and one summary line. Its exit code is the
# merged outcome's (see README, "Exit codes"): 0 conformant, 1 the runtime
# or cluster is nonconformant, 3 the run itself could not be done.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
report=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}")
procs=${PROCS:-4}
mkdir -p "$report"
rm -f "$report"/cri/summary.json "$report"/cluster/summary.json

echo "ectest: CRI suite (reports in $report/cri)"
$go tool ginkgo -p --procs="$procs" ./suites/cri -- -report-dir="$report/cri" ${ECTEST_FLAGS:-}
echo "ectest: CRI suite: ginkgo exit $?"
echo "ectest: cluster suite (reports in $report/cluster)"
# The suite makes its cluster from node images built here first (it does
# not link the builder); a failed build leaves the suite to report it.
$go run ./cmd/ectest-kind suite-images ${CLUSTER_FLAGS:-} || echo "ectest: the node images for the cluster suite could not be built (above)"
$go tool ginkgo -p --procs="$procs" ./suites/cluster -- -report-dir="$report/cluster" ${CLUSTER_FLAGS:-}
echo "ectest: cluster suite: ginkgo exit $?"
echo
# The merged matrix, coverage and summary; its last line is the run's.
$go run ./cmd/ectest-report -o "$report" "$report/cri" "$report/cluster"
