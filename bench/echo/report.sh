#!/usr/bin/env bash
# bench/echo/report.sh OUT_DIR [TITLE]: turns OUT_DIR/results.jsonl (one JSON object per rate
# point, from ringflow-loadgen --json and run.sh's sockperf parser) into OUT_DIR/table.txt (also
# printed) and OUT_DIR/rtt.svg: p50 and p99 RTT vs offered rate, one line pair per backend,
# unsaturated points only (past saturation the latency measures queue depth, not the path).
# Also prints, per rate, the p99 ratio of each backend to sockperf's best open-loop configuration
# (the yardstick), to the weaker one as a labelled extra, and sockperf's closed-loop ping-pong
# point apart. drops_r/g: UDP datagrams
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
  printf "%-30s %10s %10s %10s %8s %8s %8s %8s %9s %9s %7s %6s %13s  %s\n" backend offered/s sent/s \
    recv/s loss% p50_us p90_us p99_us p99.9_us max_us steal% load1 drops_r/g status
  flat | sort -k2,2n -s | awk '{
    st = $11 == "true" ? sprintf("SATURATED (sent %.0f/s, received %.0f/s, loss %.3f%%)", $3, $4, 100 * $5) : "ok"
    printf "%-30s %10.0f %10.0f %10.0f %8.3f %8.1f %8.1f %8.1f %9.1f %9.1f %7.1f %6.1f %13s  %s\n",
      $1, $2, $3, $4, 100 * $5, $6, $7, $8, $9, $10, $12, $13, $14 "/" $15, st }'
  # The yardstick: of sockperf's under-load configurations (run.sh: epoll, spin; an older run's
  # plain "sockperf"), the one with the most unsaturated rates, then the lower median p99. The
  # others are shown as labelled extras; ping-pong (closed loop, its own rate) is listed apart.
  cfgs=$(flat | awk '$1 ~ /^sockperf/ && $1 !~ /ping-pong/ { print $1 }' | sort -u)
  if [ -n "$cfgs" ]; then
    yard=$(flat | awk '$1 ~ /^sockperf/ && $1 !~ /ping-pong/ { n[$1] += 0
        if ($11 == "false") { n[$1]++; v[$1] = v[$1] " " $8 } }
      END { for (c in n) { k = split(v[c], a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++)
              if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            m = k ? a[int((k + 1) / 2)] : 1e18; printf "%d %s %s\n", n[c], m, c } }' \
      | sort -k1,1nr -k2,2g | head -n 1 | cut -d' ' -f3)
    ratios() { # cfg heading
      echo
      echo "$2"
      flat | awk -v y="$1" '$11 == "false" { p99[$1 SUBSEP $2] = $8; rates[$2] = 1; be[$1] = 1 }
        END { for (r in rates) for (b in be) if (b !~ /^sockperf/ && ((b SUBSEP r) in p99) &&
                ((y SUBSEP r) in p99) && p99[y SUBSEP r] > 0)
                printf "  %-18s %10d  %.3gx  (%.1f vs %.1f us)\n", b, r,
                  p99[b SUBSEP r] / p99[y SUBSEP r], p99[b SUBSEP r], p99[y SUBSEP r] }' \
        | sort -k2,2n -k1,1
    }
    ratios "$yard" "p99 ratio to the yardstick, $yard (sockperf's best open-loop configuration in this run), same rate, both unsaturated; < 1 is better:"
    for c in $cfgs; do
      [ "$c" = "$yard" ] && continue
      ratios "$c" "extra (weaker sockperf configuration, for reference only): p99 ratio to $c:"
    done
  fi
  if flat | grep -q '^sockperf:ping-pong'; then
    echo
    echo "closed loop (one message in flight, at the rate that gives; compare with ringflow-loadgen --mode rr):"
    flat | awk '$1 ~ /^sockperf:ping-pong/ { printf "  %-32s %8.0f msg/s  p50 %.1f us  p99 %.1f us\n", $1, $4, $6, $8 }'
  fi
  echo
  echo "highest unsaturated offered rate per backend:"
  flat | awk '$11 == "false" && $2 > best[$1] { best[$1] = $2 } { seen[$1] = 1 }
    END { for (b in seen) printf "  %-18s %s\n", b, (b in best) ? sprintf("%d msg/s", best[b]) : "none" }' | sort
} | tee "$out/table.txt"

