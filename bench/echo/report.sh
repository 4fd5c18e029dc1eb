#!/usr/bin/env bash
# bench/echo/report.sh OUT_DIR [TITLE]: turns OUT_DIR/results.jsonl (one JSON object per rate
# point, from ringflow-loadgen --json and run.sh's sockperf parser) into OUT_DIR/table.txt (also
# printed) and OUT_DIR/rtt.svg: p50 and p99 RTT vs offered rate, one line pair per backend,
# unsaturated points only (past saturation the latency measures queue depth, not the path).
# Also prints, per rate, the p99 ratio of each backend to sockperf's. drops_r/g: UDP datagrams
# the kernel dropped at a full socket receive buffer, reflector side / generator side.
set -euo pipefail
out=$1
title=${2:-echo benchmark}
res=$out/results.jsonl
[ -s "$res" ] || { echo "report.sh: no results in $res" >&2; exit 1; }

# Flat "key value" extraction of the few fields used (the JSON is ours: flat, one line).
flat() {
  awk '{
    line = $0; out = ""
    n = split("backend offered achieved received loss p50_us p90_us p99_us p999_us max_us saturated steal_pct load1 udp_rcvbuf_drops_reflector udp_rcvbuf_drops_generator", k, " ")
    for (i = 1; i <= n; i++) {
      v = "-"
      if (match(line, "\"" k[i] "\":(\"[^\"]*\"|[^,}]*)")) {
        v = substr(line, RSTART + length(k[i]) + 3, RLENGTH - length(k[i]) - 3); gsub(/"/, "", v)
      }
      out = out (i > 1 ? " " : "") v
    }
    print out }' "$res"
}

{
  echo "== echo RTT ($title) =="
  printf "%-18s %10s %10s %10s %8s %8s %8s %8s %9s %9s %7s %6s %13s  %s\n" backend offered/s sent/s \
    recv/s loss% p50_us p90_us p99_us p99.9_us max_us steal% load1 drops_r/g status
  flat | sort -k2,2n -s | awk '{
    st = $11 == "true" ? sprintf("SATURATED (sent %.0f/s, received %.0f/s, loss %.3f%%)", $3, $4, 100 * $5) : "ok"
    printf "%-18s %10.0f %10.0f %10.0f %8.3f %8.1f %8.1f %8.1f %9.1f %9.1f %7.1f %6.1f %13s  %s\n",
      $1, $2, $3, $4, 100 * $5, $6, $7, $8, $9, $10, $12, $13, $14 "/" $15, st }'
  if flat | grep -q '^sockperf '; then
    echo
    echo "p99 ratio to sockperf at the same rate (both unsaturated; < 1 is better):"
    flat | awk '$11 == "false" { p99[$1 SUBSEP $2] = $8; rates[$2] = 1; be[$1] = 1 }
      END { for (r in rates) for (b in be) if (b != "sockperf" && ((b SUBSEP r) in p99) &&
              (("sockperf" SUBSEP r) in p99) && p99["sockperf" SUBSEP r] > 0)
              printf "  %-18s %10d  %.2fx  (%.1f vs %.1f us)\n", b, r,
                p99[b SUBSEP r] / p99["sockperf" SUBSEP r], p99[b SUBSEP r], p99["sockperf" SUBSEP r] }' \
      | sort -k2,2n -k1,1
  fi
  echo
  echo "highest unsaturated offered rate per backend:"
  flat | awk '$11 == "false" && $2 > best[$1] { best[$1] = $2 } { seen[$1] = 1 }
    END { for (b in seen) printf "  %-18s %s\n", b, (b in best) ? sprintf("%d msg/s", best[b]) : "none" }' | sort
} | tee "$out/table.txt"

# Data files and the plot (gnuplot is in scripts/deps.sh; skip the plot if it is missing).
rm -f "$out"/rtt-*.dat
flat | awk -v dir="$out" '$11 == "false" { f = $1; gsub(/[^A-Za-z0-9_.-]/, "_", f)
  print $2, $6, $8 >> (dir "/rtt-" f ".dat") }'
dats=("$out"/rtt-*.dat)
[ -e "${dats[0]}" ] || dats=() # every point saturated: nothing to plot
for f in "${dats[@]}"; do sort -n -o "$f" "$f"; done
if [ ${#dats[@]} -eq 0 ]; then
  echo "plot: none (no unsaturated point); data: $out/results.jsonl"
elif command -v gnuplot >/dev/null; then
  plots=""
  i=1
  for f in "${dats[@]}"; do
    name=$(basename "$f" .dat); name=${name#rtt-}
    plots+="'$f' using 1:2 with linespoints lc $i dt 2 pt 6 title '$name p50', "
    plots+="'$f' using 1:3 with linespoints lc $i dt 1 pt 7 title '$name p99', "
    i=$((i + 1))
  done
  gnuplot <<EOF
set terminal svg size 900,560 dynamic
set output '$out/rtt.svg'
set title "echo RTT vs offered rate ($title)" noenhanced
set xlabel 'offered rate (msg/s)'
set ylabel 'RTT (us)'
set logscale xy
set grid
set key outside right
plot ${plots%, }
EOF
  echo "plot: $out/rtt.svg; data: $out/results.jsonl"
fi
