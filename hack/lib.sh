# shellcheck shell=bash
# hack/lib.sh: what the hack scripts share. Source it: . hack/lib.sh
#
# progress WHAT CMD [ARG...] runs CMD (its output passes through) and says
# on stderr that it runs, so a step that takes minutes on a new machine
# (compiling a suite, building a tool) does not look hung:
#
#   ectest: compiling the CRI suite ...
#   ectest: compiling the CRI suite: 15s ...          every 15 s while it runs
#   ectest: compiling the CRI suite: done in 1m02s    or: failed after 40s, exit 2
#
# It returns CMD's exit code. The ticker is a background subshell: killed
# when CMD ends, on SIGINT and SIGTERM (the caller's traps are restored and
# the signal raised again), and it stops by itself within a second if the
# shell that started it dies (SIGKILL). ECTEST_PROGRESS_INTERVAL (seconds,
# default 15, the Go side's progress.Interval) is for tests.

# _ectest_elapsed VAR SECONDS sets VAR to "45s", "1m02s" or "1h02m03s".
_ectest_elapsed() {
  local -n _out=$1
  local s=$2
  if ((s >= 3600)); then
    printf -v _out '%dh%02dm%02ds' $((s / 3600)) $((s / 60 % 60)) $((s % 60))
  elif ((s >= 60)); then
    printf -v _out '%dm%02ds' $((s / 60)) $((s % 60))
  else
    printf -v _out '%ds' "$s"
  fi
}

# _ectest_ticker WHAT PARENT INTERVAL: every INTERVAL seconds, while the
# shell PARENT lives, says WHAT still runs. Run in the background.
_ectest_ticker() {
  local what=$1 parent=$2 interval=$3 n=0 e
  # TERM stops it (INT too: a Ctrl-C reaches the whole process group, and
  # the subshell does not ignore it), and its sleep with it: $!, which is
  # set as soon as the sleep starts (a trap run between "sleep 1 &" and the
  # next line saw no sleep yet and left it behind for up to a second).
  trap 'kill $! 2>/dev/null; wait $! 2>/dev/null; exit 0' TERM INT HUP
  while :; do
    sleep 1 &
    wait $!
    kill -0 "$parent" 2>/dev/null || exit 0
    n=$((n + 1))
    if ((n % interval == 0)); then
      _ectest_elapsed e "$n"
      echo "ectest: $what: $e ..." >&2
    fi
  done
}

_ectest_progress_ticker=''
_ectest_progress_traps=''

_ectest_progress_stop() {
  if [ -n "$_ectest_progress_ticker" ]; then
    # (|| :: callers may run under set -e; a ticker stopped before its
    # trap was set exits 143.)
    kill "$_ectest_progress_ticker" 2>/dev/null || :
    wait "$_ectest_progress_ticker" 2>/dev/null || :
    _ectest_progress_ticker=''
  fi
}

# _ectest_progress_signal SIG WHAT START: the ticker goes, the caller's traps
# come back, and the shell gets SIG again (as if progress were not there).
_ectest_progress_signal() {
  local e
  _ectest_progress_stop
  _ectest_elapsed e $((SECONDS - $3))
  echo "ectest: $2: interrupted after $e (SIG$1)" >&2
  trap - INT TERM
  eval "$_ectest_progress_traps"
  kill -s "$1" "$BASHPID"
}

progress() {
  local what=$1 start=$SECONDS self=$BASHPID rc=0 e
  shift
  echo "ectest: $what ..." >&2
  # (self: $BASHPID on the background command's line would be its own.)
  _ectest_ticker "$what" "$self" "${ECTEST_PROGRESS_INTERVAL:-15}" &
  _ectest_progress_ticker=$!
  _ectest_progress_traps=$(trap -p INT TERM)
  # shellcheck disable=SC2064 # what and start are fixed now
  trap "_ectest_progress_signal INT $(printf %q "$what") $start" INT
  # shellcheck disable=SC2064
  trap "_ectest_progress_signal TERM $(printf %q "$what") $start" TERM
  "$@" || rc=$?
  _ectest_progress_stop
  trap - INT TERM
  eval "$_ectest_progress_traps"
  _ectest_elapsed e $((SECONDS - start))
  if ((rc == 0)); then
    echo "ectest: $what: done in $e" >&2
  else
    echo "ectest: $what: failed after $e, exit $rc" >&2
  fi
  return "$rc"
}

