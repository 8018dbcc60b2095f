#!/usr/bin/env bash
# make api-releases: the API server's specs (label api-release: API, RBAC,
# admission, audit, kubectl debug, SKEW-2's client side) against a
# single-node kind cluster of each release of kind/nodeimage/versions.yaml's
# apiServers, one after the other and past failures. RELEASES="v1.35.8
# v1.36.4" runs some; LABELS changes the label filter. Per release: the node
# image is built (or found cached), a cluster of its own name
# (ectest-api-1-35-8) is made, the specs run, the cluster is deleted.
# Each release's folder $REPORT_DIR/api-releases/<release>/ is one
# self-contained cell: the suite's usual reports, the run's output
# (api-release.log) and cell.tsv (release, exit code, node-image and run
# seconds, last line). api-releases.md and times.tsv sum up every cell
# found there, so cells run one at a time (make api-release K8S=...) add
# up. KIND_NODE_IMAGE=image (one release only) uses that node image, e.g. a
# stock kindest/node of the release, instead of building one (CI with
# internet access). LOCK=/path wraps each heavy step
# in flock -o (machines shared by several runs). Exits like make
# conformance: 3 if any release's run could not be done, else 1 if any was
# nonconformant, else 0.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
out=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-$PWD/_artifacts}}/api-releases")
procs=${PROCS:-2}
labels=${LABELS:-api-release}
releases=${RELEASES:-$(sed -n 's/^apiServers:[[:space:]]*\[\(.*\)\].*/\1/p' kind/nodeimage/versions.yaml | tr -d ' ' | tr ',' ' ')}
if [ -z "$releases" ]; then
  echo "ectest: no releases: RELEASES is empty and kind/nodeimage/versions.yaml has no apiServers list" >&2
  exit 2
fi
stock=${KIND_NODE_IMAGE:-}
if [ -n "$stock" ] && [ "$(wc -w <<< "$releases")" -ne 1 ]; then
  echo "ectest: KIND_NODE_IMAGE=$stock names one release's node image: give one release (make api-release K8S=...)" >&2
  exit 2
fi
heavy() { if [ -n "${LOCK:-}" ]; then mkdir -p -m 0700 "$(dirname "$LOCK")" && flock -o "$LOCK" "$@"; else "$@"; fi; }

mkdir -p "$out"
bin=$(mktemp -d /tmp/ectest-api-releases-bin.XXXXXX)
trap 'rm -rf "$bin"' EXIT
echo "ectest: api-releases: building the suite binary and tools"
progress "compiling the cluster suite" go_binary test "$bin/cluster.test" ./suites/cluster || exit 3
progress "building ginkgo" go_binary build "$bin/ginkgo" github.com/onsi/ginkgo/v2/ginkgo || exit 3
progress "building ectest-report" go_binary build "$bin/ectest-report" ./cmd/ectest-report || exit 3
progress "building ectest-kind" go_binary build "$bin/ectest-kind" ./cmd/ectest-kind || exit 3

worst=0
for v in $releases; do
  name="ectest-api-$(echo "${v#v}" | tr '.' '-')"
  dir="$out/$v"
  rm -rf "$dir"
  mkdir -p "$dir"
  log="$dir/api-release.log"
  echo "ectest: api-releases: $v: node image (cluster $name)"
  t0=$(date +%s)
  if [ -n "$stock" ]; then
    echo "ectest: api-releases: $v: node image $stock as given (not built here)" | tee -a "$log"
    # The release still goes to the suite: kind writes the kubeadm
    # configuration (and ectest its patches) in the format of that release.
    image_flags=(-kind-node-image="$stock" -kubernetes-version="$v")
    built=0
  else
    heavy "$bin/ectest-kind" node-image -kubernetes-version "$v" >> "$log" 2>&1
    built=$?
    image_flags=(-kubernetes-version="$v")
  fi
  t1=$(date +%s)
  code=3
  if [ $built -eq 0 ]; then
    echo "ectest: api-releases: $v: specs ($labels), reports in $dir"
    heavy "$bin/ginkgo" -p --procs="$procs" --no-color --label-filter="$labels" "$bin/cluster.test" -- \
      "${image_flags[@]}" -cluster-name="$name" -report-dir="$dir" ${CLUSTER_FLAGS:-} >> "$log" 2>&1
    line=$("$bin/ectest-report" -outcome "$dir" 2>&1)
    code=$?
    line=$(tail -n 1 <<< "$line")
  else
    line="ectest: ERROR: the node image of $v did not build (see $log)"
  fi
  t2=$(date +%s)
  # The suite deletes its cluster; a run killed before its end may not have.
  heavy "$bin/ectest-kind" down -name "$name" >> "$log" 2>&1
  echo "$line"
  echo "ectest: api-releases: $v: exit $code; node image $((t1 - t0))s, run $((t2 - t1))s"
  printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$code" "$((t1 - t0))" "$((t2 - t1))" "$line" > "$dir/cell.tsv"
  case $code in
    3) worst=3 ;;
    1) [ $worst -eq 3 ] || worst=1 ;;
    0) ;;
    *) [ $worst -ne 0 ] || worst=$code ;;
  esac
done
# The summary of every cell in $out, this run's and earlier ones'.
printf 'release\texit\tnode_image_seconds\trun_seconds\tline\n' > "$out/times.tsv"
{
  echo "# API server releases"
  echo
  echo "Specs labelled \`$labels\` against a single-node cluster of each release (exit: 0 conformant, 1 nonconformant, 3 not run or error)."
  echo
  echo "| release | exit | outcome | node image | run (cluster up, specs, down) |"
  echo "|---|---|---|---|---|"
} > "$out/api-releases.md"
for cell in $(ls -d "$out"/v*/ 2>/dev/null | sort -V); do
  [ -f "$cell/cell.tsv" ] || continue
  cat "$cell/cell.tsv" >> "$out/times.tsv"
  IFS=$'\t' read -r cv cc ci cr cl < "$cell/cell.tsv"
  printf '| %s | %s | %s | %ss | %ss |\n' "$cv" "$cc" "${cl//|/\\|}" "$ci" "$cr" >> "$out/api-releases.md"
done
echo "ectest: api-releases: $out/api-releases.md (exit $worst)"
exit $worst
