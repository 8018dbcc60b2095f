#!/usr/bin/env bash
# Proves the cluster suite's in-cluster form (deploy/sonobuoy) on a kind
# cluster of its own, as an operator of an existing cluster would use it:
#  1. the cluster is made here, then treated as an existing one: its nodes
#     are told to pull from two plain-HTTP registry addresses (the recipe of
#     docs/cluster.md, done on the kind nodes), the node's own for the
#     plugin pod (on the host network) and the kind network's gateway for a
#     run from this machine;
#  2. the static suite binary runs from this machine with only KUBECONFIG=
#     set (no -kubeconfig, no Go on PATH): it must use that cluster;
#  3. the suite image and sonobuoy's image (sonobuoy built from the Go
#     module proxy, its image made here as the test images are) are loaded
#     into the nodes, the plugin's RBAC applied, `sonobuoy run --plugin` run;
#     progress must show in `sonobuoy status` while it runs, the results
#     are retrieved and their verdicts must equal the run from outside
#     (ectest-report -soak: every spec and capability the same);
#  4. everything is removed (sonobuoy delete, the RBAC, the cluster), also
#     when cut short.
# Reports in $ARTIFACTS/sonobuoy-selftest (default _artifacts).
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
go=${GO:-go}
report=$(realpath -m "${ARTIFACTS:-_artifacts}/sonobuoy-selftest")
rm -rf "$report"
mkdir -p "$report"
# Everything it prints is also kept with the reports.
exec > >(tee "$report/selftest.log") 2>&1
work=$(mktemp -d /tmp/ectest-sonobuoy.XXXXXX)
name=ectest-sonobuoy

