#!/usr/bin/env python3
"""bench/fwd/report.py OUT_DIR [TITLE]: the forwarding bed's report (bench/fwd/run.sh).

Reads OUT_DIR/results.jsonl (one JSON object per point), appends the summary lines to it
(median and range of forwarded Mpps per forwarder, the ratios the issue sets as goals), and
writes OUT_DIR/table.txt (also printed), fwd.svg (median Mpps per forwarder with its range)
and owd.svg (p50/p99 one-way latency vs rate; rtt.svg, the round trip, with trafgen), with
gnuplot when it is installed.

A forwarder's figure is generator-limited when SINK got >= 90 % (ringflow-pktgen; 97 % with
trafgen) of what GEN sent in its median round AND GEN sent >= 90 % of what it sends alone
(gen-only, same placement): the forwarder kept up with a generator at full speed, its figure is
a lower bound, and a ratio involving it says "at least" (or nothing, when both sides kept up).
A forwarder that kept up with a smaller offer held the generator back (ringflow-pktgen's
frames are refused when the receiving veth's ring is full, and in P2 the veth's NAPI shares
the generator's CPU): that figure is the forwarder's own rate, marked "held back".
Headroom rule: the generator alone (gen-only) must offer >= 3x what the best userspace
forwarder forwards, else the table says the run cannot rank the forwarders. gen-only-trafgen
(trafgen alone) is a labelled extra row, never a ratio's base.

Rows are per forwarder and placement ("linux-bridge/P1": P1 all of FWD's receive work on the
forwarder's CPU, P2 the veth default); a point without a placement keeps the forwarder's name.
Zero-loss throughput (case zero_loss_64B, binary search on the generator's --rate, loss <=
0.1 %) gets the median and range of its rounds; latency (owd_64B one way, rtt_64B the round
trip with trafgen) is listed per fraction of the forwarder's zero-loss rate."""
import json
import os
import shutil
import statistics
import subprocess
import sys

out = sys.argv[1]
title = sys.argv[2] if len(sys.argv) > 2 else "forwarding bed"
res = os.path.join(out, "results.jsonl")
rows = []
with open(res) as f:
    for line in f:
        line = line.strip()
        if line:
            try:
                r = json.loads(line)
                if "stat" not in r and r.get("impl") != "ratio":  # a rerun replaces the summary
                    rows.append(r)
            except json.JSONDecodeError:
                print(f"report.py: skipping a line that is not JSON: {line[:80]}", file=sys.stderr)

# The analysis keys a row by forwarder and placement; the JSON written back keeps both apart.
rows_out = rows
rows = [dict(r, impl=f"{r['impl']}/{r['placement']}") if r.get("placement") and r.get("impl") not in ("host", "ratio")
        else r for r in rows]


def base(key):
    return key.split("/")[0]


order = []
for r in rows:
    if r.get("impl") not in order and r.get("impl") not in ("host", "ratio"):
        order.append(r["impl"])
unavailable = {r["impl"]: r.get("reason", "") for r in rows if r.get("case") == "unavailable"}
host = next((r for r in rows if r.get("impl") == "host" and r.get("case") == "run_cpu"), None)
bed = next((r for r in rows if r.get("impl") == "host" and r.get("case") == "bed"), {})

# ---- maximum rate: median and range per forwarder ----
summary = {}
for impl in order:
    pts = [r for r in rows if r.get("impl") == impl and r.get("case") == "max_64B" and "round" in r]
    if not pts:
        continue
    vals = sorted(p["value"] for p in pts)
    med = statistics.median(vals)
    mid = min(pts, key=lambda p: abs(p["value"] - med))  # the round closest to the median
    summary[impl] = {
        "median": med, "min": vals[0], "max": vals[-1], "n": len(vals),
        "offered": statistics.median(p["offered_mpps"] for p in pts),
        "gen_limited": bool(mid.get("gen_limited")),
        "gen_limited_rounds": sum(1 for p in pts if p.get("gen_limited")),
        "steal": statistics.median(p.get("steal_pct", 0) for p in pts),
    }

# Kept up, but with an offer well below the generator's own at that placement: the receive side
# pushed back, so the rate is the forwarder's, not a lower bound (see the docstring).
for impl, s in summary.items():
    if base(impl).startswith("gen-only") or not s["gen_limited"]:
        continue
    alone = summary.get("gen-only/" + impl.split("/")[1] if "/" in impl else "gen-only")
    if alone and alone["offered"] > 0 and s["offered"] < 0.9 * alone["offered"]:
        s["gen_limited"] = False
        s["held_back"] = s["offered"] / alone["offered"]

