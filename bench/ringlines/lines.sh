#!/usr/bin/env bash
# bench/ringlines/lines.sh [BUILD_DIR]: instructions per call and cache lines crossing between
# producer and consumer per call, for rf_ring, rf_slotring and rte_ring (SPSC), bursts of 32
# and 1, with the consumer keeping up ("empty") and with the producer waiting ("full").
# Exact counts from valgrind's lackey trace of ringflow-ring-trace (docs/ring.md, "What
# crosses between the cores"); no timing, so a loaded machine gives the same table.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench/ringflow-ring-trace
[ -x "$bin" ] || { echo "lines.sh: $bin missing; build the ringflow-ring-trace target first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "lines.sh: valgrind missing (scripts/deps.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-6s %-6s %-6s %6s %6s %8s %8s\n' impl burst regime 'instr' '' 'lines' ''
printf '%-6s %-6s %-6s %6s %6s %8s %8s\n' '' '' '' enq deq 'enq' 'deq'
for impl in rf slot rte; do
  for burst in 32 1; do
    for regime in empty full; do
      iters=$((burst == 32 ? 64 : 512))
      if ! valgrind --tool=lackey --trace-mem=yes --log-file="$tmp/log" \
          "$bin" "$impl" "$regime" "$burst" "$iters" 2>"$tmp/err"; then
        printf '%-6s %-6s %-6s skipped: %s\n' "$impl" "$burst" "$regime" "$(tail -1 "$tmp/err")"
        continue
      fi
      printf '%-6s %-6s %-6s %s\n' "$impl" "$burst" "$regime" "$(python3 "$here/lines.py" "$tmp/log" "$tmp/err")"
    done
  done
done