# Cut short or failed: deleting the cluster removes what the run made in
# it (sonobuoy's namespace, the RBAC); the success path removes each itself
# first and checks it went.
cleanup() {
  local rc=$?
  [ -x "$work/ectest-kind" ] && "$work/ectest-kind" down -name "$name" >> "$report/cleanup.log" 2>&1
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ldflags=$(version_ldflags)
progress "building ectest-kind, ectest-sonobuoy and ectest-report" $go build -ldflags "$ldflags" -o "$work/" ./cmd/ectest-kind ./cmd/ectest-sonobuoy ./cmd/ectest-report || exit 1
# suite_image, sonobuoy_version, sonobuoy_image, registry_port, kubernetes_version
eval "$("$work/ectest-sonobuoy" defaults)"
sonobuoy_dir="${XDG_CACHE_HOME:-$HOME/.cache}/ectest/bin/sonobuoy-$sonobuoy_version"
progress "compiling the static cluster suite" env CGO_ENABLED=0 $go test -c -ldflags "$ldflags" -o "$work/cluster.test" ./suites/cluster || exit 1
# From a throwaway module (go install mod@version asks the proxy for the
# module's version list, which it refuses here), stamped with its version
# as sonobuoy's own release build does.
build_sonobuoy() {
  local mod
  mod=$(mktemp -d /tmp/ectest-sonobuoy-mod.XXXXXX)
  printf 'module ectest.local/sonobuoy-build\n\ngo 1.26\n\nrequire github.com/vmware-tanzu/sonobuoy %s\n' "$sonobuoy_version" > "$mod/go.mod"
  mkdir -p "$sonobuoy_dir"
  (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod $go build -trimpath \
    -ldflags "-s -w -X github.com/vmware-tanzu/sonobuoy/pkg/buildinfo.Version=$sonobuoy_version" \
    -o "$sonobuoy_dir/sonobuoy.partial" github.com/vmware-tanzu/sonobuoy) &&
    mv "$sonobuoy_dir/sonobuoy.partial" "$sonobuoy_dir/sonobuoy"
  local rc=$?
  rm -rf "$mod"
  return $rc
}
if [ ! -x "$sonobuoy_dir/sonobuoy" ]; then
  progress "building sonobuoy $sonobuoy_version from the Go module proxy (once)" build_sonobuoy || exit 1
fi
sb="$sonobuoy_dir/sonobuoy"
progress "installing busybox-static (the suite image's shell)" $go run ./cmd/ectest-deps debug-image || exit 1
progress "building the node image" "$work/ectest-kind" node-image > /dev/null || exit 1
kubectl=$(progress "building kubectl $kubernetes_version" "$work/ectest-kind" kubectl "$kubernetes_version" | awk '{print $2}')
[ -x "$kubectl" ] || { echo "ectest: no kubectl $kubernetes_version"; exit 1; }

kubeconfig=$(progress "creating the cluster $name" "$work/ectest-kind" up -name "$name" | tail -n 1)
[ -f "$kubeconfig" ] || { echo "ectest: no cluster"; exit 1; }
ipv4='^[0-9]+(\.[0-9]+){3}$'
node_ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$name-control-plane" | tr ' ' '\n' | grep -m1 -E "$ipv4")
gateway=$(docker network inspect kind -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | tr ' ' '\n' | grep -m1 -E "$ipv4")
[ -n "$node_ip" ] && [ -n "$gateway" ] || { echo "ectest: no IPv4 address of the node ($node_ip) or the kind network's gateway ($gateway)"; exit 1; }
port=$registry_port
"$work/ectest-kind" trust-registry -name "$name" "$node_ip:$port" "$gateway:$port" || exit 1
clusters_before=$(docker ps -a --filter label=io.x-k8s.kind.cluster --format '{{.Label "io.x-k8s.kind.cluster"}}' | sort -u | tr '\n' ' ')

# 2. From this machine, with only KUBECONFIG= (a Go-less PATH).
start=$SECONDS
(cd "$work" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$HOME" KUBECONFIG="$kubeconfig" NO_COLOR=1 \
  ./cluster.test -parallel=2 -ginkgo.randomize-all -registry-addr="$gateway:$port" -report-dir="$report/out-of-cluster") > "$report/out-of-cluster.log" 2>&1
ocode=$?
echo "sonobuoy self-test: the run from outside with only KUBECONFIG= set: exit $ocode after $((SECONDS - start))s"
tail -n 1 "$report/out-of-cluster.log"
code=0
# It used that cluster: it made no kind cluster of its own.
clusters=$(docker ps -a --filter label=io.x-k8s.kind.cluster --format '{{.Label "io.x-k8s.kind.cluster"}}' | sort -u | tr '\n' ' ')
if [ "$clusters" != "$clusters_before" ]; then
  echo "sonobuoy self-test: the run from outside with KUBECONFIG= made a cluster of its own: kind clusters before: $clusters_before; after: $clusters"; code=1
fi

# 3. In the cluster, through sonobuoy.
start=$SECONDS
ref=$("$work/ectest-sonobuoy" image -suite "$work/cluster.test" -kubectl "$kubectl" -o "$work/suite.tar") || exit 1
"$work/ectest-sonobuoy" sonobuoy-image -sonobuoy "$sb" -o "$work/sonobuoy.tar" > /dev/null || exit 1
progress "loading the suite image and sonobuoy's into the nodes" "$work/ectest-kind" load-image -name "$name" "$work/suite.tar" "$work/sonobuoy.tar" || exit 1
"$work/ectest-sonobuoy" rbac > "$work/rbac.yaml"
"$work/ectest-sonobuoy" plugin -image "$ref" > "$report/ectest-plugin.yaml"
"$kubectl" --kubeconfig "$kubeconfig" apply -f "$work/rbac.yaml" > "$report/rbac.log" 2>&1 || { cat "$report/rbac.log"; exit 1; }
"$sb" run --kubeconfig "$kubeconfig" --plugin "$report/ectest-plugin.yaml" --sonobuoy-image "$sonobuoy_image" \
  --image-pull-policy IfNotPresent --skip-preflight=existingnamespace --aggregator-permissions=clusterRead > "$report/sonobuoy-run.log" 2>&1 || { cat "$report/sonobuoy-run.log"; exit 1; }
# Wait for the plugin (a bound, not a guess: the suite's own timeouts end
# it well before), keeping each status that showed progress.
deadline=$((SECONDS + 1200))
seen=0
while :; do
  status=$("$sb" status --kubeconfig "$kubeconfig" --json 2>/dev/null)
  if grep -q '"completed":[1-9]' <<<"$status"; then
    seen=$((seen + 1))
    echo "$status" >> "$report/sonobuoy-status.jsonl"
  fi
  # The run's own status (after the plugins' list): complete once
  # sonobuoy has its results tarball, failed if it gave up.
  grep -qE '\}\],"status":"(complete|failed)"' <<<"$status" && break
  # Its aggregator pod failed: sonobuoy says so instead of a status.
  if grep -q "in the 'Failed' state" <<<"$status"; then
    echo "sonobuoy self-test: sonobuoy status: $status"; "$sb" logs --kubeconfig "$kubeconfig" > "$report/sonobuoy-logs.txt" 2>&1; exit 1
  fi
  if ((SECONDS > deadline)); then
    echo "sonobuoy self-test: the plugin did not finish in 20 minutes: $status"; exit 1
  fi
  sleep 5 # sonobuoy status has no watch: poll
done
"$sb" status --kubeconfig "$kubeconfig" > "$report/sonobuoy-status.txt" 2>&1
echo "sonobuoy self-test: the plugin ran in $((SECONDS - start))s; $seen status reads showed progress"
[ "$seen" -gt 0 ] || { echo "sonobuoy self-test: sonobuoy status never showed the plugin's progress"; code=1; }
tarball=$("$sb" retrieve --kubeconfig "$kubeconfig" "$work") || { echo "sonobuoy self-test: retrieve failed"; exit 1; }
mkdir -p "$work/results" "$report/in-cluster"
tar -xzf "$tarball" -C "$work/results"
summary=$(find "$work/results/plugins/ectest" -name summary.json | head -n 1)
[ -n "$summary" ] || { echo "sonobuoy self-test: no summary.json in the retrieved results"; find "$work/results/plugins" | head -20; exit 1; }
cp -r "$(dirname "$summary")/." "$report/in-cluster/"
"$sb" results "$tarball" > "$report/sonobuoy-results.txt" 2>&1
echo "out-of-cluster: $(tail -n 1 "$report/out-of-cluster.log")"
echo "in-cluster:     $(tail -n 1 "$report/in-cluster/suite.log")"
"$sb" logs --kubeconfig "$kubeconfig" > "$report/sonobuoy-logs.txt" 2>&1
"$work/ectest-report" -soak "in-cluster (sonobuoy) against out-of-cluster" -o "$report" "$report/out-of-cluster" "$report/in-cluster" || code=1

# 4. Removed as a user removes it, and gone.
"$sb" delete --kubeconfig "$kubeconfig" --wait=10 > "$report/sonobuoy-delete.log" 2>&1 || { echo "sonobuoy self-test: sonobuoy delete failed"; cat "$report/sonobuoy-delete.log"; code=1; }
# sonobuoy delete alone removes the plugin's RBAC (it carries sonobuoy's
# labels): what it leaves is named before the file's own delete.
rbacleft=$("$kubectl" --kubeconfig "$kubeconfig" get clusterrole/ectest clusterrole/ectest-namespace clusterrolebinding/ectest --ignore-not-found -o name 2>&1)
if [ -n "$rbacleft" ]; then
  echo "sonobuoy self-test: sonobuoy delete left the plugin's RBAC: $rbacleft"; code=1
fi
"$kubectl" --kubeconfig "$kubeconfig" delete --ignore-not-found -f "$work/rbac.yaml" > "$report/rbac-delete.log" 2>&1 || { echo "sonobuoy self-test: deleting the RBAC failed"; cat "$report/rbac-delete.log"; code=1; }
left=$("$kubectl" --kubeconfig "$kubeconfig" get namespace/sonobuoy clusterrole/ectest clusterrole/ectest-namespace clusterrolebinding/ectest --ignore-not-found -o name 2>&1)
left+=$("$kubectl" --kubeconfig "$kubeconfig" get namespaces -l ectest.io/run -o name 2>&1)
if [ -n "$left" ]; then
  echo "sonobuoy self-test: left in the cluster: $left"; code=1
fi
echo "sonobuoy self-test: exit $code"
exit $code
