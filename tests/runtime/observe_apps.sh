#!/usr/bin/env bash
# tests/runtime/observe_apps.sh ECHO LOADGEN CONTROLLER CTL [OFBENCH]: every app has the control socket
# and --metrics: ringflow-loadgen (its device counts what it sends, seen while it runs, two
# processes listed), ringflow-controller (its commands, the plain learning switch saying it
# keeps no network view, promtool on its metrics including a histogram), ringflow-ofbench
# (generator and responder: live counters while it runs, and the responder's PACKET_IN count
# equal to what the generator reports it sent). Loopback only;
# bounded; everything started is stopped by PID on any exit.
set -euo pipefail
ECHO=$1 LG=$2 CTLR=$3 CTL=$4 OFB=${5:-}
tmp=$(mktemp -d /tmp/rf-observe-apps.$$.XXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_sock() { for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/ringflow/$1.$2.sock" ] && return 0; sleep 0.1; done; return 1; }
export XDG_RUNTIME_DIR=$tmp/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"

# loadgen against echo
udp=$(free_port) lgm=$(free_port)
"$ECHO" --backend "udp:listen=127.0.0.1:$udp" --cores 0 >/dev/null 2>&1 &
pids+=($!); echo_pid=$!
wait_sock echo "$echo_pid" || fail "echo socket"
"$LG" --backend "udp:connect=127.0.0.1:$udp" --rates 5k --warmup 0.2 --duration 3 \
  --metrics "127.0.0.1:$lgm" >/dev/null 2>"$tmp/lg.err" &
pids+=($!); lg_pid=$!
wait_sock loadgen "$lg_pid" || fail "loadgen socket ($(cat "$tmp/lg.err"))"
[ "$("$CTL" list | awk 'NR > 1 { print $2 }' | sort | tr '\n' ' ')" = "echo loadgen " ] ||
  fail "list: $("$CTL" list)"
if "$CTL" stats 2>"$tmp/err"; then fail "two processes and no -p: should refuse"; fi
grep -q "2 ringflow processes are running: pick one with -p PID" "$tmp/err" || fail "$(cat "$tmp/err")"
sleep 1
tx=$("$CTL" -p "$lg_pid" --json stats ports/loadgen0/tx_pkts)
[ "$tx" -gt 0 ] || fail "loadgen tx_pkts $tx while running"
curl -sf "http://127.0.0.1:$lgm/metrics" | promtool check metrics || fail "promtool on loadgen"
wait "$lg_pid" || fail "loadgen exit $?"
[ ! -e "$XDG_RUNTIME_DIR/ringflow/loadgen.$lg_pid.sock" ] || fail "loadgen socket left behind"

# controller: plain learning switch, then with the network view
ofp=$(free_port) cm=$(free_port)
"$CTLR" --listen "127.0.0.1:$ofp" --cores 0 --metrics "127.0.0.1:$cm" >/dev/null 2>&1 &
pids+=($!); c_pid=$!
wait_sock controller "$c_pid" || fail "controller socket"
if "$CTL" -p "$c_pid" switches 2>"$tmp/err"; then fail "switches without a network view"; fi
grep -q "keeps no network view" "$tmp/err" || fail "$(cat "$tmp/err")"
[ "$("$CTL" -p "$c_pid" --json stats rings/handler0_in/capacity)" = 16384 ] || fail "handler ring"
curl -sf "http://127.0.0.1:$cm/metrics" >"$tmp/c.txt" || fail "controller /metrics"
promtool check metrics <"$tmp/c.txt" || fail "promtool on controller"
kill -TERM "$c_pid"; wait "$c_pid" || fail "controller exit $?"
"$CTLR" --listen "127.0.0.1:$ofp" --cores 0 --app learning,topology,hosts \
  --metrics "127.0.0.1:$cm" >/dev/null 2>&1 &
pids+=($!); c_pid=$!
wait_sock controller "$c_pid" || fail "controller socket (apps)"
[ "$("$CTL" -p "$c_pid" --json switches)" = "[]" ] || fail "switches: $("$CTL" -p "$c_pid" --json switches)"
"$CTL" -p "$c_pid" --json ofstats | python3 -c 'import json,sys; j=json.load(sys.stdin); assert "handlers" in j' ||
  fail "ofstats"
if "$CTL" -p "$c_pid" flows 2>"$tmp/err"; then fail "flows without dpid"; fi
grep -q 'flows needs "dpid"' "$tmp/err" || fail "$(cat "$tmp/err")"
if "$CTL" -p "$c_pid" flows dpid=1 2>"$tmp/err"; then fail "flows of an unknown switch"; fi
grep -q 'no such switch' "$tmp/err" || fail "$(cat "$tmp/err")"
curl -sf "http://127.0.0.1:$cm/metrics" >"$tmp/c.txt" || fail "controller /metrics (apps)"
promtool check metrics <"$tmp/c.txt" || fail "promtool on controller (apps)"
grep -q '^ringflow_controller_packet_in_reply_seconds_bucket{app="controller",le="+Inf"} 0$' "$tmp/c.txt" ||
  fail "latency histogram missing"
kill -TERM "$c_pid"; wait "$c_pid" || fail "controller exit $?"

# ofbench: the trivial responder and the generator against it, both observed
if [ -n "$OFB" ]; then
  ofp=$(free_port) rm_=$(free_port) gm=$(free_port)
  "$OFB" --responder --listen "127.0.0.1:$ofp" -t 30 --metrics "127.0.0.1:$rm_" >"$tmp/resp.out" 2>&1 &
  pids+=($!); r_pid=$!
  wait_sock ofbench "$r_pid" || fail "ofbench responder socket ($(cat "$tmp/resp.out"))"
  "$OFB" --controller "127.0.0.1:$ofp" -s 2 -M 10 -w 0 -l 2 -t 1 --json --metrics "127.0.0.1:$gm" \
    >"$tmp/gen.json" 2>"$tmp/gen.err" &
  pids+=($!); g_pid=$!
  wait_sock ofbench "$g_pid" || fail "ofbench generator socket ($(cat "$tmp/gen.err"))"
  sleep 1
  [ "$("$CTL" -p "$g_pid" --json stats app/ofbench_switches)" = 2 ] ||
    fail "generator switches: $("$CTL" -p "$g_pid" --json stats app 2>&1)"
  [ "$("$CTL" -p "$g_pid" --json stats app/ofbench_packet_ins)" -gt 0 ] || fail "generator packet_ins"
  curl -sf "http://127.0.0.1:$gm/metrics" >"$tmp/g.txt" || fail "ofbench /metrics"
  promtool check metrics <"$tmp/g.txt" || fail "promtool on ofbench"
  grep -q '^ringflow_ofbench_rtt_seconds_count{app="ofbench"} [1-9]' "$tmp/g.txt" || fail "rtt histogram: $(grep rtt "$tmp/g.txt")"
  wait "$g_pid" || fail "ofbench generator exit ($(cat "$tmp/gen.err"))"
  [ ! -e "$XDG_RUNTIME_DIR/ringflow/ofbench.$g_pid.sock" ] || fail "generator socket left behind"
  sent=$(python3 -c 'import json,sys; j=json.loads(open(sys.argv[1]).readline()); assert j["lost"] == 0, j; print(j["sent"])' "$tmp/gen.json") ||
    fail "generator report: $(cat "$tmp/gen.json")"
  got=$("$CTL" -p "$r_pid" --json stats app/ofbench_packet_ins)
  [ "$got" = "$sent" ] || fail "responder counted $got PACKET_INs, the generator sent $sent"
  [ "$("$CTL" -p "$r_pid" --json stats app/ofbench_responses)" = "$sent" ] || fail "responder responses"
  [ "$("$CTL" -p "$r_pid" --json stats app/ofbench_switches)" = 0 ] || fail "responder still counts connections"
  kill -TERM "$r_pid"; wait "$r_pid" || fail "responder exit $?"
  [ ! -e "$XDG_RUNTIME_DIR/ringflow/ofbench.$r_pid.sock" ] || fail "responder socket left behind"
fi
echo "PASS: loadgen, controller${OFB:+ and ofbench} answer on their sockets and --metrics"
