#!/usr/bin/env bash
# tests/runtime/observe_echo.sh ECHO CTL: a running ringflow-echo observed the three ways
# docs/observing.md shows: ringflow-ctl over the control socket, promtool on its /metrics,
# and a real Prometheus server (its own config and data directory in a temp dir, listening
# on 127.0.0.1) that scrapes it every second; the test then asks Prometheus's HTTP API for
# the series and checks the values against what it sent. Loopback only; every wait is
# bounded; everything started is stopped by its PID on any exit.
set -euo pipefail
ECHO=$1 CTL=$2
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "SKIP: prometheus/promtool not installed (scripts/deps.sh installs them)"; exit 0; }
tmp=$(mktemp -d /tmp/rf-observe.$$.XXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/echo.err" ] && sed 's/^/echo: /' "$tmp/echo.err" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export XDG_RUNTIME_DIR=$tmp/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"

udp=$(free_port) metrics=$(free_port) prom=$(free_port)
"$ECHO" --backend "udp:listen=127.0.0.1:$udp" --cores 0 --metrics "127.0.0.1:$metrics" \
  >"$tmp/echo.out" 2>"$tmp/echo.err" &
pids+=($!); echo_pid=$!
for _ in $(seq 50); do [ -S "$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock" ] && break; sleep 0.1; done
sock=$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock
[ -S "$sock" ] || fail "no control socket at $sock"
[ "$(stat -c %a "$sock")" = 600 ] || fail "socket mode $(stat -c %a "$sock"), want 600"

N=2000
python3 - "$udp" "$N" <<'PY' || fail "echo did not answer"
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
got = 0
for i in range(n):           # one at a time: nothing is lost on loopback
    s.sendto(b"%08d" % i, ("127.0.0.1", port))
    d, _ = s.recvfrom(64)
    assert d == b"%08d" % i
    got += 1
assert got == n
PY

# ringflow-ctl
"$CTL" list | grep -q "^$echo_pid *echo *$sock\$" || fail "ringflow-ctl list: $("$CTL" list)"
[ "$("$CTL" -p "$echo_pid" stats ports/echo0/rx_pkts)" = "ports/echo0/rx_pkts                              $N" ] ||
  fail "stats rx_pkts: $("$CTL" -p "$echo_pid" stats ports/echo0/rx_pkts)"
"$CTL" -s "$sock" --json stats | python3 -c '
import json, sys
t = json.load(sys.stdin)
assert t["ports"]["echo0"]["tx_pkts"] == '"$N"', t["ports"]
assert t["pollers"]["0"]["rx"] == '"$N"', t["pollers"]
assert t["mempools"]["echo"]["size"] == 16384
q = t["ports"]["echo0"]["per_queue"]
assert sum(v["rx_pkts"] for v in q.values()) == t["ports"]["echo0"]["rx_pkts"] == '"$N"', q
assert q["0"]["tx_pkts"] == '"$N"', q
m = t["mempools"]["echo"]
assert m["cache_hits"] > 0 and 0 < m["cache_hit_rate"] <= 1, m
' || fail "ringflow-ctl --json stats"
"$CTL" pollers | grep -q "^poller cpu" || fail "pollers table"
"$CTL" pollers | awk '$1 == "0" { ok = ($7 == '"$N"') } END { exit !ok }' || fail "pollers rx column: $("$CTL" pollers)"
out=$("$CTL" top --iterations 2 --interval 0.2)
[ "$(grep -c '^POLLER' <<<"$out")" = 2 ] || fail "top did not refresh twice: $out"
grep -q '^echo0 *udp *all ' <<<"$out" || fail "top port line: $out"
grep -q '^ *0 *[0-9]' <<<"$out" || fail "top queue row: $out"
grep -q '^POOL .*HIT%' <<<"$out" || fail "top pool hit column: $out"
"$CTL" --json top --iterations 1 --interval 0.2 | python3 -c 'import json,sys; j=json.loads(sys.stdin.readline()); assert j["ports"][0]["port"]=="echo0"; assert j["ports"][0]["queues"][0]["queue"]==0; assert j["mempools"][0]["pool"]=="echo"' ||
  fail "top --json"
[ "$("$CTL" log-level debug)" = debug ] && [ "$("$CTL" --json log-level)" = '"debug"' ] || fail "log-level"
"$CTL" peers | grep -q '^driver *"udp"' || fail "peers: $("$CTL" peers)"
if "$CTL" nosuchcmd 2>"$tmp/err"; then fail "unknown command succeeded"; fi
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'unknown command "nosuchcmd"' "$tmp/err" || fail "unknown: $(cat "$tmp/err")"
if "$CTL" -p 1 stats 2>"$tmp/err"; then fail "-p 1 succeeded"; fi
grep -q 'no ringflow process 1' "$tmp/err" || fail "-p 1: $(cat "$tmp/err")"

# promtool on the exposition
curl -sf "http://127.0.0.1:$metrics/metrics" >"$tmp/metrics.txt" || fail "GET /metrics"
promtool check metrics <"$tmp/metrics.txt" || fail "promtool check metrics: $(promtool check metrics <"$tmp/metrics.txt" 2>&1)"
grep -q "^ringflow_port_rx_packets_total{app=\"echo\",port=\"echo0\",driver=\"udp\"} $N\$" "$tmp/metrics.txt" ||
  fail "rx counter line missing: $(grep port_rx_packets "$tmp/metrics.txt")"
grep -q "^ringflow_queue_rx_packets_total{app=\"echo\",port=\"echo0\",driver=\"udp\",queue=\"0\"} $N\$" "$tmp/metrics.txt" ||
  fail "per-queue rx line missing: $(grep queue_rx_packets "$tmp/metrics.txt")"
grep -q '^ringflow_mempool_cache_hits_total{app="echo",pool="echo"} [1-9]' "$tmp/metrics.txt" ||
  fail "cache hits line missing: $(grep cache_hit "$tmp/metrics.txt")"
grep -q '^ringflow_mempool_cache_hit_ratio{app="echo",pool="echo"} 0\.[0-9]' "$tmp/metrics.txt" ||
  fail "cache hit ratio line missing: $(grep cache_hit "$tmp/metrics.txt")"

# a real Prometheus scraping it every second
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: ringflow
    static_configs:
      - targets: ["127.0.0.1:$metrics"]
YML
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom" --log.level=warn >"$tmp/prom.log" 2>&1 &
pids+=($!)
q() { curl -sf --get "http://127.0.0.1:$prom/api/v1/query" --data-urlencode "query=$1"; }
val=""
for _ in $(seq 40); do   # at most 20 s: Prometheus starts, then scrapes within a second or two
  val=$(q 'ringflow_port_rx_packets_total{app="echo",port="echo0"}' 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null || true)
  [ -n "$val" ] && break
  sleep 0.5
done
[ "$val" = "$N" ] || fail "Prometheus has rx_packets_total '$val', want $N ($(tail -3 "$tmp/prom.log"))"
up=$(q 'up{job="ringflow"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$up" = 1 ] || fail "up = $up"
# every family the docs promise is there, with its labels
for s in 'ringflow_poller_busy_seconds_total{core="0",poller="0"}' 'ringflow_poller_rounds_total' \
         'ringflow_mempool_in_use{pool="echo"}' 'ringflow_port_tx_packets_total{driver="udp"}' \
         'ringflow_poller_drops_total{reason="driver"}' 'ringflow_poll_work_total{poll="poll0"}'; do
  n=$(q "$s" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))')
  [ "$n" -ge 1 ] || fail "Prometheus has no $s"
done
tx=$(q 'ringflow_poller_tx_total{app="echo"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
[ "$tx" = "$N" ] || fail "poller tx $tx, want $N"
# a histogram with le buckets: one message at a time makes every busy round a batch of 1
one() { q "$1" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'; }
b1=$(one 'ringflow_poller_batch_size_bucket{app="echo",poller="0",le="1"}')
binf=$(one 'ringflow_poller_batch_size_bucket{app="echo",poller="0",le="+Inf"}')
bcount=$(one 'ringflow_poller_batch_size_count{app="echo",poller="0"}')
bsum=$(one 'ringflow_poller_batch_size_sum{app="echo",poller="0"}')
[ "$b1" = "$N" ] && [ "$binf" = "$N" ] && [ "$bcount" = "$N" ] && [ "$bsum" = "$N" ] ||
  fail "batch histogram: le=1 $b1, +Inf $binf, count $bcount, sum $bsum; want $N each"

# the socket goes away with the process
kill -TERM "$echo_pid"; wait "$echo_pid" || fail "echo exit status $?"
[ ! -e "$sock" ] || fail "socket left behind after exit"
echo "PASS: ringflow-ctl, promtool and a Prometheus scrape agree on $N messages"