summ_lines = []
for impl, s in summary.items():
    summ_lines.append({"bench": "fwd", "impl": base(impl), **({"placement": impl.split("/")[1]} if "/" in impl else {}),
                       "case": "max_64B", "stat": "median",
                       "value": round(s["median"], 4), "unit": "Mpps", "min": round(s["min"], 4),
                       "max": round(s["max"], 4), "rounds": s["n"],
                       "offered_mpps": round(s["offered"], 4), "gen_limited": s["gen_limited"],
                       **({"held_back": round(s["held_back"], 3)} if "held_back" in s else {}),
                       "steal_pct_median": round(s["steal"], 2)})


def best(prefix):
    c = [(s["median"], i) for i, s in summary.items() if i.startswith(prefix)]
    return max(c) if c else None


ratios = []


def ratio(name, a, b):
    """a, b: (median, impl) or None. Records and returns a line of the table."""
    if not a or not b or b[0] <= 0:
        miss = [x for x, v in (("ours", a), ("peer", b)) if not v]
        ratios.append({"bench": "fwd", "impl": "ratio", "case": name, "value": None, "unit": "x",
                       "note": "not measured: " + ",".join(miss) if miss else "peer forwarded nothing"})
        return f"  {name:42s} n/a ({'missing ' + ' and '.join(miss) if miss else 'peer 0'})"
    v = a[0] / b[0]
    la, lb = summary[a[1]]["gen_limited"], summary[b[1]]["gen_limited"] and not b[1].startswith("gen-only")
    note = ""
    if la and lb:
        note = "both generator-limited: says nothing about the forwarders"
    elif la:
        note = "ours generator-limited: at least this"
    elif lb:
        note = "peer generator-limited: at most this"
    ratios.append({"bench": "fwd", "impl": "ratio", "case": name, "value": round(v, 3), "unit": "x",
                   "ours": a[1], "peer": b[1], "ours_mpps": round(a[0], 4), "peer_mpps": round(b[0], 4),
                   "note": note})
    return f"  {name:42s} {v:5.2f}x  ({a[1]} {a[0]:.3f} / {b[1]} {b[0]:.3f} Mpps){'  ' + note if note else ''}"


lines = []
lines.append(f"== forwarding bed: {title} ==")
gen_name = "ringflow-pktgen" if bed.get("generator") == "pktgen" else "trafgen"
lines.append(f"maximum rate, 64 B frames, {gen_name} flat out; median of rounds (range); "
             "offered = what GEN got out")
lines.append(f"{'forwarder':26s} {'Mpps':>7s} {'range':>15s} {'rounds':>6s} {'offered':>8s} "
             f"{'fwd/off':>7s} {'steal%':>6s}  note")
ceiling = best("gen-only/") or (best("gen-only") if "gen-only" in summary else None)
ceiling = summary[ceiling[1]] if ceiling else None
for impl in order:
    if impl in summary:
        s = summary[impl]
        pct = 100 * s["median"] / s["offered"] if s["offered"] > 0 else 0
        note = ""
        if base(impl) == "gen-only":
            note = f"{gen_name} alone (no forwarder)"
        elif base(impl) == "gen-only-trafgen":
            note = "trafgen alone: extra row, not the offer of the rows above"
        elif base(impl) == "xdp-redirect":
            note = "in-kernel XDP redirect: the bed's ceiling"
            if s["gen_limited"]:
                note += "; GENERATOR-LIMITED"
        elif s["gen_limited"]:
            note = f"GENERATOR-LIMITED ({s['gen_limited_rounds']}/{s['n']} rounds kept up): a lower bound"
        if "held_back" in s:
            note += ("; " if note else "") + (f"held back: the offer was {100 * s['held_back']:.0f} % of the "
                                              "generator's alone, the rate is the forwarder's")
        lines.append(f"{impl:26s} {s['median']:7.3f} {s['min']:6.3f}..{s['max']:<6.3f} {s['n']:6d} "
                     f"{s['offered']:8.3f} {pct:6.1f}% {s['steal']:6.1f}  {note}")
    elif impl in unavailable:
        lines.append(f"{impl:26s} {'-':>7s} {'':15s} {'':6s} {'':8s} {'':7s} {'':6s}  unavailable: {unavailable[impl]}")