# Data files and the plot (gnuplot is in scripts/deps.sh; skip the plot if it is missing).
# Two panels. Top: p50 (dashed) and p99 (solid) RTT vs offered rate, one colour per backend (the
# same colour for its p50 and p99), unsaturated points joined by lines; saturated points drawn
# apart as crosses of the backend's colour, not joined (past saturation the latency is queue
# depth). Bottom: replies received per second vs offered rate, every point, with the y = x line:
# a backend that keeps up sits on it. Labels are literal (noenhanced: dpdk_af_packet stays as
# written), the title wraps.
rm -f "$out"/rtt-*.dat "$out"/sat-*.dat "$out"/rate-*.dat
flat | awk -v dir="$out" '{ f = $1; gsub(/[^A-Za-z0-9_.-]/, "_", f)
  if ($11 == "false") print $2, $6, $8 >> (dir "/rtt-" f ".dat")
  else print $2, $6, $8 >> (dir "/sat-" f ".dat")
  print $2, $4 >> (dir "/rate-" f ".dat") }'
rates=("$out"/rate-*.dat)
[ -e "${rates[0]}" ] || rates=()
for f in "$out"/rtt-*.dat "$out"/sat-*.dat "$out"/rate-*.dat; do [ -e "$f" ] && sort -n -o "$f" "$f"; done
if [ ${#rates[@]} -eq 0 ]; then
  echo "plot: none (no point); data: $out/results.jsonl"
elif command -v gnuplot >/dev/null; then
  # Distinct colours (Tableau 10, then black and navy), one per backend in file order.
  palette=('#1F77B4' '#FF7F0E' '#2CA02C' '#D62728' '#9467BD' '#8C564B' '#E377C2' '#7F7F7F'
           '#BCBD22' '#17BECF' '#000000' '#000080')
  top="" bot="" i=0
  for f in "${rates[@]}"; do
    name=$(basename "$f" .dat); name=${name#rate-}
    # The backend's name as written in results.jsonl (the file name had : and , replaced).
    label=$(flat | awk -v n="$name" '{ f = $1; gsub(/[^A-Za-z0-9_.-]/, "_", f); if (f == n && !done) { print $1; done = 1 } }')
    c=${palette[$(( i % ${#palette[@]} ))]}
    r=$out/rtt-$name.dat st=$out/sat-$name.dat
    if [ -e "$r" ]; then
      top+="'$r' using 1:2 with linespoints lc rgb '$c' lw 1.5 dt 2 pt 6 ps 0.8 title '$label p50', "
      top+="'$r' using 1:3 with linespoints lc rgb '$c' lw 2 dt 1 pt 7 ps 0.8 title '$label p99', "
    fi
    [ -e "$st" ] && top+="'$st' using 1:3 with points lc rgb '$c' pt 2 ps 1.6 lw 2 notitle, "
    bot+="'$f' using 1:2 with linespoints lc rgb '$c' lw 1.5 pt 7 ps 0.8 title '$label', "
    i=$((i + 1))
  done
  # One key entry for "saturated" (light grey: no backend's colour), drawn off the plot.
  top+="NaN with points lc rgb '#AAAAAA' pt 2 ps 1.6 lw 2 title 'saturated (p99, not joined)'"
  bot+="x with lines lc rgb '#999999' dt 3 lw 1.5 title 'received = offered'"
  # Both panels share the x range and the plot area's margins, so their x axes line up.
  xr=$(flat | awk '{ if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2 }
                   END { printf "[%g:%g]", min / 1.4, max * 1.4 }')
  wrapped=$(echo "echo RTT and rate vs offered rate: $title" | fold -s -w 90 | sed 's/ *$//' \
            | awk '{ printf "%s%s", (NR > 1 ? "\\n" : ""), $0 }')
  gnuplot <<EOF
set terminal svg size 1100,1000 dynamic font 'sans,12' noenhanced
set output '$out/rtt.svg'
set termoption noenhanced
set multiplot layout 2,1 title "$wrapped" font 'sans,13'
set logscale xy
set grid
set xrange $xr
set lmargin at screen 0.09
set rmargin at screen 0.64
set key outside right top Left reverse width 2 samplen 3
set xlabel 'offered rate (msg/s)'
set ylabel 'RTT (us)'
set title 'p50 (dashed) and p99 (solid) RTT; crosses: saturated points (colours as in the key below)'
plot ${top%, }
set ylabel 'replies received (msg/s)'
set title 'received vs offered (every point; a saturated one falls below the grey line)'
plot ${bot%, }
unset multiplot
EOF
  echo "plot: $out/rtt.svg; data: $out/results.jsonl"
fi
