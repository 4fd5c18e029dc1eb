#!/usr/bin/env python3
"""bench/switch/report.py OUT_DIR: the switch benchmark's report (bench/switch/run.sh).

Reads OUT_DIR/results.jsonl, appends summary lines ("stat":"median") and ratio lines
("impl":"ratio"), writes OUT_DIR/table.txt (also printed) and, with gnuplot, switch.svg
(forwarded Mpps per case and port kind, ringflow beside OVS, median and range of rounds) and
switch-setup.svg (flow setups per second).

Pairs: ringflow-packet with ovs-system (AF_PACKET-class ports), ringflow-xdp with ovs-afxdp
(AF_XDP), ringflow-xdp-offload (--offload) with ovs-afxdp too (goal 5x, issue 24) and with
linux-bridge, the kernel's bridge between the same veths ("vs bridge", goal 2x; one and exact1k
only: it takes no flows). The generator is ringflow-pktgen (trafgen when it was not built; the run's "bed"
line says which). A point is generator-limited when SINK got >= 90 % (trafgen: 97 %) of what
the generator got out: the switch kept up and its figure is a lower bound. But a switch whose
median offer was below 90 % of what the generator sends alone (gen-only) held the generator
back (ringflow-pktgen's frames are refused when the receiving veth's ring is full, and the
veth's NAPI may share the generator's CPU): its rate is its own, marked "h" (held back), and
its rounds do not count as generator-limited. Headroom rule: the generator alone (gen-only,
1 flow) must offer >= 3x the best userspace switch's median (ringflow-xdp-offload and the
Linux bridge forward in the kernel, as bench-fwd's in-kernel redirect, and are no base), else the run cannot rank the
switches; gen-only-trafgen (trafgen alone) is a labelled extra row, never a
base of a ratio. A switch is "near the generator's rate" when
most of its rounds were generator-limited or its median passed >= 90 % of the offer; a ratio
with such a side says so (both: it says nothing about the switches). Churn is
judged per switch against its own exact1k point of the same round (same flows, same traffic).
pipe3 (a 3-table pipeline), l2l3 (its L2 and L3 tables under 50000 random microflows) and select
(a select group) have no goal of their own (issue 25 asks them beside OVS): their ratio is
printed with the goal "-". Their check lines say where the frames went by the switch's
counters: pipe3 and l2l3, the flows that took frames per table and the packets drop flows took
(table-miss included: 0 expected); select, the packets per bucket.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

GOALS = {"fwd": 2.0, "offload": 5.0, "setup": 2.0, "churn": 0.95}
PAIRS = [("AF_PACKET", "ringflow-packet", "ovs-system"), ("AF_XDP", "ringflow-xdp", "ovs-afxdp"),
         ("offload", "ringflow-xdp-offload", "ovs-afxdp"),  # --offload: the XDP fast path
         ("vs bridge", "ringflow-xdp-offload", "linux-bridge")]  # ... and the kernel's bridge
FWD_CASES = ["one", "exact1k", "churn", "wild100k", "pipe3", "l2l3", "select"]
NO_GOAL = ("pipe3", "l2l3", "select")  # measured beside OVS, no ratio goal

out = sys.argv[1]
path = os.path.join(out, "results.jsonl")
rows = []
with open(path) as f:
    for line in f:
        if line.strip():
            r = json.loads(line)
            if "stat" not in r and r.get("impl") != "ratio":  # a rerun replaces the summary
                rows.append(r)


def pts(impl, case):
    return [r for r in rows if r.get("impl") == impl and r.get("case") == case
            and isinstance(r.get("value"), (int, float)) and "round" in r]


def summ(ps, key="value"):
    v = sorted(p[key] for p in ps)
    return {"median": statistics.median(v), "min": v[0], "max": v[-1], "n": len(v)}


def gen_limited(ps):
    return sum(1 for p in ps if p.get("gen_limited"))


summary, ratios, lines = [], [], []
bed = next((r for r in rows if r.get("case") == "bed"), {})
host = next((r for r in rows if r.get("case") == "run_cpu"), {})
gen_name = "ringflow-pktgen" if bed.get("generator") == "pktgen" else "trafgen"
lim_pct = round(100 * float(bed.get("gen_limit", 0.97)))
lines.append("== ringflow-switch vs Open vSwitch %s userspace (netdev), 64 B frames, GEN CPU %s -> "
             "switch CPU %s -> SINK ==" % (bed.get("ovs", "?"), bed.get("cpu_gen", "?"), bed.get("cpu_fwd", "?")))
lines.append(f"placement {bed.get('placement', 'P2')}: the veth default (FWD's receive NAPI where the kernel "
             "runs it, not pinned to the switch's CPU; bench-fwd's P2)")
lines.append(f"forwarded Mpps, median of rounds (range); offered = what {gen_name} got out; "
             f"* = generator-limited (>= {lim_pct} % of the offer) in that many rounds (a lower bound); "
             "h = held back (kept up with an offer under 90 % of the generator's alone: the receive side "
             "pushed back, the rate is the switch's own)")
lines.append(f"{'case':9s} {'ports':9s} {'ringflow':>22s} {'offered':>7s} {'OVS':>22s} {'offered':>7s} "
             f"{'ratio':>6s} {'goal':>5s}  note")
fig = []  # rows of the plot
ceil = {}
for impl, what in (("gen-only-trafgen", "trafgen alone (labelled extra row, not the offer of the rows below)"),
                   ("gen-only", f"{gen_name} alone (no switch, 1 flow: the generator's ceiling this run)")):
    gp = pts(impl, "ceiling")
    if gp:
        g = ceil[impl] = summ(gp)
        summary.append({"bench": "switch", "impl": impl, "case": "ceiling", "stat": "median",
                        "value": round(g["median"], 4), "unit": "Mpps", "min": round(g["min"], 4),
                        "max": round(g["max"], 4), "rounds": g["n"]})
        lines.insert(2, f"{what}: {g['median']:.3f} Mpps ({g['min']:.3f}..{g['max']:.3f}, {g['n']} rounds)")
for case in FWD_CASES:
    for kind, ours, peer in PAIRS:
        a, b = pts(ours, case), pts(peer, case)
        if (not a and not b) or (peer == "linux-bridge" and not b):
            continue  # the bridge takes only one and exact1k's traffic
        cells, s = [], {}
        for impl, ps in ((ours, a), (peer, b)):
            if not ps:
                why = next((r.get("reason", "") for r in rows if r.get("impl") == impl
                            and r.get("case") in (case, "start") and r.get("value") is None), "")
                cells += [f"{'-':>22s}", f"{'':>7s}"]
                s[impl] = None
                if why:
                    cells[-2] = f"{'n/a':>22s}"
                continue
            m = summ(ps)
            m["offered"] = statistics.median(p["offered_mpps"] for p in ps)
            m["gl"] = gen_limited(ps)
            # kept up, but with an offer well below the generator's own: the receive side pushed
            # back, so the rate is the switch's own, not a lower bound (see the docstring)
            alone = ceil.get("gen-only")
            kept_up = m["gl"] > 0 or m["median"] >= 0.9 * m["offered"]
            if kept_up and alone and alone["median"] > 0 and m["offered"] < 0.9 * alone["median"]:
                m["held_back"], m["gl"] = m["offered"] / alone["median"], 0
            s[impl] = m
            star = f"*{m['gl']}" if m["gl"] else ("h" if "held_back" in m else "")
            cells += [f"{m['median']:6.3f} ({m['min']:.3f}..{m['max']:.3f}){star:3s}".rjust(22),
                      f"{m['offered']:7.3f}"]
            summary.append({"bench": "switch", "impl": impl, "case": case, "stat": "median",
                            "value": round(m["median"], 4), "unit": "Mpps", "min": round(m["min"], 4),
                            "max": round(m["max"], 4), "rounds": m["n"],
                            "offered_mpps": round(m["offered"], 4), "gen_limited_rounds": m["gl"],
                            **({"held_back": round(m["held_back"], 3)} if "held_back" in m else {})})
        ra, rb = s.get(ours), s.get(peer)
        note, rv = "", None
        goal = None if case in NO_GOAL else GOALS["offload"] if kind == "offload" else GOALS["fwd"]
        if ra and rb and rb["median"] > 0:
            rv = ra["median"] / rb["median"]
            # near the generator: most rounds kept up, or the median passed >= 90 % of the offer
            near = {k: "held_back" not in m and (m["gl"] * 2 > m["n"] or m["median"] >= 0.9 * m["offered"])
                    for k, m in s.items() if m}
            if near[ours] and near[peer]:
                note = "both near the generator's rate: the ratio says nothing"
            elif near[ours]:
                note = "ringflow near the generator's rate: at least this"
            ratios.append({"bench": "switch", "impl": "ratio", "case": case, "ports": kind,
                           "value": round(rv, 3), "unit": "x", "goal": goal,
                           "ours_mpps": round(ra["median"], 4), "peer_mpps": round(rb["median"], 4),
                           "note": note})
        for i in (ours, peer):  # a table that did not take all the case's flows
            ins = [r for r in rows if r.get("impl") == i and r.get("case") == "install_" + case]
            if ins and min(r["flows_installed"] for r in ins) < ins[0]["flows_wanted"]:
                note += ("; " if note else "") + (f"{i}: {min(r['flows_installed'] for r in ins)}"
                                                  f"/{ins[0]['flows_wanted']} flows in")
        miss = [i for i in (ours, peer) if not s.get(i)]
        if miss:
            note = "not measured: " + ", ".join(miss) + ("; " + note if note else "")
            for i in miss:
                why = next((r.get("reason") for r in rows if r.get("impl") == i
                            and r.get("case") in (case, "start") and r.get("reason")), None)
                if why:
                    note += f" ({why[:90]})"
        lines.append(f"{case:9s} {kind:9s} {cells[0]} {cells[1]} {cells[2]} {cells[3]} "
                     f"{(f'{rv:5.2f}x' if rv is not None else '   -  '):>6s} "
                     f"{(f'{goal:4.1f}x' if goal else '-'):>5s}  {note}")
        fig.append((f"{case} {kind}", ra, rb))

# ---- headroom: the generator alone against the best userspace switch's median (any case);
# --offload forwards in the kernel's XDP program, as bench-fwd's in-kernel redirect: not a base ----
best_sw = max(((m["value"], m["impl"], m["case"]) for m in summary
               if m["impl"] not in ("gen-only", "gen-only-trafgen", "ringflow-xdp-offload", "linux-bridge")
               and m.get("unit") == "Mpps"),
              default=None)
if "gen-only" in ceil and best_sw and best_sw[0] > 0:
    k = ceil["gen-only"]["median"] / best_sw[0]
    verdict = "met" if k >= 3 else "NOT MET: the generator may be what the switches measured"
    lines.append(f"headroom: {gen_name} alone offered {ceil['gen-only']['median']:.3f} Mpps = {k:.1f}x the best "
                 f"userspace switch ({best_sw[1]} {best_sw[2]} {best_sw[0]:.3f} Mpps; --offload and the bridge forward in the "
                 f"kernel and are no base); rule >= 3x {verdict}")
    ratios.append({"bench": "switch", "impl": "ratio", "case": "headroom", "value": round(k, 3), "unit": "x",
                   "generator": gen_name, "best_switch": best_sw[1], "best_case": best_sw[2], "met": k >= 3})

# ---- exact1k: how many of the 1000 flows matched frames (the generator's microflows) ----
hit = [r for r in rows if r.get("case") == "flows_hit_exact1k"]
if hit:
    lines.append("exact1k flows that matched frames (n_packets > 0) / flows in the table: " + ";  ".join(
        f"{r['impl']} {r['value']}/{r['flows_in_table']}" for r in hit if r.get("round") == 1))

# ---- pipe3, l2l3 and select: where the frames went, by the switch's own counters (round 1) ----
for r in rows:
    if r.get("case") in ("check_pipe3", "check_l2l3") and r.get("round") == 1:
        case = r["case"][len("check_"):]
        want = [4, 1, 1] if case == "pipe3" else [1, 1, 1]
        ok = r["flows_hit"] == want and r["value"] == 0 and r["out_flow_priority"] == 124
        lines.append(f"{case} {r['impl']}: flows that took frames per table {r['flows_hit']} (expected "
                     f"{want}), table 2's longest taken priority {r['out_flow_priority']} (124: the "
                     f"/24) with {r['out_flow_packets']} packets; packets a drop flow took "
                     f"{r['value']} (table-miss {r['table_miss_packets']}): "
                     + ("as expected" if ok else "UNEXPECTED"))
    if r.get("case") == "check_select" and r.get("round") == 1:
        b = r.get("bucket_packets") or []
        share = "/".join(f"{100 * x / sum(b):.0f}" for x in b) if sum(b) else "-"
        ok = len(b) == 4 and min(b) > 0 and sum(b) == r["value"] == r["flow_packets"]
        lines.append(f"select {r['impl']}: group packets {r['value']}, flow packets {r['flow_packets']}, "
                     f"per bucket {b} = {share} % (weights 40/30/20/10): "
                     + ("every bucket used" if ok else "UNEXPECTED"))

# ---- flows installed (the wild100k table may not fit) ----
inst = [r for r in rows if str(r.get("case", "")).startswith("install_")]
if inst:
    lines.append("")
    lines.append("flow install through ovs-ofctl add-flows (del-flows first): seconds, median; flows in the table")
    for impl in sorted({r["impl"] for r in inst}):
        cells = []
        for c in ("one", "exact1k", "wild100k", "pipe3", "l2l3", "select"):
            ps = [r for r in inst if r["impl"] == impl and r["case"] == "install_" + c]
            if ps:
                m = summ(ps)
                got = min(p["flows_installed"] for p in ps)
                want = ps[0]["flows_wanted"]
                err = next((p["last_error"] for p in ps if p.get("last_error")), "")
                cells.append(f"{c} {m['median']:.2f}s {got}/{want}" + (f" [{err[:60]}]" if got < want and err else ""))
        lines.append(f"  {impl:16s} " + ";  ".join(cells))

# ---- churn: each switch against its own exact1k of the same round ----
# The churn client shares CPU 0 with the generator, so the offer under churn differs from the offer
# without: besides the raw ratio of forwarded rates, the ratio of the fractions of the offer
# that got through (per offered frame) is given, and the churn rounds where the switch kept
# up with trafgen (it lost nothing to the churn that this bed can see).
churn_lines = []
for impl in dict.fromkeys(i for _, o, p in PAIRS for i in (o, p)):  # each switch once
    base = {p["round"]: p for p in pts(impl, "exact1k")}
    ch = [p for p in pts(impl, "churn") if p["round"] in base and base[p["round"]]["value"] > 0
          and p.get("offered_mpps", 0) > 0 and base[p["round"]].get("offered_mpps", 0) > 0]
    if not ch:
        continue
    rel = sorted(p["value"] / base[p["round"]]["value"] for p in ch)
    frac = sorted((p["value"] / p["offered_mpps"]) /
                  (base[p["round"]]["value"] / base[p["round"]]["offered_mpps"]) for p in ch)
    kept = sum(1 for p in ch if p.get("gen_limited"))
    cl = [r for r in rows if r.get("impl") == impl and r.get("case") == "churn_client"]
    applied = statistics.median(r["applied_per_s"] for r in cl) if cl else 0
    errs = sum(r.get("errors", 0) for r in cl)
    med, fmed = statistics.median(rel), statistics.median(frac)
    verdict = "met" if med >= GOALS["churn"] else (
        "met per offered frame" if fmed >= GOALS["churn"] else "MISSED")
    churn_lines.append(f"  {impl:16s} {med:5.2f}x ({rel[0]:.2f}..{rel[-1]:.2f})  per offered frame "
                       f"{fmed:5.2f}x ({frac[0]:.2f}..{frac[-1]:.2f})  kept up {kept}/{len(ch)}  "
                       f"FLOW_MODs applied {applied:6.0f}/s, errors {errs}  goal >= {GOALS['churn']}: {verdict}")
    ratios.append({"bench": "switch", "impl": "ratio", "case": "churn_vs_exact1k", "switch": impl,
                   "value": round(med, 3), "min": round(rel[0], 3), "max": round(rel[-1], 3),
                   "per_offered": round(fmed, 3), "per_offered_min": round(frac[0], 3),
                   "per_offered_max": round(frac[-1], 3), "kept_up_rounds": kept,
                   "unit": "x", "goal": GOALS["churn"], "flow_mods_applied_per_s": round(applied, 1),
                   "errors": errs})
if churn_lines:
    lines.append("")
    lines.append("forwarding under churn / without (exact1k, same switch, same round): forwarded Mpps, and "
                 f"per offered frame; rounds the switch kept up with {gen_name} under churn; FLOW_MODs it "
                 "answered per second")
    lines += churn_lines

# ---- flow setup ----
st = {i: [r for r in rows if r.get("impl") == i and r.get("case") == "setup"
          and isinstance(r.get("value"), (int, float))] for i in ("ringflow-packet", "ovs-system")}
if any(st.values()):
    lines.append("")
    lines.append("flow setup under ringflow-controller (learning): new flows/s, PACKET_IN -> FLOW_MOD + "
                 "PACKET_OUT -> first frame at SINK")
    sm = {}
    for impl, ps in st.items():
        if not ps:
            lines.append(f"  {impl:16s} not measured")
            continue
        m = summ(ps)
        sm[impl] = m
        p50 = statistics.median(p["p50_us"] for p in ps)
        p99 = statistics.median(p["p99_us"] for p in ps)
        done = min(p["set_up"] for p in ps)
        tbl = min(p.get("flows_in_table", 0) for p in ps)
        lines.append(f"  {impl:16s} {m['median']:8.0f}/s ({m['min']:.0f}..{m['max']:.0f}, {m['n']} rounds)  "
                     f"latency p50 {p50:.0f} us p99 {p99:.0f} us; set up {done}/{ps[0]['flows']} "
                     f"(fewest of the rounds), flows in the table after >= {tbl}")
        summary.append({"bench": "switch", "impl": impl, "case": "setup", "stat": "median",
                        "value": round(m["median"], 1), "unit": "flows/s", "min": round(m["min"], 1),
                        "max": round(m["max"], 1), "rounds": m["n"], "p50_us": p50, "p99_us": p99})
    if len(sm) == 2 and sm["ovs-system"]["median"] > 0:
        v = sm["ringflow-packet"]["median"] / sm["ovs-system"]["median"]
        lines.append(f"  ratio {v:.2f}x   goal >= {GOALS['setup']}")
        ratios.append({"bench": "switch", "impl": "ratio", "case": "setup", "value": round(v, 3),
                       "unit": "x", "goal": GOALS["setup"]})

if host:
    lines.append("")
    lines.append(f"whole run: steal {host.get('steal_pct', 0):.2f} % (/proc/stat), per-CPU busy "
                 f"{host.get('cpu_busy_pct')}; load average {bed.get('loadavg', '?')} at the start, "
                 f"{host.get('loadavg', '?')} at the end ({bed.get('procs_running', '?')} running "
                 "at the start)")
text = "\n".join(lines)
print(text)
with open(os.path.join(out, "table.txt"), "w") as f:
    f.write(text + "\n")
with open(path, "w") as f:
    for x in rows + summary + ratios:
        f.write(json.dumps(x, separators=(",", ":")) + "\n")

ceil_plot = ""  # the generator's ceiling drawn across the bars
if "gen-only" in ceil:
    ceil_plot = f", {ceil['gen-only']['median']} with lines dt 2 lc rgb 'black' title '{gen_name} alone'"
if not shutil.which("gnuplot"):
    print("plot: gnuplot not installed; data in " + path)
    sys.exit(0)
with open(os.path.join(out, "switch.dat"), "w") as f:
    for label, a, b in fig:
        row = [f'"{label}"']
        for m in (a, b):
            row += [str(m["median"]), str(m["min"]), str(m["max"])] if m else ["0", "0", "0"]
        f.write(" ".join(row) + "\n")
script = f"""
set terminal svg size 960,520 dynamic
set output '{out}/switch.svg'
set termoption noenhanced
set title "forwarded Mpps, 64 B, median and range of rounds: ringflow-switch vs OVS userspace" noenhanced
set ylabel 'Mpps'
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set xtics rotate by -30 noenhanced
set grid ytics
set yrange [0:*]
set key top right
plot '{out}/switch.dat' using 2:3:4:xtic(1) title 'ringflow-switch', '' using 5:6:7 title 'OVS userspace'{ceil_plot}
"""
if any(st.values()):
    with open(os.path.join(out, "setup.dat"), "w") as f:
        for i, impl in enumerate(("ringflow-packet", "ovs-system")):
            if st[impl]:
                m = summ(st[impl])
                f.write(f'{i} "{impl}" {m["median"]} {m["min"]} {m["max"]}\n')
    script += f"""
reset
set terminal svg size 600,420 dynamic
set output '{out}/switch-setup.svg'
set termoption noenhanced
set title "flow setups per second under ringflow-controller (median, range)" noenhanced
set ylabel 'new flows/s'
set style fill solid 0.6 border -1
set boxwidth 0.5
set yrange [0:*]
set grid ytics
unset key
plot '{out}/setup.dat' using 1:3:xtic(2) with boxes, '' using 1:3:4:5 with yerrorbars pt 7 lc black
"""
r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
if r.returncode != 0:
    print("plot: gnuplot failed: " + (r.stderr.strip().splitlines() or ["?"])[-1])
else:
    print(f"plots: {out}/switch.svg" + (f" {out}/switch-setup.svg" if any(st.values()) else "") + f"; data: {path}")