for impl in unavailable:  # an unavailable forwarder never got a placement
    if impl not in order:
        lines.append(f"{impl:26s} {'-':>7s} {'':15s} {'':6s} {'':8s} {'':7s} {'':6s}  unavailable: {unavailable[impl]}")
how = {r["impl"]: r.get("how") for r in rows if r.get("case") == "placement"}
if how:
    lines.append("placements: P1 = FWD's receive work for its first veth on the forwarder's CPU "
                 "(threaded NAPI pinned there, else RPS), P2 = the veth default (the generator's CPU); "
                 "P1 done by: " + ", ".join(sorted({f"{v}" for k, v in how.items() if k.endswith('/P1')})))
idle = {r["impl"]: r.get("idle") for r in rows if r.get("case") == "placement"
        and r.get("idle") not in (None, "-")}
if idle:  # ringflow's rows: busy or adaptive polling, per placement
    lines.append("ringflow idle policy: " + ", ".join(f"{k} {v}" for k, v in sorted(idle.items())))


def best_user(prefix):
    """best(prefix) among the userspace forwarders: ringflow-xdp-offload forwards in the kernel."""
    c = [(s["median"], i) for i, s in summary.items()
         if i.startswith(prefix) and not i.startswith("ringflow-xdp-offload")]
    return max(c) if c else None


rf_best = best_user("ringflow-")
lines.append("")
lines.append("ratios (medians from this run; goals from issue 13):")
lines.append(ratio("ringflow dpdk-af_packet / testpmd af_packet", best("ringflow-dpdk-af_packet"),
                   best("testpmd-af_packet")) + "   goal >= 1.0")
lines.append(ratio("ringflow best / testpmd best", rf_best, best("testpmd-")) + "   goal >= 1.5")
lines.append(ratio("ringflow best / OVS userspace best", rf_best, best("ovs-")) + "   goal >= 2.0")
lines.append(ratio("ringflow best / Linux bridge", rf_best, best("linux-bridge")))
if "xdp-redirect" in summary:
    lines.append(ratio("ringflow best / in-kernel XDP redirect", rf_best, best("xdp-redirect")))
lines.append(ratio("ringflow xdp native / testpmd af_xdp", best("ringflow-xdp-native"),
                   best("testpmd-af_xdp")) + "   goal >= 1.3 (issue 24)")
lines.append(ratio("ringflow packet / testpmd af_packet", best_user("ringflow-packet"),
                   best("testpmd-af_packet")) + "   goal >= 1.3 (issue 24)")
if "ringflow-xdp-offload" in {i.split("/")[0] for i in summary}:
    lines.append(ratio("ringflow-l2fwd --offload / in-kernel XDP redirect", best("ringflow-xdp-offload"),
                       best("xdp-redirect")) + "   goal >= 0.8 (issue 24)")
    lines.append(ratio("ringflow-l2fwd --offload / Linux bridge", best("ringflow-xdp-offload"),
                       best("linux-bridge")))
if ceiling:
    gkey = next(k for k, v in summary.items() if v is ceiling)
    lines.append(ratio("ringflow best / generator alone", rf_best, (ceiling["median"], gkey)))

userspace = [(s["median"], i) for i, s in summary.items()
             if i.startswith(("ringflow-", "testpmd-", "ovs-")) and not i.startswith("ringflow-xdp-offload")]
if ceiling and userspace:
    top = max(userspace)
    k = ceiling["median"] / top[0] if top[0] > 0 else float("inf")
    verdict = "met" if k >= 3 else "NOT MET: the generator may be what the forwarders measured"
    lines.append(f"  headroom: {gen_name} alone offered {ceiling['median']:.3f} Mpps = {k:.1f}x the best "
                 f"userspace forwarder ({top[1]} {top[0]:.3f} Mpps); rule >= 3x {verdict}")
    ratios.append({"bench": "fwd", "impl": "ratio", "case": "headroom", "value": round(k, 3), "unit": "x",
                   "generator": gen_name, "best_userspace": top[1], "met": k >= 3})
if ceiling and rf_best:
    near = [i for i, s in summary.items() if not i.startswith("gen-only") and s["median"] >= 0.8 * ceiling["median"]]
    if near:
        lines.append(f"  the generator is the limit in this run: {', '.join(near)} reached >= 80 % of "
                     f"{gen_name}'s own ceiling ({ceiling['median']:.3f} Mpps); their ratios compare "
                     "what the generator allowed, not what the forwarders can do")