# version_ldflags: the linker flags that stamp a suite binary with the
# source it was built from (what -version prints and every report names):
# $ECTEST_VERSION (make release's) or the checkout's `git describe`, and
# the commit; nothing outside a git checkout. (Not $VERSION: CI images
# often set it for something else.)
version_ldflags() {
  local v c
  c=$(git rev-parse HEAD 2>/dev/null) || return 0
  v=${ECTEST_VERSION:-$(git describe --tags --always --dirty 2>/dev/null)}
  echo "-X github.com/ectest/ectest/internal/buildinfo.Version=$v -X github.com/ectest/ectest/internal/buildinfo.Commit=$c"
}

# _go_inputs WHAT...: a fingerprint of everything a build in this module
# reads, with WHAT (the kind of build, the package, the flags): the go
# command's whole environment (go env: its version, GOFLAGS, GOOS, cgo's
# flags, ...), which go, compile, link and C compiler it runs (path, size,
# time, inode: a toolchain replaced in place), the commit (a build's VCS
# stamp) and the content of every file of the checkout but those its own
# .gitignore files exclude (a developer's global ignore rules are not
# asked) and _output: tracked or not, so a new, changed or deleted file
# counts. go.mod and go.sum pin the modules it imports, whose copies in
# the module cache never change. Fails (no fingerprint: the go command
# decides) outside a git work tree, with a go.work, with GOFLAGS naming
# files (-overlay, -modfile), where go.mod replaces a module with a
# directory (any of them may lie outside the checkout), or when a file
# cannot be read (a submodule).
_go_inputs() (
  set -o pipefail
  top=$(git rev-parse --show-toplevel 2> /dev/null) && [ -n "$top" ] && cd "$top" || exit 1
  head=$(git rev-parse HEAD) || exit 1
  ! grep -Eq '^[[:space:]]*(replace[[:space:]].*=>[[:space:]]*[./]|replace[[:space:]]*\()' go.mod || exit 1
  env=$(${GO:-go} env) || exit 1
  # GOWORK GOFLAGS GOROOT GOTOOLDIR CC CGO_ENABLED, a line each
  mapfile -t v < <(${GO:-go} env GOWORK GOFLAGS GOROOT GOTOOLDIR CC CGO_ENABLED)
  [ "${#v[@]}" = 6 ] || exit 1
  case "${v[0]}" in "" | off) ;; *) exit 1 ;; esac
  case "${v[1]}" in *-overlay* | *-modfile*) exit 1 ;; esac
  tools=("${v[2]}/bin/go" "${v[3]}/compile" "${v[3]}/link")
  [ "${v[5]}" != 1 ] || tools+=("$(command -v "${v[4]}")")
  tools=$(stat -L -c '%n %s %Y %i' "${tools[@]}") || exit 1
  # Every file but those deleted from the work tree (gone from the list
  # then), each with its content.
  files=$(comm -z -23 <(git ls-files -z --cached --others --exclude-per-directory=.gitignore -- . ':(exclude)_output' | sort -z -u) \
    <(git ls-files -z --deleted | sort -z -u) | xargs -0 -r sha256sum) || exit 1
  # (GOGCCFLAGS names a temporary directory of its own on every call.)
  printf '%s\n' "$@" "$head" "$tools" "$(grep -v '^GOGCCFLAGS=' <<< "$env")" files: "$files" | sha256sum | cut -c1-64
)

