#!/bin/sh
# The entry point of the ectest sonobuoy plugin, in the suite image
# (ectest-sonobuoy image): runs the cluster suite against the cluster of
# the pod's service account, with its registry where the nodes pull from
# (the node's address, the pod being on the host network, and
# $ECTEST_REGISTRY_PORT), posts progress to sonobuoy's worker, then hands
# the worker the reports: a tarball of the report folder (JUnit,
# summary.json, the matrix, the suite's log and exit code) named in the
# done file. SIGTERM (sonobuoy delete, its timeout) reaches the suite,
# which cleans up and writes its reports before they are handed over.
set -f # ECTEST_FLAGS is a list of flags, never a glob
results=${SONOBUOY_RESULTS_DIR:-/tmp/sonobuoy/results}
report=/tmp/ectest-report
mkdir -p "$results" "$report"
addr=${ECTEST_REGISTRY_ADDR:-${HOST_IP:?HOST_IP is not set (the plugin definition sets it from status.hostIP)}:${ECTEST_REGISTRY_PORT:-5111}}
echo "ectest plugin: $(/ectest/cluster.test -version); registry at $addr"
: > "$report/suite.log"
tail -f "$report/suite.log" &
tailpid=$!
# shellcheck disable=SC2086 # ECTEST_FLAGS: one flag per word
/ectest/cluster.test -parallel="${ECTEST_PARALLEL:-2}" -ginkgo.randomize-all -ginkgo.no-color \
  -report-dir="$report" -registry-addr="$addr" \
  -progress-url="http://localhost:${SONOBUOY_PROGRESS_PORT:-8099}/progress" $ECTEST_FLAGS >> "$report/suite.log" 2>&1 &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
wait "$pid"
code=$?
# A signal ends the wait, not the suite: wait for the suite's own end.
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  code=$?
done
kill "$tailpid" 2>/dev/null
echo "$code" > "$report/exit-code"
echo "ectest plugin: the suite exited with $code"
tar -czf "$results/ectest.tar.gz" -C "$report" .
printf '%s' "$results/ectest.tar.gz" > "$results/done"