# ---- zero-loss throughput: median and range over the rounds that searched ----
zl = [r for r in rows if r.get("case") == "zero_loss_64B"]
zl_summary = {}
if zl:
    lines.append("")
    lines.append(f"zero-loss throughput (binary search on {gen_name} --rate, loss <= 0.1 % of what it attempted "
                 f"over {zl[0].get('window_s')} s, {zl[0].get('steps')} steps at most): Mpps, median (range) rounds; "
                 "'capped': the generator could not pace a higher rate, so the search stopped there")
    for impl in order:
        ps = [r for r in zl if r["impl"] == impl]
        if not ps:
            continue
        v = sorted(p["value"] for p in ps)
        m = statistics.median(v)
        zl_summary[impl] = m
        capped = sum(1 for p in ps if p.get("gen_capped"))
        lines.append(f"{impl:26s} {m:7.3f} {v[0]:6.3f}..{v[-1]:<6.3f} {len(v):6d}"
                     + (f"  capped in {capped}/{len(v)} rounds" if capped else ""))
        summ_lines.append({"bench": "fwd", "impl": base(impl), **({"placement": impl.split("/")[1]} if "/" in impl else {}),
                           "case": "zero_loss_64B", "stat": "median", "value": round(m, 4), "unit": "Mpps",
                           "min": round(v[0], 4), "max": round(v[-1], 4), "rounds": len(v),
                           "gen_capped_rounds": capped})

# ---- fixed-rate sweep ----
sweep = [r for r in rows if r.get("case") == "rate_64B"]
if sweep:
    lines.append("")
    lines.append(f"fixed-rate sweep ({gen_name} --rate): forwarded / offered Mpps (loss % of what GEN sent)")
    targets = sorted({r["target_pps"] for r in sweep})
    lines.append(f"{'forwarder':26s} " + " ".join(f"{t/1e3:>13.0f}k/s    " for t in targets))
    for impl in order:
        cells = []
        for t in targets:
            p = next((r for r in sweep if r["impl"] == impl and r["target_pps"] == t), None)
            if p is None:
                cells.append(f"{'-':>20s}")
            else:
                loss = 100 * (1 - p["forwarded"] / p["sent"]) if p["sent"] else 0
                cells.append(f"{p['value']:6.3f}/{p['offered_mpps']:<6.3f}({loss:4.1f}%)")
        if any(c.strip() != "-" for c in cells):
            lines.append(f"{impl:26s} " + " ".join(cells))

# ---- latency ----
# one way (ringflow-pktgen --timestamps, timed by SINK's XDP program: owd_64B), or the round
# trip of fwd_latency ping with trafgen (rtt_64B)
lat = [r for r in rows if r.get("case") == "owd_64B"]
one_way = bool(lat)
lat = lat or [r for r in rows if r.get("case") == "rtt_64B"]
lat_file = "owd.svg" if one_way else "rtt.svg"
if lat:
    lines.append("")
    lines.append("round trip GEN->FWD->SINK->FWD->GEN, 64 B, open loop: p50 / p99 us (lost)")
    if any("frac_of_zero_loss" in r for r in lat):  # ringflow-pktgen --timestamps at fractions
        lines[-1] = (("one way GEN->FWD->SINK (timed by SINK's XDP program against the send time pktgen's "
                      "XDP program stamped" if one_way else "round trip GEN->FWD->SINK->FWD->GEN") +
                     "), 64 B, ringflow-pktgen --timestamps at a fraction of the forwarder's zero-loss rate "
                     "(0 %: none passed, at --lat-rates' first): p50 / p99 us (lost) @ frames/s")
        fracs = sorted({r.get("frac_of_zero_loss", -1) for r in lat})
        lines.append(f"{'forwarder':26s} " + " ".join(f"{f:>27d} %" for f in fracs))
        for impl in order:
            cells = []
            for fr in fracs:
                p = next((r for r in lat if r["impl"] == impl and r.get("frac_of_zero_loss", -1) == fr), None)
                cells.append(f"{'-':>29s}" if p is None else
                             f"{p['p50_us']:7.1f} / {p['p99_us']:8.1f} ({p['lost']:d}) @{p['rate_pps']}".rjust(29))
            if any(c.strip() != "-" for c in cells):
                lines.append(f"{impl:26s} " + " ".join(cells))
    else:
        lrates = sorted({r["rate_pps"] for r in lat})
        lines.append(f"{'forwarder':26s} " + " ".join(f"{x:>19.0f}/s" for x in lrates))
        for impl in order:
            cells = []
            for x in lrates:
                p = next((r for r in lat if r["impl"] == impl and r["rate_pps"] == x), None)
                cells.append(f"{'-':>21s}" if p is None else
                             f"{p['p50_us']:7.1f} / {p['p99_us']:7.1f} ({p['lost']:d})".rjust(21))
            if any(c.strip() != "-" for c in cells):
                lines.append(f"{impl:26s} " + " ".join(cells))

