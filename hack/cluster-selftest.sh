#!/usr/bin/env bash
# Tests the offline kind cluster pipeline and the cluster suite: builds what
# is missing (cached by version under the user cache dir), creates the
# default cluster (node runtime containerd-2, or $NODE_RUNTIME), checks a
# target pod and an ephemeral container pulled at debug time, runs the
# cluster suite on it in parallel (its verdicts must be the project's
# expectations, -expect=builtin: conformant but for the kubelet's known
# deviation, removed-stays-gone), interrupts a run with Ctrl-C and checks
# it left nothing, kills the node's containerd in the middle of a run (a run
# error, never a verdict), deletes the cluster, then runs the skew specs on one
# version-skew pair (a control plane of N, a worker with N-1's kubelet; the
# four-kubelet cluster is make skew's, too long for CI), and fails if any
# kind container or network is left. The cluster suite runs as
# a compiled binary from a directory outside the source tree, with a PATH
# that has no Go toolchain, as on a machine that only has the binary.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
report=$(realpath -m "${ARTIFACTS:-_artifacts}/cluster-selftest")
mkdir -p "$report"
progress "building ectest-kind" go_binary build "$report/ectest-kind" ./cmd/ectest-kind || exit 1
kindctl="$report/ectest-kind"
bin=$(mktemp -d /tmp/ectest-cluster-bin.XXXXXX)
# Cut short (a signal, an early exit): the skew pair's run is interrupted
# (Ctrl-C to its processes, which clean up) and waited for.
trap 'if [ -n "${skew_pid:-}" ]; then pkill -INT -P "$skew_pid" 2>/dev/null; wait "$skew_pid" 2>/dev/null; fi; rm -rf "$bin"' EXIT
progress "compiling the cluster suite" go_binary test "$bin/cluster.test" ./suites/cluster || exit 1
progress "building ginkgo" go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 1

# The skew pair: its node images built here (Go is on PATH), then the skew
# specs from the Go-less suite binary, which makes the cluster from them
# and deletes it at the end. It runs beside the Ctrl-C and runtime-kill
# tests (a cluster of its own; they mostly wait), its output kept until
# they are done.
skew_pair() {
  local start scode
  start=$(date +%s)
  "$kindctl" node-image -topology=skew-pair $node_flags > /dev/null
  scode=$?
  if [ "$scode" -eq 0 ]; then
    (cd "$bin" && env PATH=/usr/sbin:/usr/bin:/sbin:/bin ./ginkgo -p --procs=4 --randomize-all --no-color --label-filter=skew ./cluster.test -- -report-dir="$report/skew-pair" -topology=skew-pair $node_flags) > "$report/skew-pair.log" 2>&1
    scode=$?
    grep -E '^(Ran|FAIL!|SUCCESS!)|\[FAIL\]' "$report/skew-pair.log"
    sed -n '/^ *Capability matrix/,/^ *nonconformant capabilities/p' "$report/skew-pair.log"
  fi
  echo "cluster self-test: skew pair exit code $scode after $(( $(date +%s) - start ))s"
  "$kindctl" down -topology=skew-pair || scode=1
  return "$scode"
}

start=$(date +%s)
node_flags="${KUBERNETES_VERSION:+-kubernetes-version=$KUBERNETES_VERSION} ${NODE_RUNTIME:+-node-runtime=$NODE_RUNTIME}"
"$kindctl" smoke -report-dir="$report" $node_flags
code=$?
echo "cluster self-test: smoke exit code $code after $(( $(date +%s) - start ))s"
if [ "$code" -eq 0 ]; then
  start=$(date +%s)
  # The binary's own -parallel (its exit code is the run's, after the
  # expectations), with the Ginkgo settings a -p run has; one process per
  # CPU, 2 to 4: four on a 2-CPU machine starved runc once ("unable to
  # freeze" starting an ephemeral container of STORY-AUTO's burst).
  procs=$(nproc 2>/dev/null || echo 2)
  (( procs < 2 )) && procs=2
  (( procs > 4 )) && procs=4
  (cd "$bin" && env PATH=/usr/sbin:/usr/bin:/sbin:/bin NO_COLOR=1 ./cluster.test -parallel="$procs" -ginkgo.randomize-all -report-dir="$report/suite" -expect=builtin $node_flags) > "$report/suite.log" 2>&1
  code=$?
  grep -E '^(Ran|FAIL!|SUCCESS!)|\[FAIL\]' "$report/suite.log"
  sed -n '/^ *Capability matrix/,/^ *nonconformant capabilities/p' "$report/suite.log"
  echo "cluster self-test: cluster suite exit code $code after $(( $(date +%s) - start ))s"
  skew_pair > "$report/skew-pair.out" 2>&1 &
  skew_pid=$!
  # Ctrl-C in the middle of a run on the same (reused) cluster, then the
  # run's objects must be gone and the cluster still there; then the node's
  # containerd killed in the middle of a run: a run error, never a verdict.
  start=$(date +%s)
  kubeconfig=$("$kindctl" up $node_flags 2>/dev/null | tail -n 1)
  ECTEST_SELFTEST_SUITE_DIR="$bin" ECTEST_SELFTEST_KUBECONFIG="$kubeconfig" ECTEST_SELFTEST_LOG_DIR="$report" $go test -count=1 -v -run 'TestClusterInterrupt|TestClusterFromKubeconfigEnv|TestClusterRuntimeKilled' ./suites/selftest > "$report/interrupt.log" 2>&1
  icode=$?
  grep -E '^ *(--- |ok|FAIL)|went away' "$report/interrupt.log"
  # On a failure, what the tests said (t.Errorf and t.Fatalf, and the
  # t.Logf lines among them), each cut to one screen line; the whole log is
  # in the artifacts.
  [ "$icode" -eq 0 ] || grep -E '^ +[a-z_]+_test\.go:[0-9]+: ' "$report/interrupt.log" | grep -v 'run error:' | cut -c1-400 | head -n 40
  echo "cluster self-test: Ctrl-C and runtime-kill tests exit code $icode after $(( $(date +%s) - start ))s"
  [ "$icode" -eq 0 ] || code=$icode
fi
"$kindctl" down || code=1
if [ -n "${skew_pid:-}" ]; then
  wait "$skew_pid"
  scode=$?
  skew_pid=""
  cat "$report/skew-pair.out"
else
  skew_pair
  scode=$?
fi
[ "$scode" -eq 0 ] || code=$scode
left=$(docker ps -a --filter "label=io.x-k8s.kind.cluster" --format '{{.Names}}')
if [ -n "$left" ]; then
  echo "kind containers left behind: $left"; code=1
fi
if docker network inspect kind >/dev/null 2>&1; then
  echo "the kind docker network was left behind"; code=1
fi
exit $code
