#!/usr/bin/env python3
"""bench/echo/modes_report.py RESULTS.jsonl [TITLE]: the summary of bench/echo/modes.sh.

Per mode and implementation: the median, best and spread (min..max over rounds) of the headline
figure (stream: Gbit/s that arrived; rr: transactions/s; crr: connections/s) with median latency,
loss and CPU; then ours/peer ratios computed round by round (both ran in the same round, so they
saw the same host noise) and whether the goals are met: stream on tcp >= 0.9x iperf3 tcp, UDP_RR
>= 1.0x sockperf ping-pong in its best configuration of the run (the yardstick; the others are
shown as labelled extras).
"""
import json
import statistics
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
title = sys.argv[2] if len(sys.argv) > 2 else ""
HEAD = {"stream": "gbit_s", "rr": "trans_s", "crr": "conn_s"}
UNIT = {"stream": "Gbit/s", "rr": "trans/s", "crr": "conn/s"}


def key(r):
    k = r["backend"]
    if r["mode"] == "rr" and r.get("impl") == "ringflow":
        k += " %dx%d" % (r.get("conns", 1), r.get("outstanding", 1))
    return k


def med(v):
    return statistics.median(v) if v else float("nan")


print("== ringflow-loadgen modes beside their peers (%s) ==" % title)
groups = {}
for r in rows:
    groups.setdefault((r["mode"], key(r)), []).append(r)
for mode in ("stream", "rr", "crr"):
    ks = [k for k in groups if k[0] == mode]
    if not ks:
        continue
    print("\n%s (%s; median / best / min..max over rounds)" % (mode.upper(), UNIT[mode]))
    if mode == "stream":
        print("  %-30s %8s %8s %17s %8s %8s %8s  %s" % ("impl", "median", "best", "spread", "loss%",
              "cpu_cli", "cpu_srv", "check"))
    else:
        print("  %-30s %9s %9s %21s %9s %9s %8s %8s" % ("impl", "median", "best", "spread",
              "p50_us", "p99_us", "cpu_cli", "cpu_srv"))
    for k in sorted(ks, key=lambda k: (-med([r[HEAD[mode]] for r in groups[k]]))):
        g = groups[k]
        v = [r[HEAD[mode]] for r in g]
        cc = med([r.get("cpu_client_pct", float("nan")) for r in g])
        cs = med([r.get("cpu_server_pct", float("nan")) for r in g])
        if mode == "stream":
            chk = ""
            if g[0].get("impl") == "ringflow":
                ok = sum(1 for r in g if r.get("checksum_match"))
                chk = "%d/%d rounds bytes+checksum match" % (ok, len(g))
                sat = sum(1 for r in g if r.get("saturated"))
                if sat:
                    chk += ", %d saturated (loss > 0.1%%)" % sat
            print("  %-30s %8.3f %8.3f %8.3f..%-8.3f %8.3f %8.1f %8.1f  %s" % (k[1], med(v), max(v),
                  min(v), max(v), 100 * med([r.get("loss", 0) for r in g]), cc, cs, chk))
        else:
            print("  %-30s %9.0f %9.0f %10.0f..%-10.0f %9.1f %9.1f %8.1f %8.1f" % (k[1], med(v),
                  max(v), min(v), max(v), med([r["p50_us"] for r in g]),
                  med([r["p99_us"] for r in g]), cc, cs))


def by_round(mode, k):
    return {r["round"]: r[HEAD[mode]] for r in groups.get((mode, k), [])}


def ratio(mode, ours, peer, goal=None):
    a, b = by_round(mode, ours), by_round(mode, peer)
    rs = [a[i] / b[i] for i in a if i in b and b[i] > 0]
    if not rs:
        return
    line = "  %-26s / %-28s %6.2fx median (%.2f..%.2f over %d rounds)" % (
        ours, peer, med(rs), min(rs), max(rs), len(rs))
    if goal:
        line += ": goal >= %.1fx %s" % (goal, "MET" if med(rs) >= goal else "NOT met")
    print(line)


print("\nRatios, round by round (ours / peer, same round):")
ratio("stream", "tcp", "iperf3 tcp", 0.9)
ratio("stream", "uring:tcp", "iperf3 tcp")
ratio("stream", "udp", "iperf3 udp")
ratio("stream", "uring:udp", "iperf3 udp")
sp = [k[1] for k in groups if k[0] == "rr" and k[1].startswith("sockperf")]
if sp:
    best = max(sp, key=lambda k: med([r["trans_s"] for r in groups[("rr", k)]]))
    print("  (UDP_RR yardstick: %s, the best sockperf configuration in this run; labelled extras: %s)"
          % (best, ", ".join(s for s in sp if s != best) or "none"))
    ratio("rr", "udp 1x1", best, 1.0)
    ratio("rr", "udp,busy 1x1", best, 1.0)
    ratio("rr", "udp,block 1x1", best, 1.0)
    ratio("rr", "uring:udp 1x1", best)
    for s in sp:
        if s != best:
            ratio("rr", "udp 1x1", s)
fl = [k[1] for k in groups if k[0] == "crr" and k[1].startswith("floor")]
for f in fl:
    ratio("crr", "tcp", f)
    ratio("crr", "uring:tcp", f)
loads = [r.get("load1") for r in rows if r.get("load1") is not None]
steal = [r.get("steal_pct") for r in rows if r.get("steal_pct") is not None]
if loads:
    print("\nMachine: load1 %.1f..%.1f, steal %.1f..%.1f %% during our points (other builds ran)."
          % (min(loads), max(loads), min(steal), max(steal)))
