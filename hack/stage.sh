#!/usr/bin/env bash
# hack/stage.sh: one timed stage of make test, so that a slow stage is
# visible. Each stage appends "name<TAB>seconds<TAB>exit code" to
# $REPORT_DIR/test-stages.tsv and, when it fails or is the last, prints the
# table of every stage of this make test so far (markdown, also written to
# test-stages.md beside it). It exits with the stage's code, so make stops
# at the first failing stage as before.
#
#   hack/stage.sh [--first] [--last] NAME CMD [ARG...]
#
# --first starts a new table (the first stage of make test), --last prints
# it after a stage that passed too.
set -uo pipefail
first=0 last=0
while [ $# -gt 0 ]; do
  case $1 in
    --first) first=1; shift ;;
    --last) last=1; shift ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "ectest: hack/stage.sh: want [--first] [--last] NAME CMD [ARG...]" >&2
  exit 2
fi
name=$1
shift
dir=$(realpath -m "${REPORT_DIR:-${ARTIFACTS:-_artifacts}}")
mkdir -p "$dir"
tsv=$dir/test-stages.tsv
[ "$first" -eq 1 ] && : > "$tsv"
start=$(date +%s)
"$@"
code=$?
echo -e "$name\t$(( $(date +%s) - start ))\t$code" >> "$tsv"
if [ "$code" -ne 0 ] || [ "$last" -eq 1 ]; then
  {
    echo "| stage | time | exit |"
    echo "|---|---|---|"
    total=0
    while IFS=$'\t' read -r n s c; do
      total=$(( total + s ))
      printf '| %s | %dm%02ds | %s |\n' "$n" $(( s / 60 )) $(( s % 60 )) "$c"
    done < "$tsv"
    printf '| all | %dm%02ds | %s |\n' $(( total / 60 )) $(( total % 60 )) "$code"
  } > "$dir/test-stages.md"
  echo "ectest: make test stages (also in $dir/test-stages.md):"
  cat "$dir/test-stages.md"
fi
exit "$code"
