#!/usr/bin/env bash
# make test: every stage of the project's own tests, in one lane or two.
#
#   verify, prepare-host (the Docker engine kind runs on), then side by side:
#     the cluster lane:  cluster-selftest (kind on the host's Docker engine)
#     the CRI lane:      unit, selftest, contract, windows-selftest, mutation
#
# The lanes share nothing a check of the other looks at: the cluster lane
# uses the host's Docker engine and kind containers only (its checks look
# at kind's containers and network), the CRI lane embedded runtimes under
# /var/lib/ectest/embedded (its checks leave the Docker engine's networks,
# mounts and rules alone, suites/selftest/hostsnapshot_test.go); each lane
# runs its own stages one at a time.
#
# A lane stops at its first failing stage; the other goes on to its end,
# so one run tells about both. The cluster lane's output goes to
# $REPORT_DIR/cluster-selftest.log and is shown (each line marked) once the
# CRI lane is done, then followed until the cluster lane ends. At the end a
# table of each stage's start, time, exit code and the CPU time the machine
# spent while it ran (test-stages.md: what a stage costs, where it waits), and the
# exit code of the first failing stage in the table's order (0 if none).
# Below the table, how busy the machine's CPUs were over the whole run
# (/proc/stat): near 100% says make test is bound by CPU here, and more
# lanes would not make it shorter. The lanes run side by side on a machine
# of 4 CPUs or more; below that (or with LANES=1) the cluster lane runs
# after the CRI lane (LANES=2 forces them side by side).
# Ctrl-C, SIGTERM or SIGHUP stops both lanes (each cleans up as it does on
# its own) and the run ends with 130.
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
make=${MAKE:-make}
dir=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-_artifacts}}")
mkdir -p "$dir"
tsv=$dir/test-stages.tsv
: > "$tsv"
t0=$(date +%s)

# cpu_ticks: the machine's busy and all CPU time so far, in clock ticks.
cpu_ticks() {
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ < /proc/stat
  echo "$(( user + nice + system + irq + softirq + steal )) $(( user + nice + system + idle + iowait + irq + softirq + steal ))"
}
read -r busy0 all0 < <(cpu_ticks)
ticks=$(getconf CLK_TCK 2>/dev/null || echo 100)

# stage LANE NAME CMD [ARG...]: CMD timed, a row of the table, with the
# CPU time the whole machine spent meanwhile (the other lane's too, where
# two run side by side).
stage() {
  local lane=$1 name=$2 start code b0 a0 b1 a1
  shift 2
  start=$(date +%s%N)
  read -r b0 a0 < <(cpu_ticks)
  "$@"
  code=$?
  read -r b1 a1 < <(cpu_ticks)
  # (start in nanoseconds: the table's order is the stages' start.)
  echo -e "$name\t$lane\t$start\t$(( ($(date +%s%N) - start) / 1000000000 ))\t$code\t$(( (b1 - b0) / ticks ))\t$(( 100 * (b1 - b0) / (a1 - a0 + 1) ))" >> "$tsv"
  return "$code"
}

table() {
  local code=0 n l s d c u p e1 e2 e3 busy all
  {
    echo "| stage | lane | started | time | exit | CPU time (machine) |"
    echo "|---|---|---|---|---|---|"
    while IFS=$'\t' read -r n l s d c u p; do
      _ectest_elapsed e1 $(( s / 1000000000 - t0 ))
      _ectest_elapsed e2 "$d"
      _ectest_elapsed e3 "$u"
      printf '| %s | %s | +%s | %s | %s | %s (%s%%) |\n' "$n" "$l" "$e1" "$e2" "$c" "$e3" "$p"
      [ "$code" -ne 0 ] || code=$c
    done < <(sort -t$'\t' -k3,3n "$tsv")
    _ectest_elapsed e1 $(( $(date +%s) - t0 ))
    read -r busy all < <(cpu_ticks)
    _ectest_elapsed e3 $(( (busy - busy0) / ticks ))
    printf '| all | | | %s | %s | %s |\n' "$e1" "$code" "$e3"
    echo
    echo "The machine's $(nproc) CPUs were $(( 100 * (busy - busy0) / (all - all0 + 1) ))% busy over the run; a stage's CPU time is the whole machine's while it ran (in percent of all CPUs), the other lane's too where two run side by side."
  } > "$dir/test-stages.md"
  echo "ectest: make test stages (also in $dir/test-stages.md):"
  cat "$dir/test-stages.md"
  return "$code"
}

