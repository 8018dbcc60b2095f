#!/usr/bin/env bash
# make matrix: the cells of hack/matrix.yaml (CRI suite per embedded runtime,
# the cluster suite per cluster), past failures, each cell's reports in
# $REPORT_DIR/matrix/cells/<cell>/, then one page: matrix.html, matrix.md,
# matrix.json (the previous one kept as matrix.previous.json). The logic is
# Go's (cmd/ectest-matrix); see docs/matrix.md.
#   CELLS=a,b        run only these cells (the others show as not run)
#   PARALLEL=N       cells at once (default: one per two CPUs; JOBS=N says the same);
#                    cells sharing a lock (/run/ectest/heavy.lock) still run one at a time
#   MERGE_ONLY=1     run nothing: the page from the cell folders there are (CI)
#   MATRIX_FLAGS=... more flags (-previous FILE, -cells-dir DIR, -config FILE)
#   EXPECT=...       the cells' expectation files (make matrix: builtin, the
#                    project's own): a cell exits 1 only when its verdicts changed
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
export EXPECT=${EXPECT:-builtin}
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/matrix")
flags=(-o "$out")
[ -n "${CELLS:-}" ] && flags+=(-cells "$CELLS")
parallel=${PARALLEL:-${JOBS:-}}
[ -n "$parallel" ] && flags+=(-parallel "$parallel")
[ -n "${MERGE_ONLY:-}" ] && flags+=(-merge-only)
bin=$(mktemp -d /tmp/ectest-matrix-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
progress "building ectest-matrix" go_binary build "$bin/ectest-matrix" ./cmd/ectest-matrix || exit 3
# shellcheck disable=SC2086 # MATRIX_FLAGS is a list of flags
"$bin/ectest-matrix" "${flags[@]}" ${MATRIX_FLAGS:-}
