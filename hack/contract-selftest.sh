#!/usr/bin/env bash
# The exit-code contract, entry point by entry point (make test): the CRI
# suite binary serial and with -parallel, make conformance-cri, make certify
# and make conformance, each with bad input, a misspelt label, a
# nonconformance, a run error and Ctrl-C (suites/selftest/contract_test.go),
# and the expectation files turning on a change: make certify EXPECT=builtin
# against a runtime as it is (exit 0, "as expected") and through a CRI-proxy
# fault that adds a deviation (exit 1, "CHANGED"). make certify runs against
# runtimes started outside the suite (cmd/ectest-runtime), as a vendor's are.
# The table of codes and last lines: $ARTIFACTS/contract/contract.md.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
out=$(realpath -m "${ARTIFACTS:-_artifacts}/contract")
rm -rf "$out"
mkdir -p "$out"
bin=$(mktemp -d /tmp/ectest-contract-bin.XXXXXX)
pids=()
cleanup() {
  [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$bin"
}
trap cleanup EXIT
build() {
  go_binary test "$bin/cri.test" ./suites/cri && go_binary build "$bin/ectest-runtime" ./cmd/ectest-runtime
}
progress "compiling the CRI suite and ectest-runtime" build || exit 3
# What the make entry points compile (hack/suite.sh, hack/conformance.sh),
# linked here, two at a time, before the cases that run them side by side:
# each entry point's own compile step then finds them up to date
# (go_binary, hack/lib.sh) and links nothing.
warm() {
  both go_binary -stamp test "$bin/warm/cri.test" ./suites/cri -- go_binary -stamp test "$bin/warm/cluster.test" ./suites/cluster &&
    both go_binary build "$bin/warm/ectest-report" ./cmd/ectest-report -- go_binary build "$bin/warm/ectest-kind" ./cmd/ectest-kind &&
    rm -rf "$bin/warm"
}
progress "compiling what the make entry points compile" warm || exit 3
registry=127.0.0.1:5078
# Two runtimes started outside the suite: as they are, and through the CRI
# proxy with a fault that adds one deviation (logs: the container logs come
# back empty).
exec 3< <(exec "$bin/ectest-runtime" -registry-addr=$registry -log-dir="$out" 2>"$out/runtime.log")
pids+=($!)
exec 4< <(exec "$bin/ectest-runtime" -registry-addr=$registry -fault=logs-empty 2>"$out/runtime-fault.log")
pids+=($!)
# A third: Debian's containerd as it is installed, with no CNI network, whose
# Status says NetworkReady false: a run against it is a run error, never a
# verdict (TestNotReadyRuntimeIsRunError).
notready_registry=127.0.0.1:5079
exec 5< <(exec "$bin/ectest-runtime" -runtime=containerd-1.6 -no-network -registry-addr=$notready_registry 2>"$out/runtime-notready.log")
pids+=($!)
read -r endpoint <&3 || { echo "ectest: the runtime outside the suite did not start:"; cat "$out/runtime.log"; exit 3; }
read -r faulty <&4 || { echo "ectest: the runtime behind the CRI proxy did not start:"; cat "$out/runtime-fault.log"; exit 3; }
read -r notready <&5 || { echo "ectest: the runtime without a network did not start:"; cat "$out/runtime-notready.log"; exit 3; }
echo "ectest: runtimes outside the suite at $endpoint, (through the fault logs-empty) $faulty and (no CNI network) $notready"
ECTEST_SELFTEST_CONTRACT_BIN="$bin" ECTEST_SELFTEST_CONTRACT_OUT="$out" ECTEST_SELFTEST_CONTRACT_REGISTRY=$registry \
  ECTEST_SELFTEST_CONTRACT_ENDPOINT="$endpoint" ECTEST_SELFTEST_CONTRACT_FAULT_ENDPOINT="$faulty" \
  ECTEST_SELFTEST_CONTRACT_NOTREADY_ENDPOINT="$notready" ECTEST_SELFTEST_CONTRACT_NOTREADY_REGISTRY=$notready_registry \
  $go test -count=1 -timeout 60m -v -run 'TestExitCodeContract|TestExpectationsTurnOnAChange|TestNotReadyRuntimeIsRunError|TestInterruptOutsideRuntimeLeavesNothing' ./suites/selftest 2>&1 | tee "$out/contract.log" | grep -E '^(=== RUN|\s*--- |PASS|FAIL|ok)'
code=${PIPESTATUS[0]}
cat "$out/contract.md" 2>/dev/null
exit "$code"
