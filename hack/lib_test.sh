#!/usr/bin/env bash
# Self-test of hack/lib.sh's progress: the started, ticking and done lines,
# the command's output and exit code passing through, and no ticker left
# behind, whether the command ends, fails under set -e, or the shell is
# interrupted (SIGINT, SIGTERM) or killed; and of both (two commands side
# by side, the background one stopped when the other fails). Each case runs in a session of
# its own, which must be empty afterwards. Exit 0 if all pass.
# (internal/progress's TestShellProgress runs it under go test.)
set -uo pipefail
lib=$(realpath "$(dirname "$0")/lib.sh")
tmp=$(mktemp -d /tmp/ectest-lib-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# session_left SID: the processes of session SID still running (not
# zombies: orphans go to PID 1, which in a container may never reap them).
session_left() { ps -e -o sid=,stat=,pid=,args= | awk -v s="$1" '$1 == s && $2 !~ /^Z/'; }
session_empty() { [ -z "$(session_left "$1")" ]; }

# until_true SECONDS CMD...: poll CMD every 0.1 s, at most SECONDS.
until_true() {
  local i
  for ((i = 0; i < $1 * 10; i++)); do
    "${@:2}" && return 0
    sleep 0.1
  done
  return 1
}

# run_case NAME SCRIPT: SCRIPT (lib.sh sourced, a 1 s interval) in a new
# session; sets code, out (stdout) and err (stderr), and checks the
# session is empty as soon as it ended.
run_case() {
  local name=$1 script=$2 sid
  setsid -w bash -c 'echo $$ > "$0/sid"; . "$1"; export ECTEST_PROGRESS_INTERVAL=1; eval "$2"' \
    "$tmp" "$lib" "$script" > "$tmp/out" 2> "$tmp/err"
  code=$?
  out=$(cat "$tmp/out") err=$(cat "$tmp/err")
  sid=$(cat "$tmp/sid")
  session_empty "$sid" || fail "$name: left behind: $(session_left "$sid")"
}

has() { grep -qxE -- "$2" <<< "$1"; }

run_case ok 'progress "compiling x" bash -c "echo its output; sleep 3.5"'
[ "$code" = 0 ] || fail "ok: exit $code"
[ "$out" = "its output" ] || fail "ok: stdout $out"
[ "$(head -1 <<< "$err")" = "ectest: compiling x ..." ] || fail "ok: first line: $err"
has "$err" 'ectest: compiling x: 1s \.\.\.' || fail "ok: no 1s line: $err"
has "$err" 'ectest: compiling x: 2s \.\.\.' || fail "ok: no 2s line: $err"
# (3.5 s and the shell's own time, in whole seconds of bash's SECONDS:
# 3 to 5 on a loaded machine.)
has "$(tail -1 <<< "$err")" 'ectest: compiling x: done in [345]s' || fail "ok: last line: $err"

run_case fail 'progress "building y" bash -c "echo broken >&2; exit 7"; echo "returned $?"'
[ "$out" = "returned 7" ] || fail "fail: the exit code did not pass through: $out"
has "$err" 'broken' || fail "fail: the command's stderr is lost: $err"
has "$err" 'ectest: building y: failed after [01]s, exit 7' || fail "fail: $err"

run_case errexit 'set -e; progress "building z" false; echo not reached'
[ "$code" = 1 ] || fail "errexit: exit $code, want 1"
[ -z "$out" ] || fail "errexit: went on: $out"
has "$err" 'ectest: building z: failed after [01]s, exit 1' || fail "errexit: $err"

run_case traps 'trap "echo caller INT" INT; progress "w" true; trap -p INT'
has "$out" "trap -- 'echo caller INT' SIGINT" || fail "traps: the caller's INT trap is not back: $out"

# both: two commands side by side, the first failure's code; a failed
# foreground command stops the background one (which would sleep 30 s).
run_case both-ok 'both bash -c "echo one" -- bash -c "echo two"; echo "returned $?"'
has "$out" 'one' && has "$out" 'two' && has "$out" 'returned 0' || fail "both-ok: $out"
run_case both-bg-fails 'both bash -c "exit 5" -- true; echo "returned $?"'
has "$out" 'returned 5' || fail "both-bg-fails: $out"
start=$SECONDS
run_case both-fg-fails 'both sleep 30 -- bash -c "exit 6"; echo "returned $?"'
has "$out" 'returned 6' || fail "both-fg-fails: $out"
((SECONDS - start < 10)) || fail "both-fg-fails: the background command was not stopped ($((SECONDS - start))s)"
# A function as the background command (go_binary): its subshell and what
# runs below it are stopped too (the empty session is checked).
start=$SECONDS
run_case both-fg-fails-fn 'f() { sleep 30; echo after; }; both f -- bash -c "exit 6"; echo "returned $?"'
has "$out" 'returned 6' || fail "both-fg-fails-fn: $out"
((SECONDS - start < 10)) || fail "both-fg-fails-fn: the background function was not stopped ($((SECONDS - start))s)"
run_case both-errexit 'set -e; both sleep 30 -- bash -c "exit 6"; echo not reached'
[ "$code" = 6 ] || fail "both-errexit: exit $code, want 6 (the foreground command's)"
run_case both-usage 'both true; echo "returned $?"'
has "$out" 'returned 2' && has "$err" 'usage: both .*' || fail "both-usage: $out $err"

# Signals: the shell is interrupted while the command runs.
signal_case() { # NAME TARGET SIGNAL WANTCODE: TARGET group or shell
  local name=$1 target=$2 sig=$3 want=$4 pid sid
  rm -f "$tmp/sid" "$tmp/err" "$tmp/out"
  # (env: a background job of a script ignores SIGINT, and so would the
  # shell under test.)
  env --default-signal=INT setsid -w bash -c 'echo $$ > "$0/sid"; . "$1"; export ECTEST_PROGRESS_INTERVAL=1; progress "slow" sleep "$2"; echo "went on"' \
    "$tmp" "$lib" "$5" > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  until_true 10 grep -qs 'ectest: slow: 1s' "$tmp/err" || fail "$name: no tick: $(cat "$tmp/err")"
  sid=$(cat "$tmp/sid")
  if [ "$target" = group ]; then kill -s "$sig" -- "-$sid"; else kill -s "$sig" "$sid"; fi
  wait "$pid" 2>/dev/null # (no "Killed" notice)
  code=$?
  [ "$code" = "$want" ] || fail "$name: exit $code, want $want"
  grep -q 'went on' "$tmp/out" && fail "$name: the script went on"
  # Gone when the shell is: stopped and reaped by progress, not left to
  # notice; only a killed shell's ticker needs its second.
  if [ "$sig" = KILL ]; then
    until_true 5 session_empty "$sid" || fail "$name: left behind: $(session_left "$sid")"
  else
    session_empty "$sid" || fail "$name: left behind: $(session_left "$sid")"
  fi
  [ "$sig" = KILL ] || grep -q "ectest: slow: interrupted after .* (SIG$sig)" "$tmp/err" || fail "$name: $(cat "$tmp/err")"
}
# Ctrl-C reaches the whole foreground group.
signal_case int-group group INT 130 30
signal_case term-group group TERM 143 30
# A signal to the shell alone waits for the command, then the trap kills
# the ticker (which never got the signal). The command must outlast the
# first tick and the signal: 5 s (2 s left 1 s of room, too little on a
# loaded machine).
signal_case term-shell shell TERM 143 5
signal_case int-shell shell INT 130 5
# A killed shell runs no trap: the ticker notices within a second; the
# command itself (sleep) is the caller's, and goes on.
signal_case kill-shell shell KILL 137 2

# go_binary: the go command runs only when something the build reads
# changed (a fake go command, which counts its builds, with a toolchain of
# files, in a git checkout of its own).
repo=$tmp/repo
mkdir -p "$repo" "$tmp/goroot/bin" "$tmp/tooldir"
touch "$tmp/goroot/bin/go" "$tmp/tooldir/compile" "$tmp/tooldir/link"
cat > "$tmp/fakego" << 'EOF2'
#!/usr/bin/env bash
if [ "$1" = env ]; then
  shift
  if [ $# = 0 ]; then echo "GOVERSION='${FAKE_GOVERSION:-go1}'"; echo "GOGCCFLAGS='-ffile-prefix-map=/tmp/go-build$RANDOM=/tmp/go-build'"; exit; fi
  for v; do
    case $v in GOWORK) echo "${FAKE_GOWORK-}" ;; GOROOT) echo "$FAKE_ROOT/goroot" ;; GOTOOLDIR) echo "$FAKE_ROOT/tooldir" ;; CC) echo cc ;; CGO_ENABLED) echo 0 ;; *) echo ;; esac
  done
  exit
