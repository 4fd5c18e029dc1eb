#!/usr/bin/env bash
# tests/runtime/ctl_exited.sh ECHO CTL: ringflow-ctl says "process exited" in one line when the
# process behind a control socket is gone: a missing socket, a socket file nobody listens on
# (the process died without removing it), a process that exits while `top` watches it, and a
# live process beside stale files that carry its PID (left by a dead process that had it first).
# Loopback only; every wait is bounded; what the test starts is stopped by its PID on exit.
set -euo pipefail
ECHO=$1 CTL=$2
tmp=$(mktemp -d /tmp/rf-ctlexit.$$.XXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export XDG_RUNTIME_DIR=$tmp/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"

# one_line FILE: exactly one line, naming the exit
one_line() {
  [ "$(wc -l <"$1")" -eq 1 ] || fail "want one line, got: $(cat "$1")"
  grep -q "process exited" "$1" || fail "no 'process exited' in: $(cat "$1")"
}

# 1. no socket at all
if "$CTL" -s "$tmp/nosuch.sock" stats 2>"$tmp/e1"; then fail "stats on a missing socket succeeded"; fi
one_line "$tmp/e1"

# 2. a socket file nobody listens on (bound, then its process went away)
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$tmp/stale.sock"
[ -S "$tmp/stale.sock" ] || fail "could not make a stale socket"
if "$CTL" -s "$tmp/stale.sock" stats 2>"$tmp/e2"; then fail "stats on a stale socket succeeded"; fi
one_line "$tmp/e2"
grep -q "stale.sock" "$tmp/e2" || fail "the line does not name the socket: $(cat "$tmp/e2")"

# 3. the process exits while top watches it
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$ECHO" --backend "udp:listen=127.0.0.1:$port" --cores 0 >"$tmp/echo.out" 2>"$tmp/echo.err" &
pids+=($!); echo_pid=$!
sock=$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "no control socket at $sock: $(cat "$tmp/echo.err")"
"$CTL" -s "$sock" top --iterations 600 --interval 0.1 >"$tmp/top.out" 2>"$tmp/e3" &
pids+=($!); top_pid=$!
for _ in $(seq 100); do grep -q POLLER "$tmp/top.out" 2>/dev/null && break; sleep 0.1; done
grep -q POLLER "$tmp/top.out" || fail "top printed no frame: $(cat "$tmp/e3")"
kill -9 "$echo_pid"
wait "$echo_pid" 2>/dev/null || true
rc=0
for _ in $(seq 100); do kill -0 "$top_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$top_pid" 2>/dev/null && fail "top still runs 10 s after the process exited"
wait "$top_pid" || rc=$?
[ "$rc" -ne 0 ] || fail "top exited 0 after its process died"
one_line "$tmp/e3"

# 4. a stale file whose PID a live process was given later (a switch killed with -9, then
#    echo started with its PID): -p PID must reach the live process, not the stale file
"$ECHO" --backend "udp:listen=127.0.0.1:$port" --cores 0 >"$tmp/echo2.out" 2>"$tmp/echo2.err" &
pids+=($!); echo_pid=$!
sock=$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "no control socket at $sock: $(cat "$tmp/echo2.err")"
for app in aaa switch zzz; do
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
    "$XDG_RUNTIME_DIR/ringflow/$app.$echo_pid.sock"
done
"$CTL" -p "$echo_pid" stats >"$tmp/s4" 2>"$tmp/e4" || fail "-p $echo_pid beside stale files of its PID: $(cat "$tmp/e4")"
grep -q 'mempools/echo/' "$tmp/s4" || fail "stats through -p are not echo's: $(head -c 300 "$tmp/s4")"
[ "$("$CTL" list | awk -v p="$echo_pid" '$1 == p && $2 == "echo"' | wc -l)" -eq 1 ] ||
  fail "list does not show PID $echo_pid once, as echo: $("$CTL" list)"
echo "ok: $(cat "$tmp/e1") | $(cat "$tmp/e2") | $(cat "$tmp/e3") | -p finds the live socket beside 3 stale ones"
