#!/usr/bin/env bash
# bench/rerun.sh: runs one ringflow-bench subcommand in N separate processes and prints, for
# each pair "case:ours:peer", the ratio ours/peer of every run, then their median, min and max.
#
# Why separate processes: on a VM the host places the vCPUs anew between runs, which moves
# cross-core figures 3-8x; a ratio measured inside one run (ours and the peer interleaved)
# survives that, but one run's ratio is still one sample. A claim needs the median over runs.
#
# usage: bench/rerun.sh [--runs N] [--build DIR] [--out FILE] [--pairs-of-medians] SUBCOMMAND [PAIR...] [-- BENCH-ARGS]
#   PAIR   case:ours:peer (impl names of `ringflow-bench SUBCOMMAND --help`); default pairs
#          for `ring` and `hash` are the goals of docs/ring.md and docs/lock-free-hash.md
#   --out  also keep every run's JSON lines in FILE
# The ratio is value(ours) / value(peer): above 1 is better for Mops/s, below 1 for ns. Where
# ours is "ringflow", each run's ratio is instead the median of its per-round ratios (the peer
# line's paired_ratio, ringflow-bench's "per round" column, in the unit's direction), which a
# placement change in the middle of a run cannot skew; --pairs-of-medians keeps the old one.
set -euo pipefail
runs=5 build=build out= paired=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --pairs-of-medians) paired=0; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "rerun.sh: which subcommand? (see --help)" >&2; exit 2; }
sub=$1; shift
pairs=()
while [[ $# -gt 0 && $1 != -- ]]; do pairs+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
if [[ ${#pairs[@]} -eq 0 ]]; then
  case $sub in
    ring) pairs=(spsc_burst32:ringflow:rte_ring spsc_burst32_checked:ringflow:rte_ring
                 spsc_burst32:ringflow:ringflow_slot spsc_burst1:ringflow:rte_ring
                 mpmc_1p1c_burst32:ringflow:rte_ring mpmc_2p2c_burst32:ringflow:rte_ring_hts
                 handoff:ringflow:floor handoff:ringflow_slot:floor handoff:ringflow:rte_ring) ;;
    hash) pairs=(lookup_hit_writer:ringflow:ck_ht lookup_hit_writer:ringflow:rte_hash
                 lookup_hit_writer:ringflow_bulk:rte_hash_bulk
                 lookup_hit:ringflow:ck_ht lookup_hit:ringflow_bulk:rte_hash_bulk
                 insert_delete:ringflow_1w:rte_hash insert_delete:ringflow:rte_hash
                 insert_delete_4w:ringflow:rte_hash_mw) ;;
    *) echo "rerun.sh: give pairs case:ours:peer for '$sub'" >&2; exit 2 ;;
  esac
fi
bin=$build/bench/ringflow-bench
[[ -x $bin ]] || { echo "rerun.sh: $bin not found: build first (make build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 1; i <= runs; i++)); do
  echo "run $i/$runs: $bin $sub --json $*" >&2
  "$bin" "$sub" --json "$@" >"$tmp/run$i.json" 2>"$tmp/run$i.err" ||
    { echo "rerun.sh: run $i failed:" >&2; tail -3 "$tmp/run$i.err" >&2; exit 1; }
  grep -h '^note\|steal' "$tmp/run$i.err" | sed "s/^/  run $i: /" >&2 || true
  [[ -n $out ]] && sed "s/^{/{\"run\":$i,/" "$tmp/run$i.json" >>"$out"
done
printf '%-20s %-30s %s\n' case "ours/peer" "per-run ratios -> median [min..max]"
for p in "${pairs[@]}"; do
  IFS=: read -r c ours peer <<<"$p"
  ratios=()
  for ((i = 1; i <= runs; i++)); do
    r=$(awk -v c="$c" -v a="$ours" -v b="$peer" -v paired="$paired" '
      function field(line, k,   m) { if (match(line, "\"" k "\":\"?[^,\"}]*")) {
          m = substr(line, RSTART, RLENGTH); sub("^\"" k "\":\"?", "", m); return m } return "" }
      field($0, "case") == c && field($0, "impl") == a { va = field($0, "value") }
      field($0, "case") == c && field($0, "impl") == b { vb = field($0, "value")
          pr = field($0, "paired_ratio"); lower = field($0, "better") == "lower" }
      END { if (paired && a == "ringflow" && pr > 0) printf "%.3f", lower ? 1 / pr : pr
            else if (va > 0 && vb > 0) printf "%.3f", va / vb; else print "n/a" }' "$tmp/run$i.json")
    ratios+=("$r")
  done
  summary=$(printf '%s\n' "${ratios[@]}" | { grep -v n/a || true; } | sort -g | awk '
    { v[NR] = $1 } END { if (NR == 0) { print "no data"; exit }
      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "median %.2f [%.2f..%.2f] over %d runs", m, v[1], v[NR], NR }')
  printf '%-20s %-30s %s -> %s\n' "$c" "$ours/$peer" "${ratios[*]}" "$summary"
done
