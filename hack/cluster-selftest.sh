#!/usr/bin/env bash
# Tests the offline kind cluster pipeline and the cluster suite: builds what
# is missing (cached by version under the user cache dir), creates the
# default cluster, checks a target pod and an ephemeral container pulled at
# debug time, runs the cluster suite on it in parallel (every spec must pass:
# the embedded kind cluster is expected to conform), deletes the cluster, and
# fails if any kind container or network is left.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
report=$(realpath -m "${ARTIFACTS:-_artifacts}/cluster-selftest")
mkdir -p "$report"
$go build -o "$report/ectest-kind" ./kind/cmd/ectest-kind || exit 1
kindctl="$report/ectest-kind"

start=$(date +%s)
"$kindctl" smoke -report-dir="$report" ${KUBERNETES_VERSION:+-kubernetes-version=$KUBERNETES_VERSION}
code=$?
echo "cluster self-test: smoke exit code $code after $(( $(date +%s) - start ))s"
if [ "$code" -eq 0 ]; then
  start=$(date +%s)
  $go tool ginkgo -p --procs=4 --no-color ./suites/cluster -- -report-dir="$report/suite" > "$report/suite.log" 2>&1
  code=$?
  grep -E '^(Ran|FAIL!|SUCCESS!)|\[FAIL\]' "$report/suite.log"
  sed -n '/^ *Capability matrix/,/^ *nonconformant capabilities/p' "$report/suite.log"
  echo "cluster self-test: cluster suite exit code $code after $(( $(date +%s) - start ))s"
fi
"$kindctl" down || code=1
left=$(docker ps -a --filter "label=io.x-k8s.kind.cluster" --format '{{.Names}}')
if [ -n "$left" ]; then
  echo "kind containers left behind: $left"; code=1
fi
if docker network inspect kind >/dev/null 2>&1; then
  echo "the kind docker network was left behind"; code=1
fi
exit $code
