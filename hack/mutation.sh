#!/usr/bin/env bash
# make mutation: the CRI suite through every fault of the fault-injecting
# CRI proxy (a self-test tool, fixtures/criproxy) in front of a private
# containerd; a fault the suite does not report as the nonconformance it
# declares fails this (exit 1). Reports in $REPORT_DIR/mutation.
set -uo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/mutation")
bin=$(mktemp -d /tmp/ectest-mutation-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
$go test -c -o "$bin/cri.test" ./suites/cri || exit 3
$go build -o "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
$go build -o "$bin/ectest-mutation" ./fixtures/criproxy/ectest-mutation || exit 3
"$bin/ectest-mutation" -suite="$bin/cri.test" -ginkgo="$bin/ginkgo" -out="$out" ${FAULTS:+-faults=$FAULTS}
code=$?
sed -n '1,/^## Faults/p' "$out/mutation.md" 2>/dev/null | head -n -1
exit $code