# _ectest_kill_tree PID: SIGTERM to PID and every process below it, all
# found first (a parent stopped first would leave its children to go on).
_ectest_kill_tree() {
  local pids=("$1") i=0 c
  while ((i < ${#pids[@]})); do
    for c in $(pgrep -P "${pids[i]}"); do
      pids+=("$c")
    done
    i=$((i + 1))
  done
  kill -TERM "${pids[@]}" 2>/dev/null || :
}

# both CMD1... -- CMD2...: runs CMD1 in the background and CMD2 in the
# foreground (two builds side by side); the first non-zero exit code of
# the two, CMD2's first. A failed CMD2 stops CMD1 and every process below
# it (CMD1 may be a function, go_binary, whose subshell a kill of its own
# would leave the go command to outlive); a background job of a script
# ignores Ctrl-C. CMD1 stays in the caller's process group, so a signal to
# the group (make test's lanes) reaches it. CMD1 cannot hold a "--" of its
# own. Safe under set -e.
both() {
  local first=() bg rc=0 w=0
  while (($#)) && [ "$1" != -- ]; do
    first+=("$1")
    shift
  done
  if [ "${1-}" != -- ] || ((${#first[@]} == 0 || $# < 2)); then
    echo "usage: both CMD1... -- CMD2..." >&2
    return 2
  fi
  shift
  "${first[@]}" &
  bg=$!
  "$@" || rc=$?
  ((rc == 0)) || _ectest_kill_tree "$bg"
  wait "$bg" || w=$?
  ((rc != 0)) || rc=$w
  return "$rc"
}

# go_binary [-stamp] test|build OUT PKG: PKG's binary at OUT, linked only
# when something it is built from changed: `go test -c` (test) or `go
# build` (build), with version_ldflags under -stamp. The go command keeps
# compiled packages in its build cache but not linked binaries: it skips
# the link only when the binary already at its -o path is up to date. A
# script that builds into a temporary directory of its own links anew
# every time, and make test's contract stage linked the same CRI suite 15
# times (99 of its 185 CPU-seconds, measured). So the binary is built at a
# path that stays, _output/build/ in this checkout (one per package, kind,
# stamp and GOOS, GOARCH, CGO_ENABLED, GOFLAGS), and hard-linked (else
# copied) to OUT, both under a lock (runs side by side). A relink at that
# path replaces its file, so a run's binary never changes under it; the go
# command's work directory is in the same directory (tmp, emptied first:
# under the lock anything there is left from a build that was killed), so
# the new binary comes by a rename.
#
# Even up to date, the go command hashes every package the binary imports
# before it knows: 1.1 s and 1.7 CPU-seconds for the CRI suite here, 18
# times in the contract stage (30 of its 90 CPU-seconds, measured). So,
# in a git checkout, what the build reads is fingerprinted first
# (_go_inputs) and the go command is not run at all when the binary at
# that path was built from the very same inputs.
go_binary() {
  local stamp=() kind out pkg key dir built what
  if [ "${1-}" = -stamp ]; then
    stamp=(-ldflags "$(version_ldflags)")
    shift
  fi
  kind=${1-} out=${2-} pkg=${3-}
  case $kind in test) kind=(test -c) ;; build) kind=(build) ;; *)
    echo "usage: go_binary [-stamp] test|build OUT PKG" >&2
    return 2
    ;;
  esac
  key=$(printf '%s\n' "${kind[*]}" "$pkg" "${#stamp[@]}" "${GOOS-}" "${GOARCH-}" "${CGO_ENABLED-}" "${GOFLAGS-}" | sha256sum | cut -c1-12)
  dir=_output/build/$(basename "$pkg")-$key
  built=$dir/$(basename "$out")
  what=("${kind[*]}" "$pkg" "${stamp[*]}")
  mkdir -p "$dir" "$(dirname "$out")" || return
  (
    flock 9 || exit
    # (One fingerprint per binary: a package may be built under two names.)
    inputs=$built.inputs
    fp=$(_go_inputs "${what[@]}") || fp=
    if [ -z "$fp" ] || [ ! -f "$built" ] || [ "$(cat "$inputs" 2> /dev/null)" != "$fp" ]; then
      rm -f "$inputs"
      rm -rf "$dir/tmp" && mkdir "$dir/tmp" || exit
      GOTMPDIR=$PWD/$dir/tmp ${GO:-go} "${kind[@]}" "${stamp[@]}" -o "$built" "$pkg" || exit
      # Kept only if nothing changed while it built (the binary may hold
      # a file's content from between the two).
      [ -z "$fp" ] || [ "$(_go_inputs "${what[@]}")" != "$fp" ] || echo "$fp" > "$inputs"
    fi
    ln -f "$built" "$out" 2>/dev/null ||
      { cp "$built" "$out.tmp.$$" && mv -f "$out.tmp.$$" "$out"; }
  ) 9> "$dir/.lock"
}