stage - verify "$make" --no-print-directory verify || { table; exit; }
# The Docker engine up and configured before the lanes part (the cluster
# lane's kind needs it, and would start it): the CRI lane's leak checks
# then never bracket the engine's first start, whose new tables and chain
# policies are not the engine's by any account it gives.
prepare_host() {
  local b rc
  b=$(mktemp -d /tmp/ectest-test-bin.XXXXXX) || return
  go_binary build "$b/ectest-kind" ./cmd/ectest-kind && "$b/ectest-kind" prepare-host
  rc=$?
  rm -rf "$b"
  return "$rc"
}
stage - prepare-host prepare_host || { table; exit; }

cri_lane() {
  stage cri unit "$make" --no-print-directory unit &&
    stage cri selftest hack/selftest.sh &&
    stage cri contract hack/contract-selftest.sh &&
    stage cri windows-selftest hack/windows-selftest.sh &&
    FOCUSED=1 stage cri mutation hack/mutation.sh
}
cluster_lane() {
  stage cluster cluster-selftest hack/cluster-selftest.sh
}
log=$dir/cluster-selftest.log
# Lanes where the CPUs allow: measured on a 2-CPU machine, make test is
# bound by CPU. At 30 CPU-minutes of stages two lanes took 18m18s to
# 20m42s in four runs against about 20 minutes one after the other; at 24
# (2026-11-29) 14m26s (CPUs 90% busy) against 15m43s (76%), with every
# suite's spec times about doubled by the contention (the cluster suite's
# first pod after 19 to 27 s instead of 5 to 7). So two lanes from 4 CPUs
# on, one lane below: a minute is not worth the steadiness.
lanes=${LANES:-$(( $(nproc) >= 4 ? 2 : 1 ))}
echo "ectest: make test in $lanes lane(s) on $(nproc) CPUs (LANES=1 or 2 to choose)"
if [ "$lanes" = 1 ]; then
  cri_lane
  cluster_lane
  table
  exit
fi
echo "ectest: the cluster lane (cluster-selftest) runs beside the CRI lane; its output: $log"
# Each lane in a process group of its own (job control on for their start
# only: a background job of a script would otherwise ignore Ctrl-C, which
# the stages need to clean up), its stdin /dev/null (a background group
# reading the terminal would stop). This shell waits for them (a wait ends
# on a signal, where a foreground command would hold the trap until it
# ended) and passes Ctrl-C, SIGTERM and SIGHUP on to both as Ctrl-C; each
# lane then cleans up as it does alone, and is waited for.
set -m
cluster_lane < /dev/null > "$log" 2>&1 &
lane=$!
cri_lane < /dev/null &
cri=$!
set +m
interrupted=
# shellcheck disable=SC2064 # the lanes' pids are fixed now
trap "interrupted=1; kill -INT -- -$lane -$cri 2>/dev/null" INT TERM HUP
# The lanes' groups get SIGTERM if this shell ends before them (set -e
# nowhere, but a shell killed by an untrapped signal runs no trap either:
# SIGKILL leaves them to finish, and clean up, on their own).
# shellcheck disable=SC2064
trap "kill -TERM -- -$lane -$cri 2>/dev/null" EXIT

# wait_job PID: PID's exit code, waiting again while a signal (trapped
# above) ends a wait before the job did.
wait_job() {
  local rc
  while :; do
    wait "$1"
    rc=$?
    kill -0 "$1" 2>/dev/null || return "$rc"
  done
}
wait_job "$cri"
cri_code=$?
echo "ectest: the cluster lane's output (cluster-selftest, $log):"
tail -n +1 -f --pid="$lane" "$log" | sed -u 's/^/  cluster | /'
wait_job "$lane"
lane_code=$?
table
code=$?
# A lane that ended without a row of its own (killed by a signal none of
# its stages could trap) still fails the run.
if [ "$code" -eq 0 ]; then
  for c in "$cri_code" "$lane_code"; do
    if [ "$c" -ne 0 ]; then
      echo "ectest: a lane ended with exit code $c"
      code=$c
      break
    fi
  done
fi
[ -z "$interrupted" ] || exit 130
exit "$code"
