#!/usr/bin/env bash
# bench/observe/fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]: did the counters the
# observability work added (mempool cache hits on the get fast path, failed-enqueue counters
# on the ring failure path) slow the fast path? Builds the library and ringflow-bench at
# BASE_COMMIT (a copy of that tree in BUILD/fastpath-base, `git archive`), then runs base and
# current in turns, ROUNDS times (default 5; the order flips every round so drift hits both
# alike), for each subcommand (default "micro micro-aligned mempool ring"):
#   micro    bench/observe/fastpath_micro.c: ring and mempool fast paths on ONE thread, base
#            and current linked into one binary and alternating sample by sample (21 samples
#            of 0.1 s per case and round): the figure that can resolve a few instructions on
#            this VM (cross-core figures swing 3-8x between runs); micro-aligned: the same
#            with the benchmark's code aligned, which takes code placement out of the figure
#   mempool, ring   a whole `ringflow-bench SUB --json`, whose peers (rte_mempool, rte_ring)
#            also give a per-run ratio ours/peer that host placement moves less
# Prints one JSON line per (build, round, case, impl) and a table: per case and impl the median
# of each build, new/base of the medians, and the spread (min..max) of the per-round new/base.
set -euo pipefail
B=${1:?usage: fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]}
BASE=${2:?usage: fastpath_cost.sh BUILD BASE_COMMIT [ROUNDS] [SUBCOMMANDS]}
ROUNDS=${3:-5} SUBS=${4:-micro micro-aligned mempool ring}
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
# The micro benchmark as ONE binary holding both trees' fast paths (fastpath_micro.c says how):
# the base library's globals are renamed apart with objcopy, so base and current samples
# alternate in one process.
ab_build() { # BASE_INCLUDE BASE_LIB NEW_INCLUDE NEW_LIB OUT [EXTRA_CFLAGS]
  local cc=${CC:-cc} fl="-O3 -DNDEBUG -D_GNU_SOURCE -std=gnu11 -Wall -Wextra -Werror ${6:-}"
  local m=$src/bench/observe/fastpath_micro.c
  $cc $fl -DFP_VARIANT_ONLY -I"$1" -c "$m" -o "$tmp/v-base.o"
  $cc $fl -DFP_VARIANT_ONLY -I"$3" -c "$m" -o "$tmp/v-new.o"
  $cc $fl -DFP_MAIN_ONLY -DFP_AB -c "$m" -o "$tmp/main.o"
  # every global the base library defines, and the variant's two entry points, get "base_"
  nm -g --defined-only "$2" 2>/dev/null | awk 'NF == 3 { print $3, "base_" $3 }' | sort -u >"$tmp/syms"
  printf 'fp_setup base_fp_setup\nfp_sample base_fp_sample\n' >>"$tmp/syms"
  cp "$2" "$tmp/libbase.a"
  objcopy --redefine-syms="$tmp/syms" "$tmp/libbase.a"
  objcopy --redefine-syms="$tmp/syms" "$tmp/v-base.o"
  objcopy --redefine-sym fp_setup=new_fp_setup --redefine-sym fp_sample=new_fp_sample "$tmp/v-new.o"
  $cc -o "$5" "$tmp/main.o" "$tmp/v-base.o" "$tmp/v-new.o" "$tmp/libbase.a" "$4" -lpthread -lm
}
ab_build "$base_dir/src/include" "$base_dir/b/libringflow.a" "$src/include" "$B/libringflow.a" "$tmp/micro-ab"
# The same with every loop, jump target and function of the benchmark aligned to 64 bytes: a
# loop of a few dozen instructions moves 20-40 % either way with where it lands (Zen 5's op
# cache), which has nothing to do with the instructions a change adds; aligned, it does not.
ab_build "$base_dir/src/include" "$base_dir/b/libringflow.a" "$src/include" "$B/libringflow.a" \
  "$tmp/micro-aligned-ab" "-falign-loops=64 -falign-jumps=64 -falign-functions=64"
out=$tmp/all.jsonl
: >"$out"
for sub in $SUBS; do
  for ((r = 1; r <= ROUNDS; r++)); do
    order="base new"; [ $((r % 2)) = 0 ] && order="new base"
    for which in $order; do
      bin=$base_bin; [ "$which" = new ] && bin=$new_bin
      echo "fastpath: $sub round $r/$ROUNDS $which (load $(cut -d' ' -f1 /proc/loadavg))" >&2
      if [[ "$sub" = micro* ]]; then # one process runs both; once per round
        [ "$which" = new ] && continue
        "$tmp/$sub-ab" 21 0.1 >"$tmp/run.json" 2>"$tmp/run.err"
      else
        "$bin" "$sub" --json >"$tmp/run.json" 2>"$tmp/run.err"
      fi || { tail -3 "$tmp/run.err" >&2; exit 1; }
      if [[ "$sub" = micro* ]]; then # impl base/new is the build; impl new/base a summary
        sed -E '/"impl":"new\/base"/d; s/^\{"bench":"fastpath","impl":"(base|new)"/{"build":"\1","round":'$r',"bench":"'$sub'","impl":"ringflow"/' \
          "$tmp/run.json" | tee -a "$out"
        grep '"impl":"new/base"' "$tmp/run.json" | sed "s/^{/{\"round\":$r,\"sub\":\"$sub\",/" >&2
        continue
      fi
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
print(f"{'bench':<14}{'case':<20}{'impl':<18}{'base med':>10}{'new med':>10}{'new/base':>9}"
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
    print(f"{b:<14}{c:<20}{i:<18}{mb:>10.1f}{mn:>10.1f}{mn / mb:>9.3f}"
          f"{min(pr):>18.3f} .. {max(pr):<9.3f}{units[(b, c)]:>8}")
    # the same against the peer of each run (placement cancels out)
    p = peer.get(b)
    pb, pn = val.get((b, c, p, "base"), {}), val.get((b, c, p, "new"), {})
    if p and pb and pn:
        rb = [base[k] / pb[k] for k in base if pb.get(k)]
        rn = [new[k] / pn[k] for k in new if pn.get(k)]
        if rb and rn:
            print(f"{'':<14}{'':<20}{i + '/' + p:<18}{statistics.median(rb):>10.3f}"
                  f"{statistics.median(rn):>10.3f}{statistics.median(rn) / statistics.median(rb):>9.3f}"
                  f"{'(ratio to the peer of the same run)':>39}")
    print(json.dumps({"bench": "fastpath_cost", "impl": i, "case": f"{b}_{c}", "value": round(mn / mb, 4),
                      "unit": "ratio new/base", "base_median": mb, "new_median": mn,
                      "per_round_min": round(min(pr), 4), "per_round_max": round(max(pr), 4),
                      "rounds": len(rounds)}))
PY
