#!/usr/bin/env bash
# tests/echo/modes_cli.sh BUILD_DIR: the command lines of the modes end to end over loopback:
# ringflow-echo --sink-check with ringflow-loadgen --mode stream (the JSON line says the sink's
# bytes and checksum match what was sent), ringflow-echo with --mode rr (requests sent = replies
# = what the reflector counted) and --mode crr (connections made = connections the reflector
# accepted), and the one-line errors for bad mode options. Counts decide, never timing. Every
# process is bounded (timeout) and stopped by its PID.
set -euo pipefail
build=$1
echo_bin=$build/apps/echo/ringflow-echo
lg=$build/apps/echo/ringflow-loadgen
work=$(mktemp -d /tmp/rf-modes-cli.XXXXXX)
epid=
cleanup() { [ -n "$epid" ] && kill "$epid" 2>/dev/null && wait "$epid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/echo.log" ] && cat "$work/echo.log"; exit 1; }
field() { # json key -> value
  echo "$1" | tr ',{}' '\n\n\n' | awk -F: -v k="\"$2\"" '$1 == k { print $2; exit }'
}

# Starts ringflow-echo on a free port (tries a few; another test may hold one). Sets port, epid.
start() { # proto spec-prefix args...
  local proto=$1 prefix=$2; shift 2
  for _ in 1 2 3 4 5; do
    port=$(( 20000 + (RANDOM % 20000) ))
    timeout 60 "$echo_bin" --backend "$prefix:listen=127.0.0.1:$port" "$@" > "$work/echo.log" 2>&1 &
    epid=$!
    for _ in $(seq 60); do
      kill -0 "$epid" 2>/dev/null || break
      ss -ln"$proto" 2>/dev/null | grep -q "127.0.0.1:$port " && return 0
      sleep 0.05
    done
    kill "$epid" 2>/dev/null || true # already gone when the port was taken (set -e)
    wait "$epid" 2>/dev/null || true
    epid=
  done
  fail "ringflow-echo $prefix did not start"
}
stop() { kill -TERM "$epid"; wait "$epid" || true; epid=; }

# stream over tcp into a checking sink
start t tcp --sink-check
line=$(timeout 30 "$lg" --mode stream --backend "tcp:connect=127.0.0.1:$port" --size 1000 \
       --warmup 0.05 --duration 0.3 --json)
stop
[ "$(field "$line" checksum_match)" = true ] || fail "stream: $line"
[ "$(field "$line" sent_bytes)" = "$(field "$line" received_bytes)" ] || fail "stream bytes: $line"
[ "$(field "$line" sent_msgs)" -gt 0 ] || fail "stream sent nothing: $line"
grep -q "corrupt 0" "$work/echo.log" || fail "the sink saw corrupt messages"
echo "stream ok: $(field "$line" sent_msgs) messages, checksums match"

# rr over udp, 2 connections x 4 outstanding
start u udp
line=$(timeout 30 "$lg" --mode rr --backend "udp:connect=127.0.0.1:$port" --conns 2 \
       --outstanding 4 --warmup 0.05 --duration 0.3 --json)
stop
sent=$(field "$line" total_sent); got=$(field "$line" total_received)
echoed=$(awk '/driver udp/ { for (i = 1; i < NF; i++) if ($i == "tx") print $(i+1) }' "$work/echo.log")
[ "$sent" -gt 0 ] && [ "$sent" = "$got" ] && [ "$sent" = "$echoed" ] \
  || fail "rr: sent $sent, received $got, reflector echoed $echoed: $line"
[ "$(field "$line" lost)" = 0 ] && [ "$(field "$line" duplicates)" = 0 ] || fail "rr: $line"
echo "rr ok: $sent requests = replies = echoed"

# crr over tcp
start t tcp
line=$(timeout 30 "$lg" --mode crr --backend "tcp:connect=127.0.0.1:$port" --warmup 0.05 \
       --duration 0.3 --json)
stop
made=$(field "$line" conns_made)
accepted=$(awk '/driver tcp/ { for (i = 1; i < NF; i++) if ($i == "conns") print $(i+1) }' "$work/echo.log")
[ "$made" -gt 0 ] && [ "$made" = "$accepted" ] || fail "crr: made $made, accepted $accepted: $line"
[ "$(field "$line" errors)" = 0 ] || fail "crr errors: $line"
echo "crr ok: $made connections made = accepted"

# bad options: one line, exit 2
for args in "--mode nope" "--mode rr --outstanding 0" "--mode rr --conns 65" "--mode rr --wait maybe" \
            "--mode crr" "--mode rr --cores 0,1"; do
  set +e
  msg=$("$lg" --backend udp:connect=127.0.0.1:9 $args 2>&1 >/dev/null); rc=$?
  set -e
  [ "$rc" = 2 ] && [ "$(echo "$msg" | wc -l)" = 1 ] || fail "'$args': rc $rc, message: $msg"
done
echo "bad options ok"
