#!/usr/bin/env bash
# make windows-selftest: a SELF-TEST of the suite's Windows code path, never
# Windows conformance. ectest-windows-selftest runs the compiled CRI suite
# through the CRI proxy's windows personality (a private Linux containerd
# playing containerd on Windows) and a negative control; suites/selftest
# then checks the matrix says what a Windows run must say
# (suites/selftest/expected/windows/). Reports in $REPORT_DIR/windows-selftest.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/windows-selftest")
bin=$(mktemp -d /tmp/ectest-windows-selftest-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
progress "compiling the CRI suite" go_binary test "$bin/cri.test" ./suites/cri || exit 3
progress "building ectest-windows-selftest" go_binary build "$bin/ectest-windows-selftest" ./cmd/ectest-windows-selftest || exit 3
start=$(date +%s)
"$bin/ectest-windows-selftest" -suite="$bin/cri.test" -out="$out" || exit $?
echo "ectest: windows-selftest: suite runs took $(( $(date +%s) - start ))s; checking the reports"
ECTEST_WINDOWS_SELFTEST_DIR="$out" $go test -count=1 -run TestWindowsSelfTest -v ./suites/selftest 2>&1 | tee "$out/selftest.log" | grep -E '^(=== RUN|--- |PASS|FAIL|ok|\s+\S+_test.go)'
code=${PIPESTATUS[0]}
# The nightly's Windows cell (hack/windows-cell.sh), here up to its first
# Windows-only step: the released windows/amd64 suite built, its checksum
# checked and unpacked, the images file written; then it must stop, saying
# what it would have done, exit 0.
start=$(date +%s)
REPORT_DIR="$out/windows-cell" bash hack/windows-cell.sh > "$out/windows-cell.log" 2>&1
cell=$?
grep '^ectest: windows cell:' "$out/windows-cell.log"
echo "ectest: windows-selftest: the Windows cell's script exit code $cell after $(( $(date +%s) - start ))s"
if [ "$cell" -ne 0 ] || ! grep -q 'step containerd is Windows-only' "$out/windows-cell.log" || ! grep -q 'ectest-cri.exe unpacked' "$out/windows-cell.log"; then
  echo "ectest: windows-selftest: the Windows cell's script did not run its portable steps and stop at the first Windows-only one:"
  tail -20 "$out/windows-cell.log"
  code=1
fi
exit "$code"
