#!/usr/bin/env bash
# bench/observe/scrape_cost.sh BUILD [PAIRS] [RATE]: what scraping costs the dataplane.
# ringflow-echo (busy poller on CPU 0, --metrics on loopback) is driven by ringflow-loadgen
# (CPU 1) at RATE msg/s over UDP on 127.0.0.1 for one long run. Time is cut into 1 s slots;
# in every other slot a scraper fetches /metrics every 100 ms (a thread of this script, as a
# Prometheus on the same host would), and the order within each pair of slots alternates.
# Each slot's figure is the messages echo sent in it (its tx counter, read over the control
# socket at every slot boundary, in both kinds of slot alike). Slots this close together see
# the same machine, so the per-pair ratio is the cleanest comparison this shared VM allows.
# Prints one JSON line per slot (bench, impl, case, value, unit, pair, scrapes), then the
# medians, their ratio, the spread of per-pair ratios, and the control thread's CPU per
# scrape. Loopback only; bounded by PAIRS * 2 s + a few.
set -euo pipefail
B=${1:?usage: scrape_cost.sh BUILD [PAIRS] [RATE]}
PAIRS=${2:-20} RATE=${3:-100k}
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
sock=$tmp/ringflow/echo.$echo_pid.sock
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
secs=$((PAIRS * 2 + 2))
"$LG" --backend "udp:connect=127.0.0.1:$udp" --rates "$RATE" --warmup 1 --duration "$secs" \
  --cores 1 >/dev/null 2>"$tmp/lg.err" &
pids+=($!)
sleep 1.5
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$sock" "$metrics" "$PAIRS" "$echo_pid" <<'PY'
import json, os, socket, statistics, sys, threading, time
sock_path, port, pairs, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def ctl_thread_ns():
    for t in os.listdir(f"/proc/{pid}/task"):
        if open(f"/proc/{pid}/task/{t}/comm").read().strip() == "rf-ctl":
            return int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
    return 0

c = socket.socket(socket.AF_UNIX); c.connect(sock_path); f = c.makefile("rwb")
f.readline()
def tx():
    f.write(b'{"cmd":"stats","path":"ports/echo0/tx_pkts"}\n'); f.flush()
    return json.loads(f.readline())["result"]

scraping, scrapes, done = threading.Event(), [0], threading.Event()
def scraper():
    nxt = time.monotonic()
    while not done.is_set():
        if scraping.is_set():
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            data = b""
            while True:
                d = s.recv(65536)
                if not d: break
                data += d
            s.close()
            scrapes[0] += data.startswith(b"HTTP/1.0 200 OK")
        nxt += 0.1
        time.sleep(max(0.0, nxt - time.monotonic()))
th = threading.Thread(target=scraper); th.start()

rows, ctl0, total_scrapes = [], ctl_thread_ns(), 0
last, t_last = tx(), time.monotonic()
for p in range(pairs):
    order = ["no_scrape", "scrape_100ms"] if p % 2 == 0 else ["scrape_100ms", "no_scrape"]
    for case in order:
        scrapes[0] = 0
        (scraping.set if case == "scrape_100ms" else scraping.clear)()
        time.sleep(max(0.0, t_last + 1.0 - time.monotonic()))
        scraping.clear()
        now, t = tx(), time.monotonic()
        rate = (now - last) / (t - t_last)
        rows.append({"bench": "observe", "impl": "ringflow-echo", "case": case,
                     "value": round(rate, 1), "unit": "msg/s", "pair": p, "scrapes": scrapes[0]})
        total_scrapes += scrapes[0]
        print(json.dumps(rows[-1]), flush=True)
        last, t_last = now, t
done.set(); th.join()
ctl_ns = ctl_thread_ns() - ctl0
off = {r["pair"]: r["value"] for r in rows if r["case"] == "no_scrape"}
on = {r["pair"]: r["value"] for r in rows if r["case"] == "scrape_100ms"}
ratios = [on[k] / off[k] for k in off if off[k] > 0]
mo, mn = statistics.median(off.values()), statistics.median(on.values())
q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [min(ratios), 0, max(ratios)]
print(json.dumps({"bench": "observe", "impl": "ringflow-echo", "case": "ratio_scrape_vs_none",
                  "value": round(mn / mo, 4), "unit": "ratio", "pairs": len(ratios),
                  "pair_ratio_median": round(statistics.median(ratios), 4),
                  "pair_ratio_q1": round(q[0], 4), "pair_ratio_q3": round(q[2], 4),
                  "pair_ratio_min": round(min(ratios), 4), "pair_ratio_max": round(max(ratios), 4)}))
per = ctl_ns / max(1, total_scrapes)
print(json.dumps({"bench": "observe", "impl": "ringflow-echo", "case": "ctl_cpu_per_scrape",
                  "value": round(per / 1e3, 1), "unit": "us", "scrapes": total_scrapes}))
print(f"\n{'case':<16}{'median msg/s':>14}{'best msg/s':>14}{'slots':>7}")
print(f"{'no_scrape':<16}{mo:>14.0f}{max(off.values()):>14.0f}{len(off):>7}")
print(f"{'scrape_100ms':<16}{mn:>14.0f}{max(on.values()):>14.0f}{len(on):>7}")
print(f"ratio of medians {mn / mo:.4f}; per-pair ratios: median {statistics.median(ratios):.4f}, "
      f"middle half {q[0]:.4f} .. {q[2]:.4f}, all {min(ratios):.4f} .. {max(ratios):.4f}")
print(f"control thread: {per / 1e3:.1f} us of CPU per scrape ({total_scrapes} scrapes), "
      f"{per * 10 / 1e9 * 100:.3f} % of one CPU at 10 scrapes/s; the pollers do no extra work")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
