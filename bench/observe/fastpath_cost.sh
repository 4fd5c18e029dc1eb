#!/usr/bin/env bash
# bench/observe/fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]: did the counters the
# observability work added (mempool cache hits on the get fast path, failed-enqueue counters
# on the ring failure path) slow the fast path? Builds the library and ringflow-bench at
# BASE_COMMIT (a copy of that tree in BUILD/fastpath-base, `git archive`), then runs base and
# current in turns, ROUNDS times (default 5; the order flips every round so drift hits both
# alike), for each subcommand (default "micro mempool ring"):
#   micro    bench/observe/fastpath_micro.c, compiled the same way against each tree's headers
#            and library: ring and mempool fast paths on ONE thread (the figure that can
#            resolve a few instructions on this VM; cross-core figures swing 3-8x)
#   mempool, ring   a whole `ringflow-bench SUB --json`, whose peers (rte_mempool, rte_ring)
#            also give a per-run ratio ours/peer that host placement moves less
# Prints one JSON line per (build, round, case, impl) and a table: per case and impl the median
# of each build, new/base of the medians, and the spread (min..max) of the per-round new/base.
set -euo pipefail
B=${1:?usage: fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]}
BASE=${2:?usage: fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]}
ROUNDS=${3:-5} SUBS=${4:-micro mempool ring}
B=$(cd "$B" && pwd)
src=$(git rev-parse --show-toplevel)
base_dir=$B/fastpath-base
new_bin=$B/bench/ringflow-bench
[ -x "$new_bin" ] || { echo "fastpath_cost.sh: $new_bin not built" >&2; exit 1; }
want=$(git -C "$src" rev-parse "$BASE")
if [ "$(cat "$base_dir/COMMIT" 2>/dev/null)" != "$want" ]; then
  rm -rf "$base_dir"; mkdir -p "$base_dir/src"
  git -C "$src" archive "$want" | tar -x -C "$base_dir/src"
  cmake -S "$base_dir/src" -B "$base_dir/b" -DCMAKE_BUILD_TYPE=Release >"$base_dir/cmake.log" 2>&1
  echo "$want" >"$base_dir/COMMIT"
fi
nice cmake --build "$base_dir/b" -j 2 --target ringflow-bench ringflow_static >"$base_dir/build.log" 2>&1 ||
  { tail -5 "$base_dir/build.log" >&2; exit 1; }
base_bin=$base_dir/b/bench/ringflow-bench
tmp=$(mktemp -d /tmp/rf-fastpath.$$.XXXX)
trap 'rm -rf "$tmp"' EXIT
# The micro benchmark, the same source and flags (CMake's Release ones) against both trees.
micro_cc() { # INCLUDE_DIR LIBRARY OUT
  ${CC:-cc} -O3 -DNDEBUG -D_GNU_SOURCE -std=gnu11 -Wall -Wextra -Werror -I"$1" \
    "$src/bench/observe/fastpath_micro.c" "$2" -lpthread -lm -o "$3"
}
micro_cc "$base_dir/src/include" "$base_dir/b/libringflow.a" "$tmp/micro-base"
micro_cc "$src/include" "$B/libringflow.a" "$tmp/micro-new"
out=$tmp/all.jsonl
: >"$out"
for sub in $SUBS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    order="base new"; [ $((r % 2)) = 0 ] && order="new base"
    for which in $order; do
      bin=$base_bin; [ "$which" = new ] && bin=$new_bin
      echo "fastpath: $sub round $r/$ROUNDS $which (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      if [ "$sub" = micro ]; then
        "$tmp/micro-$which" ringflow 7 0.2 >"$tmp/run.json" 2>"$tmp/run.err"
      else
        "$bin" "$sub" --json >"$tmp/run.json" 2>"$tmp/run.err"
      fi || { tail -3 "$tmp/run.err" >&2; exit 1; }
      sed "s/^{/{\"build\":\"$which\",\"round\":$r,/" "$tmp/run.json" | tee -a "$out"
    done
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
peer = {"mempool": "rte_mempool", "ring": "rte_ring"}
val = {}
for r in rows:
    val.setdefault((r["bench"], r["case"], r["impl"], r["build"]), {})[r["round"]] = r["value"]
print()
print(f"{'bench':<8}{'case':<20}{'impl':<18}{'base med':>10}{'new med':>10}{'new/base':>9}"
      f"{'per-round new/base min..max':>30}{'unit':>8}")
units = {(r["bench"], r["case"]): r["unit"] for r in rows}
keys = sorted({k[:3] for k in val})
for b, c, i in keys:
    if not i.startswith("ringflow"):
        continue
    base, new = val.get((b, c, i, "base"), {}), val.get((b, c, i, "new"), {})
    rounds = sorted(set(base) & set(new))
    if not rounds:
        continue
    mb, mn = statistics.median(base.values()), statistics.median(new.values())
    pr = [new[k] / base[k] for k in rounds if base[k] > 0]
    print(f"{b:<8}{c:<20}{i:<18}{mb:>10.1f}{mn:>10.1f}{mn / mb:>9.3f}"
          f"{min(pr):>18.3f} .. {max(pr):<9.3f}{units[(b, c)]:>8}")
    # the same against the peer of each run (placement cancels out)
    p = peer.get(b)
    pb, pn = val.get((b, c, p, "base"), {}), val.get((b, c, p, "new"), {})
    if p and pb and pn:
        rb = [base[k] / pb[k] for k in base if pb.get(k)]
        rn = [new[k] / pn[k] for k in new if pn.get(k)]
        if rb and rn:
            print(f"{'':<8}{'':<20}{i + '/' + p:<18}{statistics.median(rb):>10.3f}"
                  f"{statistics.median(rn):>10.3f}{statistics.median(rn) / statistics.median(rb):>9.3f}"
                  f"{'(ratio to the peer of the same run)':>39}")
    print(json.dumps({"bench": "fastpath_cost", "impl": i, "case": f"{b}_{c}", "value": round(mn / mb, 4),
                      "unit": "ratio new/base", "base_median": mb, "new_median": mn,
                      "per_round_min": round(min(pr), 4), "per_round_max": round(max(pr), 4),
                      "rounds": len(rounds)}))
PY