fi
echo "$*" >> "$FAKE_GO_LOG"
[ -z "${FAKE_GO_FAIL-}" ] || exit 1
while [ "$1" != -o ]; do shift; done
echo built > "$2"
EOF2
chmod +x "$tmp/fakego"
builds() { # SCRIPT: SCRIPT in the checkout after lib.sh; sets n, the builds so far
  (cd "$repo" && GO=$tmp/fakego FAKE_ROOT=$tmp FAKE_GO_LOG=$tmp/go.log FAKE_GOVERSION=${goversion:-go1} FAKE_GOWORK=${gowork-} bash -c ". '$lib'; $1") || fail "go_binary: $1: exit $?"
  n=$(wc -l < "$tmp/go.log")
}
git_in_repo() { git -C "$repo" -c user.name=t -c user.email=t@t "$@"; }
(cd "$repo" && printf 'module x\n' > go.mod && echo 'package main' > main.go && echo '*.out' > .gitignore) &&
  git_in_repo init -q && git_in_repo add . && git_in_repo commit -qm x || fail "go_binary: no git checkout"
: > "$tmp/go.log"
builds 'go_binary build b.out .'
[ "$n" = 1 ] && [ -f "$repo/b.out" ] || fail "go_binary: first build: $n builds"
builds 'go_binary build other/b.out .'
[ "$n" = 1 ] && [ -f "$repo/other/b.out" ] || fail "go_binary: nothing changed, yet $n builds (want 1), or no other/b.out"
go_binary_case() { # NAME CHANGE: one more build after CHANGE, none on the next call
  local before=$n
  (cd "$repo" && eval "$2")
  builds 'go_binary build b.out .'
  [ "$n" = $((before + 1)) ] || fail "go_binary: $1: $((n - before)) builds, want 1"
  builds 'go_binary build b.out .'
  [ "$n" = $((before + 1)) ] || fail "go_binary: $1: built again with nothing changed"
}
go_binary_case "a changed file" 'echo "// x" >> main.go'
go_binary_case "a new file git does not know" 'echo "package main" > new.go'
go_binary_case "a removed file" 'rm new.go'
go_binary_case "a committed file removed" 'git rm -qf main.go'
go_binary_case "a committed file deleted, not with git rm" 'git_in_repo commit -qm rm && echo "package main" > main.go && git_in_repo add main.go && git_in_repo commit -qm add && rm main.go'
go_binary_case "a new commit of the same files" 'git_in_repo commit -q --allow-empty -m empty'
go_binary_case "a compiler replaced in place" 'echo x >> "$tmp/tooldir/compile"'
goversion=go2
go_binary_case "another go environment" :
# A developer's own ignore rules do not hide a file: only .gitignore does.
go_binary_case "a file a global ignore rule names" 'echo "*.embed" > .git/info/exclude && echo x > data.embed'
go_binary_case "a file only a global ignore rule names, changed" 'echo y > data.embed'
(cd "$repo" && echo '*.out' >> .gitignore && echo x > ignored.out)
builds 'go_binary build b.out .'
before=$n
(cd "$repo" && echo y > ignored.out)
builds 'go_binary build b.out .'
[ "$n" = "$before" ] || fail "go_binary: a file .gitignore names changed, and it built again"
# Each binary of a package its own fingerprint: c.out built after a change
# does not make b.out's build look current.
builds 'go_binary build c.out .'
(cd "$repo" && echo "// y" >> go.mod)
builds 'go_binary build c.out . && go_binary build b.out .'
[ "$n" = $((before + 3)) ] || fail "go_binary: two names of one package: $((n - before - 1)) builds after a change, want 2"
# A build that failed is tried again.
before=$n
(cd "$repo" && echo "// z" >> go.mod)
(cd "$repo" && GO=$tmp/fakego FAKE_ROOT=$tmp FAKE_GO_LOG=$tmp/go.log FAKE_GOVERSION=$goversion FAKE_GO_FAIL=1 bash -c ". '$lib'; go_binary build b.out ." 2> /dev/null) &&
  fail "go_binary: a failed build returned 0"
builds 'go_binary build b.out .'
[ "$n" = $((before + 2)) ] || fail "go_binary: after a failed build: $((n - before)) builds, want 2"
# With a go.work (which may name modules outside the checkout), or outside
# a git checkout: the go command decides, every time.
before=$n
gowork=/elsewhere/go.work
builds 'go_binary build b.out . && go_binary build b.out .'
[ "$n" = $((before + 2)) ] || fail "go_binary: with a go.work: $((n - before)) builds for 2 calls, want 2"
gowork=
rm -rf "$repo/.git"
builds 'go_binary build b.out . && go_binary build b.out .'
[ "$n" = $((before + 4)) ] || fail "go_binary: outside git: $((n - before - 2)) builds for 2 calls, want 2"

if [ "$failed" = 0 ]; then
  echo "hack/lib_test.sh: PASS"
fi
exit "$failed"
