#!/usr/bin/env bash
# make soak: the flake campaign (R4). Runs the CRI suite against the
# embedded runtime N times in a row and the cluster suite N times in a row
# on one kind cluster (made first, deleted at the end), each run randomized
# (-ginkgo.randomize-all, a new seed each time) in PROCS processes, as the
# compiled suite binaries a vendor runs; then compares the verdicts and spec
# outcomes of every run of each suite (ectest-report -soak) and writes
# which specs or capabilities ever differed, with the run folders holding
# their logs, into $REPORT_DIR/soak/<suite>/soak.md. RUNTIME=name runs the
# CRI suite against that embedded runtime (make soak SUITES=cri
# RUNTIME=cri-o) instead of the default. Exit 0 when nothing
# differed in either suite, 1 when something did, 3 when a suite could not
# be run at all or a run ended with run errors (no verdict to compare).
#
#   N=20 SUITES="cri cluster" PROCS=4 hack/soak.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. hack/lib.sh
n=${N:-20}
procs=${PROCS:-4}
suites=${SUITES:-cri cluster}
report=$(realpath -m "${REPORT_DIR:-_artifacts}/soak")
mkdir -p "$report"
if ! [[ "$n" =~ ^[0-9]+$ ]] || (( n < 2 )); then
  echo "ectest: make soak needs N=<runs>, at least 2 (got '$n')" >&2
  exit 2
fi
bin=$(mktemp -d /tmp/ectest-soak-bin.XXXXXX)
cluster=ectest-soak
trap 'rm -rf "$bin"' EXIT
progress "building ectest-report" go_binary build "$bin/ectest-report" ./cmd/ectest-report || exit 3
plain_path=/usr/sbin:/usr/bin:/sbin:/bin
code=0
# Ctrl-C or SIGTERM stops the campaign: the run in progress ends as the
# suite ends on them (cleaned up, exit 3), and nothing further starts (a
# suite that handled the signal exits normally, which a shell's loop would
# go on from). Ctrl-C reaches the suite from the terminal (its process
# group); SIGTERM, sent to this shell alone, is passed on to it.
interrupted=
pid=
trap 'interrupted=1' INT
trap 'interrupted=1; [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null' TERM
stop_if_interrupted() {
  if [ -n "$interrupted" ]; then
    echo "ectest: soak: interrupted ($1): no further run, nothing more compared" >&2
    exit 130
  fi
}
for suite in $suites; do
  stop_if_interrupted "before the $suite suite"
  case $suite in
    cri | cluster) ;;
    *) echo "ectest: SUITES: unknown suite '$suite' (cri, cluster)" >&2; exit 2 ;;
  esac
  progress "compiling the $suite suite" go_binary test "$bin/$suite.test" "./suites/$suite" || exit 3
  flags=()
  [ "$suite" != cri ] || flags=(${RUNTIME:+-runtime="$RUNTIME"})
  if [ "$suite" = cluster ]; then
    progress "building ectest-kind" go_binary build "$bin/ectest-kind" ./cmd/ectest-kind || exit 3
    # One cluster for every run: made here (node images built or cached
    # first, with Go on PATH), reused by each run, deleted at the end (also
    # when it came up only half).
    trap '"$bin/ectest-kind" down -name "$cluster" >/dev/null 2>&1; rm -rf "$bin"' EXIT
    "$bin/ectest-kind" up -name "$cluster" > "$report/cluster-up.log" 2>&1 || { echo "ectest: soak: the kind cluster did not come up; see $report/cluster-up.log" >&2; exit 3; }
    flags=(-cluster-name="$cluster")
  fi
  dirs=()
  rm -rf "${report:?}/$suite"
  mkdir -p "$report/$suite"
  for i in $(seq 1 "$n"); do
    stop_if_interrupted "before $suite run $i of $n"
    dir="$report/$suite/run-$(printf %02d "$i")"
    start=$(date +%s)
    # In the background and waited for, so that SIGTERM's trap runs (and
    # passes it on) while the run goes on; wait again while it lives.
    (cd "$bin" && exec env PATH=$plain_path NO_COLOR=1 "./$suite.test" -parallel="$procs" -ginkgo.randomize-all -report-dir="$dir" ${flags[@]+"${flags[@]}"}) > "$dir.log" 2>&1 &
    pid=$!
    while :; do
      wait "$pid"
      rc=$?
      kill -0 "$pid" 2>/dev/null || break
    done
    pid=
    echo "ectest: soak: $suite run $i of $n: exit $rc after $(( $(date +%s) - start ))s; $(tail -n 1 "$dir.log")"
    dirs+=("$dir")
    stop_if_interrupted "during $suite run $i of $n"
  done
  "$bin/ectest-report" -soak "$suite suite, $n runs, -parallel=$procs, randomized" -o "$report/$suite" "${dirs[@]}"
  rc=$?
  stop_if_interrupted "while comparing the $suite suite's runs"
  (( rc > code )) && code=$rc
  if [ "$suite" = cluster ]; then
    "$bin/ectest-kind" down -name "$cluster" > /dev/null 2>&1 || code=3
  fi
done
exit "$code"
