#!/usr/bin/env bash
# bench/fwd/perframe.sh: instructions per forwarded frame of ringflow-l2fwd's userspace path,
# counted by callgrind (a count, not a time: repeatable on a loaded machine, and needs no
# hardware counters). The bed of bench/fwd/run.sh (bench/lib/bed.sh: GEN --veth-- FWD --veth--
# SINK, unique names, teardown on any exit); ringflow-l2fwd runs in FWD under
# `valgrind --tool=callgrind --toggle-collect=fwd_poll`, so only the forwarding poll and what it
# calls is counted (rx burst, tx burst, frees, counters; a syscall counts as one instruction:
# the kernel's share is not here). The generator offers --rate frames/s for --seconds. Polls
# that find nothing are counted too (the kernel may deliver slower than callgrind polls): an
# idle phase before the traffic (counters zeroed and dumped with callgrind_control) gives the
# cost of one empty poll, and "instr_per_frame" is (instructions - empty polls x that cost) /
# frames received ("raw_per_frame" without the correction). Also prints the top functions; the
# callgrind files stay in --out.
# --perf: no valgrind; ringflow-l2fwd runs natively and `perf record -e cpu-clock` (software
# sampling: this guest has no hardware counters) samples the forwarder's CPU, kernel included,
# for --seconds; prints the top symbols and the user/kernel split (a share, not a rate).
#
#   bench/fwd/perframe.sh [--build DIR] [--impl ringflow-packet|ringflow-packet-v2|
#                          ringflow-xdp-skb|ringflow-xdp-native] [--seconds S] [--rate PPS]
#                          [--burst N] [--perf] [--out DIR]
# Needs root and valgrind. Touches nothing in the root namespace.
# shellcheck disable=SC2034,SC2128 # quiet is read by bed.sh; rate is ours (tg_start's array is local)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
impl=ringflow-xdp-skb
seconds=5
rate=300000
burst=32
out=
perf=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --impl) impl=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "perframe.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] && [ "$seconds" -le 60 ] \
  || { echo "perframe.sh: --seconds 1..60" >&2; exit 2; }
[[ "$rate" =~ ^[1-9][0-9]*$ ]] && [ "$rate" -le 20000000 ] \
  || { echo "perframe.sh: --rate: frames/s, 1..20000000" >&2; exit 2; }
die() { echo "perframe.sh: $*" >&2; exit 1; }
log() { echo "perframe: $*" >&2; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, veth, XDP)"
if [ "$perf" = 1 ]; then
  command -v perf >/dev/null || die "perf not found (package linux-perf)"
else
  command -v valgrind >/dev/null || die "valgrind not found"
fi
build=$(cd "$build" && pwd)
quiet=1
# shellcheck source=bench/lib/bed.sh
source "$here/../lib/bed.sh"
bed_pick_generator
shim=$build/bench/fwd/librf_sndbuf_shim.so
xdp_obj=$build/bench/fwd/xdp_sink.bpf.o
l2fwd_bin=$build/apps/l2fwd/ringflow-l2fwd
for f in "$xdp_obj" "$l2fwd_bin"; do [ -e "$f" ] || die "$f not built"; done
out=${out:-$build/perframe}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cpu_gen=0
cpu_fwd=1
[ "$(nproc)" -ge 2 ] || cpu_fwd=0
bed_up
bed_gro_on
bed_trafgen_frame "$state/frame.cfg" "$smac" "$gmac"

case "${impl#ringflow-}" in
  packet) spec0="packet:dev=$fa,frames=1" spec1="packet:dev=$fb,frames=1" ;;
  packet-v2) spec0="packet:dev=$fa,frames=1,ring=v2" spec1="packet:dev=$fb,frames=1,ring=v2" ;;
  xdp-skb) spec0="xdp:dev=$fa,mode=skb,frames=1" spec1="xdp:dev=$fb,mode=skb,frames=1" ;;
  xdp-native) spec0="xdp:dev=$fa,mode=native,frames=1" spec1="xdp:dev=$fb,mode=native,frames=1" ;;
  *) die "--impl $impl: one of ringflow-packet, ringflow-packet-v2, ringflow-xdp-skb, ringflow-xdp-native" ;;
