#!/usr/bin/env python3
"""bench/observe/scrape_slots.py: the measuring half of bench/observe/scrape_cost.sh.

Cuts time into 1 s slots, in pairs: in one slot of each pair a thread fetches /metrics every
100 ms (as a Prometheus on the same host would), in the other nothing scrapes; the order within
a pair alternates. A slot's figure is how much the app's counter COUNTER (a control-socket
stats path, e.g. ports/echo0/tx_pkts) grew per second in it, read over the control socket at
every slot boundary in both kinds of slot alike. Slots this close together see the same
machine, so the per-pair ratio is the cleanest comparison a shared VM allows.
Prints one JSON line per slot, then a summary JSON line (ratio of medians, per-pair ratio
median / quartiles / min / max), the control thread's CPU per scrape, and a table.

usage: scrape_slots.py SOCK METRICS_PORT PAIRS PID COUNTER IMPL CASE [PEER_SOCK PEER_COUNTER]
  PEER_*: a second process's counter read at the same boundaries (e.g. the load generator's
  tx): its rate is printed beside, to show the app was offered more than it handled.
"""
import json, os, socket, statistics, sys, threading, time

sock_path, port, pairs, pid, counter, impl, case = sys.argv[1:8]
port, pairs = int(port), int(pairs)
peer = sys.argv[8:10] if len(sys.argv) >= 10 else None


def ctl_thread_ns():
    for t in os.listdir(f"/proc/{pid}/task"):
        if open(f"/proc/{pid}/task/{t}/comm").read().strip() == "rf-ctl":
            return int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0])
    return 0


class Ctl:
    def __init__(self, path, what):
        c = socket.socket(socket.AF_UNIX)
        c.connect(path)
        self.f = c.makefile("rwb")
        self.f.readline()
        self.req = json.dumps({"cmd": "stats", "path": what}).encode() + b"\n"

    def read(self):
        self.f.write(self.req)
        self.f.flush()
        return json.loads(self.f.readline())["result"]


app = Ctl(sock_path, counter)
gen = Ctl(peer[0], peer[1]) if peer else None

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
                if not d:
                    break
                data += d
            s.close()
            scrapes[0] += data.startswith(b"HTTP/1.0 200 OK")
        nxt += 0.1
        time.sleep(max(0.0, nxt - time.monotonic()))


th = threading.Thread(target=scraper, daemon=True) # never outlives a failed main thread
th.start()
rows, ctl0, total_scrapes = [], ctl_thread_ns(), 0
last, t_last = app.read(), time.monotonic()
glast = gen.read() if gen else 0
offered = []
for p in range(pairs):
    order = ["no_scrape", "scrape_100ms"] if p % 2 == 0 else ["scrape_100ms", "no_scrape"]
    for kind in order:
        scrapes[0] = 0
        (scraping.set if kind == "scrape_100ms" else scraping.clear)()
        time.sleep(max(0.0, t_last + 1.0 - time.monotonic()))
        scraping.clear()
        now, t = app.read(), time.monotonic()
        rate = (now - last) / (t - t_last)
        row = {"bench": "observe", "impl": impl, "case": f"{case}_{kind}", "value": round(rate, 1),
               "unit": "msg/s", "pair": p, "scrapes": scrapes[0]}
        if gen:
            try:
                g = gen.read()
            except OSError: # the generator ended (its run is bounded): no offered figure
                gen, g = None, glast
        if gen:
            row["offered"] = round((g - glast) / (t - t_last), 1)
            offered.append(row["offered"])
            glast = g
        rows.append(row)
        total_scrapes += scrapes[0]
        print(json.dumps(row), flush=True)
        last, t_last = now, t
done.set()
th.join()
ctl_ns = ctl_thread_ns() - ctl0
off = {r["pair"]: r["value"] for r in rows if r["case"].endswith("_no_scrape")}
on = {r["pair"]: r["value"] for r in rows if r["case"].endswith("_scrape_100ms")}
ratios = sorted(on[k] / off[k] for k in off if off[k] > 0)
mo, mn = statistics.median(off.values()), statistics.median(on.values())
q = statistics.quantiles(ratios, n=4) if len(ratios) >= 4 else [min(ratios), 0, max(ratios)]
summary = {"bench": "observe", "impl": impl, "case": f"{case}_ratio_scrape_vs_none",
           "value": round(mn / mo, 4), "unit": "ratio", "pairs": len(ratios),
           "median_no_scrape": round(mo, 1), "median_scrape_100ms": round(mn, 1),
           "pair_ratio_median": round(statistics.median(ratios), 4),
           "pair_ratio_q1": round(q[0], 4), "pair_ratio_q3": round(q[2], 4),
           "pair_ratio_min": round(min(ratios), 4), "pair_ratio_max": round(max(ratios), 4)}
if offered:
    summary["offered_median"] = round(statistics.median(offered), 1)
print(json.dumps(summary))
per = ctl_ns / max(1, total_scrapes)
print(json.dumps({"bench": "observe", "impl": impl, "case": f"{case}_ctl_cpu_per_scrape",
                  "value": round(per / 1e3, 1), "unit": "us", "scrapes": total_scrapes}))
print(f"\n{impl} {case}")
print(f"{'slot kind':<16}{'median msg/s':>14}{'best msg/s':>14}{'slots':>7}")
print(f"{'no_scrape':<16}{mo:>14.0f}{max(off.values()):>14.0f}{len(off):>7}")
print(f"{'scrape_100ms':<16}{mn:>14.0f}{max(on.values()):>14.0f}{len(on):>7}")
print(f"ratio of medians {mn / mo:.4f}; per-pair ratios: median {statistics.median(ratios):.4f}, "
      f"middle half {q[0]:.4f} .. {q[2]:.4f}, all {min(ratios):.4f} .. {max(ratios):.4f}")
if offered:
    print(f"offered to it (peer counter): median {statistics.median(offered):.0f} msg/s "
          f"({statistics.median(offered) / mo:.2f}x what it handled)")
print(f"control thread: {per / 1e3:.1f} us of CPU per scrape ({total_scrapes} scrapes), "
      f"{per * 10 / 1e9 * 100:.3f} % of one CPU at 10 scrapes/s; the pollers do no extra work")
