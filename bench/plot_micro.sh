#!/usr/bin/env bash
# bench/plot_micro.sh: runs one teaching microbenchmark with --json and draws its figure with
# gnuplot (Debian gnuplot-nox, in scripts/deps.sh). The table goes to stderr as usual; the
# JSON lines are kept next to the SVG so the figure can be redrawn or checked.
#
#   bench/plot_micro.sh falseshare docs/img/falseshare.svg [ringflow-bench options...]
#   bench/plot_micro.sh branch     docs/img/branch.svg     [ringflow-bench options...]
#
# falseshare: ns per increment vs threads, one line per layout (atomic and plain increments).
# branch:     ns per element for each variant, 16 MiB and 32 KiB side by side.
# BENCH=path/to/ringflow-bench overrides the default build/bench/ringflow-bench.
set -euo pipefail

what=${1:?usage: plot_micro.sh falseshare|branch OUT.svg [options]}
out=${2:?usage: plot_micro.sh falseshare|branch OUT.svg [options]}
shift 2
bench=${BENCH:-build/bench/ringflow-bench}
if [ ! -x "$bench" ]; then
	echo "plot_micro.sh: $bench not found; build first (cmake --build build) or set BENCH=" >&2
	exit 1
fi
command -v gnuplot >/dev/null || { echo "plot_micro.sh: gnuplot missing; run scripts/deps.sh" >&2; exit 1; }

json=${out%.svg}.jsonl
"$bench" "$what" --json "$@" >"$json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One JSON object per line, keys in the harness's order: print "impl case value" per line.
fields() { sed -nE 's/.*"impl":"([^"]*)","case":"([^"]*)","value":([^,]*),"unit":"([^"]*)".*/\1 \2 \3 \4/p' "$json"; }

case $what in
falseshare)
	# threads adjacent pad64 pad128, one file per increment kind
	for op in atomic plain; do
		fields | awk -v op="$op" '$4 == "ns/inc" && index($2, op "_t") == 1 {
			t = substr($2, length(op) + 3); v[t, $1] = $3; ts[t] = 1 }
			END { for (t in ts) print t, v[t, "adjacent"], v[t, "pad64"], v[t, "pad128"] }' |
			sort -n >"$tmp/$op.dat"
	done
	gnuplot <<GP
set terminal svg size 720,480 font "sans,11"
set output "$out"
set title "False sharing: each thread increments its own counter (2-vCPU VM)"
set xlabel "threads (last point: 2 x CPUs, oversubscribed)"
set ylabel "ns of CPU time per increment"
set logscale y
set logscale x 2
set xtics 2
set key below
set grid ytics
plot "$tmp/atomic.dat" u 1:2 w linespoints lw 2 t "atomic, adjacent (one line)", \
     "$tmp/atomic.dat" u 1:3 w linespoints lw 2 t "atomic, padded 64 B", \
     "$tmp/atomic.dat" u 1:4 w linespoints dt 2 t "atomic, padded 128 B", \
     "$tmp/plain.dat"  u 1:2 w linespoints lw 2 t "plain, adjacent", \
     "$tmp/plain.dat"  u 1:3 w linespoints lw 2 t "plain, padded 64 B", \
     "$tmp/plain.dat"  u 1:4 w linespoints dt 2 t "plain, padded 128 B"
GP
	;;
branch)
	fields | awk '$4 == "ns/elem" { v[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 }
		if (!($2 in cs)) { cs[$2] = 1; cases[m++] = $2 } }
		END { printf "variant"; for (j = 0; j < m; j++) printf " %s", cases[j]; print "";
		      for (i = 0; i < n; i++) { printf "%s", order[i];
		      for (j = 0; j < m; j++) printf " %s", v[order[i], cases[j]]; print "" } }' >"$tmp/branch.dat"
	ncol=$(head -1 "$tmp/branch.dat" | wc -w)
	gnuplot <<GP
set terminal svg size 720,420 font "sans,11"
set output "$out"
set title "Sum of bytes >= 128 over random data (2-vCPU VM)"
set ylabel "ns per element"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right autotitle columnheader
set grid ytics
set yrange [0:*]
plot for [c=2:$ncol] "$tmp/branch.dat" u c:xtic(1)
GP
	;;
*)
	echo "plot_micro.sh: no plot for '$what' (falseshare or branch)" >&2
	exit 2
	;;
esac
echo "plot_micro.sh: wrote $out and $json" >&2