if host:
    lines.append("")
    lines.append(f"whole run: steal {host.get('steal_pct', 0):.2f} % of CPU time (/proc/stat), "
                 f"per-CPU busy {host.get('cpu_busy_pct')}; load average {bed.get('loadavg', '?')} "
                 f"at the start, {host.get('loadavg', '?')} at the end")

text = "\n".join(lines)
print(text)
with open(os.path.join(out, "table.txt"), "w") as f:
    f.write(text + "\n")
with open(res, "w") as f:
    for x in rows_out + summ_lines + ratios:
        f.write(json.dumps(x, separators=(",", ":")) + "\n")

# ---- plots (gnuplot; literal labels: noenhanced, so underscores stay underscores) ----
if not shutil.which("gnuplot"):
    print("plot: gnuplot not installed; data in " + res)
    sys.exit(0)
plots = []
if summary:
    dat = os.path.join(out, "fwd.dat")
    with open(dat, "w") as f:
        for i, impl in enumerate(k for k in order if k in summary):
            s = summary[impl]
            f.write(f"{i} \"{impl}\" {s['median']} {s['min']} {s['max']} {zl_summary.get(impl, 0)}\n")
    ceil_plot = ""  # the bed's ceiling: the generator alone, and the in-kernel redirect
    if ceiling:
        ceil_plot += f", {ceiling['median']} with lines dt 2 lw 2 lc rgb 'black' title '{gen_name} alone'"
    xr = best("xdp-redirect")
    if xr:
        ceil_plot += f", {xr[0]} with lines dt 3 lw 2 lc rgb 'red' title 'in-kernel XDP redirect'"
    plots.append(f"""
set terminal svg size 900,520 dynamic
set output '{out}/fwd.svg'
set termoption noenhanced
set title "forwarded Mpps, 64 B frames, median and range of rounds ({title})" noenhanced
set ylabel 'Mpps'
set style fill solid 0.5
set boxwidth 0.6
set xtics rotate by -35 noenhanced
set grid ytics
set yrange [0:*]
set key top right
plot '{dat}' using 1:3:xtic(2) with boxes title 'max Mpps (median)', '' using 1:3:4:5 with yerrorbars pt 7 lc black title 'range', \\
     '' using 1:6 with points pt 9 ps 1.5 lc rgb 'dark-green' title 'zero-loss Mpps (median)'{ceil_plot}
""")
if lat:
    files = []
    for impl in order:
        pts = sorted((r["rate_pps"], r["p50_us"], r["p99_us"]) for r in lat if r["impl"] == impl)
        if pts:
            fn = os.path.join(out, f"{'owd' if one_way else 'rtt'}-{impl.replace('/', '-')}.dat")
            with open(fn, "w") as f:
                for p in pts:
                    f.write(f"{p[0]} {p[1]} {p[2]}\n")
            files.append((impl, fn))
    series = []
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
              "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8", "#98df8a"]
    for i, (impl, fn) in enumerate(files):
        c = colors[i % len(colors)]
        series.append(f"'{fn}' using 1:2 with linespoints lc rgb '{c}' dt 2 pt 6 title '{impl} p50'")
        series.append(f"'{fn}' using 1:3 with linespoints lc rgb '{c}' dt 1 pt 7 title '{impl} p99'")
    plots.append(f"""
reset
set terminal svg size 900,560 dynamic
set output '{out}/{lat_file}'
set termoption noenhanced
set title "{'one-way latency GEN->FWD->SINK' if one_way else 'RTT through the forwarder'} vs rate ({title})" noenhanced
set xlabel '{'frames/s' if one_way else 'frames/s (each way)'}'
set ylabel '{'one-way latency' if one_way else 'RTT'} (us)'
set logscale xy
set grid
set key outside right noenhanced
plot {', '.join(series)}
""")
for p in plots:
    r = subprocess.run(["gnuplot"], input=p, text=True, capture_output=True)
    if r.returncode != 0:
        print("plot: gnuplot failed: " + r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "plot: gnuplot failed")
print(f"plots: {out}/fwd.svg{' ' + out + '/' + lat_file if lat else ''}; data: {res}")
