#!/usr/bin/env bash
# The main job: the CRI suite against the embedded runtime (or ECTEST_FLAGS'
# endpoint), then the cluster suite against the default kind cluster (made
# and deleted here, or CLUSTER_FLAGS' -kubeconfig), then one matrix with
# both layers side by side. Exits non-zero when any suite failed, that is
# when any capability is nonconformant or a run went wrong.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
report=${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}
procs=${PROCS:-4}
mkdir -p "$report"

$go tool ginkgo -p --procs="$procs" ./suites/cri -- -report-dir="$report/cri" ${ECTEST_FLAGS:-}
cri=$?
$go tool ginkgo -p --procs="$procs" ./suites/cluster -- -report-dir="$report/cluster" ${CLUSTER_FLAGS:-}
cluster=$?
echo
$go run ./framework/report/ectest-report -o "$report" "$report/cri" "$report/cluster"
merged=$?
echo "CRI suite exit $cri, cluster suite exit $cluster; reports in $report/{cri,cluster}, merged matrix in $report/matrix.md"
[ "$cri" -eq 0 ] && [ "$cluster" -eq 0 ] && [ "$merged" -eq 0 ]
