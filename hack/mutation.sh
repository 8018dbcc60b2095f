#!/usr/bin/env bash
# make mutation: the CRI suite through every fault of the fault-injecting
# CRI proxy (a self-test tool, fixtures/criproxy) in front of a private
# containerd; with LAYERS="cri cluster" (or LAYERS=cluster, make
# mutation-cluster) also the cluster suite through each fault that concerns
# the cluster layer, each on a kind cluster of its own whose kubelet talks
# to containerd through the proxy. A fault the suite does not report as the
# nonconformance it declares fails this (exit 1). Reports in
# $REPORT_DIR/mutation. REJUDGE=1 runs nothing and judges the reports
# there again (every layer's). FOCUSED=1 (make test) runs each CRI-layer
# fault but the bases (none, none-containerd-2, strict) and the
# suite-environment scenario
# through only the specs labelled with the capabilities it must turn
# nonconformant and its declared collateral; the reports say which.
# RUNTIME=name runs every CRI-layer fault in front of that embedded runtime
# (one whose OCI runtime is runc: make mutation RUNTIME=cri-o) instead of
# Debian's containerd 1.6 (and containerd-2 for the faults that need it).
# JOBS=N fault runs side by side (2 by default: much of a fault run is
# waiting), each lane on runtimes of its own.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/mutation")
layers=${LAYERS:-cri}
bin=$(mktemp -d /tmp/ectest-mutation-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
if [ -n "${REJUDGE:-}" ]; then # run nothing: judge the reports in $out again
  progress "building ectest-mutation" go_binary build "$bin/ectest-mutation" ./cmd/ectest-mutation || exit 3
  "$bin/ectest-mutation" -rejudge -out="$out"
  code=$?
  sed -n '1,/^## Faults/p' "$out/mutation.md" 2>/dev/null | head -n -1
  exit $code
fi
args=()
case " $layers " in *" cri "*)
  progress "compiling the CRI suite" go_binary test "$bin/cri.test" ./suites/cri || exit 3
  args+=(-suite="$bin/cri.test") ;;
esac
case " $layers " in *" cluster "*)
  progress "compiling the cluster suite" go_binary test "$bin/cluster.test" ./suites/cluster || exit 3
  args+=(-cluster-suite="$bin/cluster.test") ;;
esac
if [ ${#args[@]} -eq 0 ]; then
  echo "ectest: LAYERS=\"$layers\": want cri, cluster or both"; exit 2
fi
progress "building ginkgo" go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
progress "building ectest-mutation" go_binary build "$bin/ectest-mutation" ./cmd/ectest-mutation || exit 3
"$bin/ectest-mutation" "${args[@]}" -ginkgo="$bin/ginkgo" -out="$out" ${FAULTS:+-faults=$FAULTS} ${FOCUSED:+-focused} ${RUNTIME:+-runtime=$RUNTIME} -jobs="${JOBS:-2}"
code=$?
sed -n '1,/^## Faults/p' "$out/mutation.md" 2>/dev/null | head -n -1
exit $code