esac
cg=$out/callgrind.$impl.out
rm -f "$cg" "$cg".*
fwd_log=$out/l2fwd.$impl.log
: > "$fwd_log"
wrap=(valgrind --tool=callgrind --toggle-collect=fwd_poll --callgrind-out-file="$cg")
[ "$perf" = 1 ] && wrap=()
ip netns exec "$F" "${wrap[@]}" \
  "$l2fwd_bin" --port "$spec0" --port "$spec1" --cores "$cpu_fwd" --idle busy --burst "$burst" --json \
  </dev/null > "$out/totals.$impl.jsonl" 2>> "$fwd_log" &
fwd_pid=$!
sink_rx() { devpk "$apid_s" "$sdev" | cut -d' ' -f1; }
fwd_probe || die "no frame reached SINK through $impl: ${fwd_err:-} (log: $fwd_log)"
calls() { # file function: how many times fwd_poll's callees called FUNCTION
  callgrind_annotate --tree=calling --inclusive=yes "$1" 2>/dev/null \
    | awk -v f="$2" '!done && index($0, "> ") && index($0, ":" f " (") { s = $0; sub(/.*\(/, "", s); sub(/x\).*/, "", s); gsub(/,/, "", s); print s; done = 1 }'
}
totals() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
if [ "$perf" = 0 ]; then
  sleep 1
  callgrind_control -z "$fwd_pid" > /dev/null
  sleep 2
  callgrind_control --dump=idle "$fwd_pid" > /dev/null
  sleep 0.5
  idle_cg=$cg.1
  [ -s "$idle_cg" ] || die "callgrind_control wrote no dump"
  callgrind_control -z "$fwd_pid" > /dev/null
fi
log "$impl forwards; offering $rate frames/s for $seconds s"
tg_start "$rate"
if [ "$perf" = 1 ]; then
  sleep 1
  perf record -e cpu-clock -C "$cpu_fwd" -o "$out/perf.$impl.data" -- sleep "$seconds" \
    > /dev/null 2>> "$fwd_log" || die "perf record failed (see $fwd_log)"
else
  sleep "$seconds"
fi
tg_stop
sleep 0.5
kill -INT "$fwd_pid"
for _ in $(seq 100); do kill -0 "$fwd_pid" 2>/dev/null || break; sleep 0.2; done
kill -0 "$fwd_pid" 2>/dev/null && { kill -KILL "$fwd_pid"; die "l2fwd did not stop on SIGINT"; }
wait "$fwd_pid" || true
if [ "$perf" = 1 ]; then
  perf report -i "$out/perf.$impl.data" --no-children --sort comm,dso,sym --stdio 2>/dev/null \
    | grep -v '^#' | grep -v '^$' | grep '%' | head -45
  perf report -i "$out/perf.$impl.data" --no-children --sort comm,dso --stdio 2>/dev/null \
    | grep '%' | grep -v '^#' | head -8
  exit 0
fi
ir=$(totals "$cg")
idle_ir=$(totals "$idle_cg")
idle_polls=$(calls "$idle_cg" rf_io_rx_burst)
polls=$(calls "$cg" rf_io_rx_burst)
sends=$(calls "$cg" rf_io_tx_burst)
frames=$(awk -F'"rx":' '/"case":"total"/ { split($2, a, ","); s += a[1] } END { print s + 0 }' \
  "$out/totals.$impl.jsonl")
adds=$(grep -c '"adds_up":true' "$out/totals.$impl.jsonl" || true)
[ "$frames" -gt 0 ] || die "no frame forwarded (see $fwd_log)"
awk -v ir="$ir" -v f="$frames" -v impl="$impl" -v b="$burst" -v a="$adds" -v iir="${idle_ir:-0}" \
    -v ip="${idle_polls:-0}" -v p="${polls:-0}" -v sd="${sends:-0}" 'BEGIN {
  e = ip > 0 ? iir / ip : 0; empty = p - sd; if (empty < 0) empty = 0
  printf "{\"bench\":\"perframe\",\"impl\":\"%s\",\"burst\":%d,\"instr\":%d,\"frames\":%d,\"polls\":%d,\"busy_polls\":%d,", impl, b, ir, f, p, sd
  printf "\"instr_per_empty_poll\":%.1f,\"raw_per_frame\":%.1f,\"instr_per_frame\":%.1f,\"frames_per_busy_poll\":%.1f,\"directions_adding_up\":%d}\n", e, ir / f, (ir - empty * e) / f, sd ? f / sd : 0, a }'
callgrind_annotate --inclusive=yes "$cg" 2>/dev/null | sed -n '/file:function/,$p' | head -24 >&2 || true
