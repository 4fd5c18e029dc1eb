#!/usr/bin/env bash
# bench/observe/scrape_cost.sh BUILD [ROUNDS] [SECONDS] [RATE]: what scraping costs the
# dataplane. ringflow-echo (busy poller on CPU 0, --metrics on loopback) is driven by
# ringflow-loadgen (CPU 1) at RATE msg/s over UDP on 127.0.0.1; each round runs once with
# nothing scraping and once with a scraper fetching /metrics every 100 ms (a small Python
# loop, unpinned, as a Prometheus on the same host would be), in alternating order. The
# figure is the replies per second the load generator received. Prints one JSON line per
# run (bench, impl, case, value, unit, round, scrapes, steal_pct), then a table with the
# medians, their ratio and the spread of the per-round ratios. Loopback only; bounded.
set -euo pipefail
B=${1:?usage: scrape_cost.sh BUILD [ROUNDS] [SECONDS] [RATE]}
ROUNDS=${2:-6} SECS=${3:-3} RATE=${4:-150k}
ECHO=$B/apps/echo/ringflow-echo LG=$B/apps/echo/ringflow-loadgen
tmp=$(mktemp -d /tmp/rf-scrape.$$.XXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
udp=$(free_port) metrics=$(free_port)
export XDG_RUNTIME_DIR=$tmp
"$ECHO" --backend "udp:listen=127.0.0.1:$udp" --cores 0 --idle busy \
  --metrics "127.0.0.1:$metrics" >"$tmp/echo.out" 2>"$tmp/echo.err" &
pids+=($!); echo_pid=$!
sleep 0.5
ctl_cpu_ns() { # CPU time the control thread (rf-ctl) has used so far, ns
  for t in /proc/"$echo_pid"/task/*; do
    [ "$(cat "$t/comm")" = rf-ctl ] && { cut -d' ' -f1 "$t/schedstat"; return; }
  done
  echo 0
}
ctl0=$(ctl_cpu_ns)

scraper() { # $1 seconds: GET /metrics every 100 ms, print how many answered 200
  python3 - "$metrics" "$1" <<'PY'
import socket, sys, time
port, secs = int(sys.argv[1]), float(sys.argv[2])
end, ok, nxt = time.monotonic() + secs, 0, time.monotonic()
while time.monotonic() < end:
    s = socket.create_connection(("127.0.0.1", port), timeout=1)
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        d = s.recv(65536)
        if not d: break
        data += d
    s.close()
    ok += data.startswith(b"HTTP/1.0 200 OK")
    nxt += 0.1
    time.sleep(max(0.0, nxt - time.monotonic()))
print(ok)
PY
}

run() { # $1 case, $2 round
  local scr=""
  if [ "$1" = scrape_100ms ]; then
    scraper "$SECS.9" >"$tmp/scrapes" & scr=$!
  fi
  local out
  out=$("$LG" --backend "udp:connect=127.0.0.1:$udp" --rates "$RATE" --warmup 0.5 \
        --duration "$SECS" --cores 1 --json 2>/dev/null)
  local n=0
  if [ -n "$scr" ]; then wait "$scr"; n=$(cat "$tmp/scrapes"); fi
  python3 - "$1" "$2" "$n" "$out" <<'PY'
import json, sys
case, rnd, n, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
print(json.dumps({"bench": "observe", "impl": "ringflow-echo", "case": case,
                  "value": p["received"], "unit": "msg/s", "round": rnd, "scrapes": n,
                  "offered": p["offered"], "steal_pct": p["steal_pct"]}))
PY
}

for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="no_scrape scrape_100ms"; else order="scrape_100ms no_scrape"; fi
  for c in $order; do run "$c" "$r" | tee -a "$tmp/lines"; done
done

ctl1=$(ctl_cpu_ns)
python3 - "$tmp/lines" "$((ctl1 - ctl0))" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ctl_ns = int(sys.argv[2])
off = {r["round"]: r["value"] for r in rows if r["case"] == "no_scrape"}
on = {r["round"]: r["value"] for r in rows if r["case"] == "scrape_100ms"}
ratios = [on[k] / off[k] for k in sorted(off) if off[k] > 0 and k in on]
mo, mn = statistics.median(off.values()), statistics.median(on.values())
scr = [r["scrapes"] for r in rows if r["case"] == "scrape_100ms"]
print(json.dumps({"bench": "observe", "impl": "ringflow-echo", "case": "ratio_scrape_vs_none",
                  "value": round(mn / mo, 4), "unit": "ratio",
                  "round_ratio_min": round(min(ratios), 4), "round_ratio_max": round(max(ratios), 4),
                  "round_ratio_median": round(statistics.median(ratios), 4)}))
print(f"\n{'case':<16}{'median msg/s':>14}{'best msg/s':>14}{'rounds':>8}")
print(f"{'no_scrape':<16}{mo:>14.0f}{max(off.values()):>14.0f}{len(off):>8}")
print(f"{'scrape_100ms':<16}{mn:>14.0f}{max(on.values()):>14.0f}{len(on):>8}   ({min(scr)}-{max(scr)} scrapes a run)")
print(f"ratio of medians {mn / mo:.4f}; per-round ratios {min(ratios):.4f} .. {max(ratios):.4f} "
      f"(median {statistics.median(ratios):.4f})")
per = ctl_ns / max(1, sum(scr))
print(json.dumps({"bench": "observe", "impl": "ringflow-echo", "case": "ctl_cpu_per_scrape",
                  "value": round(per / 1e3, 1), "unit": "us", "scrapes": sum(scr)}))
print(f"control thread: {per / 1e3:.1f} us of CPU per scrape ({sum(scr)} scrapes), "
      f"{per * 10 / 1e9 * 100:.3f} % of one CPU at 10 scrapes/s; the pollers do no extra work")
PY
