#!/usr/bin/env bash
# bench/fwd/run.sh: the forwarding bed (`make bench-fwd`, docs/forwarding-benchmark.md).
# Three network namespaces in a line, GEN --veth-- FWD --veth-- SINK, names unique per run:
#   GEN  (rffgPID, dev fgPID)   ringflow-pktgen (BPF_PROG_RUN live frames; trafgen when it is not
#                               built) on CPU 0 sends 64-byte frames (60 bytes + FCS)
#   FWD  (rfffPID, fa/fbPID)    the forwarder under test, pinned to CPU 1
#   SINK (rffsPID, dev fsPID)   an XDP program drops every frame; the veth's rx_packets counts them
# Forwarders, each started fresh for every point and measured in interleaved rounds (the order
# rotates each round, so host noise hits all alike): ringflow-l2fwd on each frame backend, the
# peers dpdk-testpmd (io forwarding on the same vdevs), Open vSwitch's userspace datapath
# (private daemons, netdev bridge, flows in_port->output), the Linux bridge, the in-kernel XDP
# redirect fa->fb (xdp-redirect: the bed's ceiling), and the generator alone (gen-only: no
# forwarder, an XDP drop on FWD's first veth; gen-only-trafgen: the same with trafgen, a
# labelled extra row, not comparable with the others' offer).
# With ringflow-pktgen, FWD's first veth has GRO on for every row: redirected XDP frames need
# their receiving veth in NAPI mode, and the skb-path forwarders (bridge, AF_PACKET, OVS
# system) see them only then. Headroom rule: the generator alone must offer >= 3x what the best
# userspace forwarder forwards; a point forwarding >= 90 % of its offer is generator-limited.
# For each point: trafgen runs `--warmup` s, then the counters are read over `--duration` s:
# frames the generator got out (GEN's tx_packets: the offered rate) and frames that reached SINK
# (forwarded). A point where SINK got >= 90 % (trafgen: 97 %) of what GEN sent is
# generator-limited: the forwarder kept up, so its figure is a lower bound on what it can do.
# Then a fixed-rate sweep (the generator's --rate) and the latency through each forwarder
# (ringflow-pktgen: one way GEN->FWD->SINK, timed by SINK's XDP program; trafgen:
# bench/fwd/fwd_latency's round trip, reflected back at SINK).
# Every point records the /proc/stat steal and per-CPU busy deltas.
#
# Output in --out DIR (default BUILD/bench-fwd): results.jsonl (JSON lines: bench, impl, case,
# value, unit, + min/max and details), table.txt (also printed, with the ratios), fwd.svg
# (Mpps per forwarder, median and range) and rtt.svg (RTT vs rate), the logs.
#
#   bench/fwd/run.sh [--build DIR] [--quick] [--rounds N] [--duration S] [--warmup S]
#                    [--impls "LIST"] [--rates PPS,...] [--lat-rates PPS,...] [--lat-duration S]
#                    [--placements "P1 P2"] [--zl-window S] [--zl-steps N] [--zl-rounds N]
#                    [--lat-fracs PCT,...] [--out DIR] [--quiet]
# Impls: gen-only gen-only-trafgen xdp-redirect linux-bridge ovs-system ovs-afxdp testpmd-af_packet testpmd-af_xdp
#        ringflow-packet ringflow-packet-v2 ringflow-xdp-skb ringflow-xdp-native ringflow-xdp-busypoll
#        ringflow-xdp-offload
#        ringflow-dpdk-af_packet ringflow-dpdk-af_xdp (default: all but ringflow-xdp-busypoll;
#        one that cannot start is reported and skipped). ringflow-xdp-busypoll is xdp native with
#        busy_poll= on the receiving port (docs/backends.md: no gain on veth, so not a default).
#        ringflow-xdp-offload is ringflow-l2fwd --offload on the native xdp ports: the port
#        pair forwarded by its XDP program (docs/dataplane-app.md §11), its poller on adaptive
#        idle. The other ringflow rows spin (--idle busy) in P2 and run
#        adaptive in P1, where the receive NAPI shares their CPU (the placement line's "idle").
# --placements "P1 P2" (both by default): P1 all of FWD's receive work on the forwarder's CPU
# (fa's NAPI threaded and its kthread pinned there; RPS where that cannot be), P2 the veth
# default. Every forwarder runs in each, the order alternating by round.
# Zero-loss throughput (ringflow-pktgen only): binary search on --rate from 1.25x the point's
# maximum, --zl-steps (7) trials of --zl-window s (5) in rounds 1..--zl-rounds (3); a trial
# passes when at most 0.1 % of what pktgen attempted is missing at the far end; a rate pktgen
# cannot pace (< 95 %) fails and marks the result capped. Latency (round 1): ringflow-pktgen
# --timestamps at --lat-fracs % (10,50,90) of the zero-loss rate, one way: SINK's XDP program
# (xdp_sink.bpf.c) times each frame against its send time, fwd_sinklat reads the histogram
# (owd_64B); with trafgen, fwd_latency ping at --lat-rates, reflected at SINK (rtt_64B).
# --quick: 1 round of 1 s, no sweep, zero-loss in 2 steps of 0.3 s only for forwarders with a
# way back, latency at 50 %: a smoke test (tests/bench/fwd_bed).
# Needs root. Touches nothing in the root namespace; bench/lib/teardown.sh removes the bed on any exit.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=build
rounds=5
duration=3
warmup=1
impls="gen-only gen-only-trafgen xdp-redirect linux-bridge ovs-system ovs-afxdp testpmd-af_packet testpmd-af_xdp"
impls="$impls ringflow-packet ringflow-packet-v2 ringflow-xdp-skb ringflow-xdp-native ringflow-xdp-offload ringflow-dpdk-af_packet ringflow-dpdk-af_xdp"
rates=25000,50000,100000,200000
lat_rates=1000,5000,20000
lat_duration=3
placements="P1 P2"
zl_window=5
zl_steps=7
zl_rounds=3
lat_fracs=10,50,90
zl_oneway=1 # the zero-loss search also for gen-only and xdp-redirect (no way back: no latency)
quick=0
out=
quiet=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --impls) impls=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --lat-rates) lat_rates=$2; shift 2 ;;
    --lat-duration) lat_duration=$2; shift 2 ;;
    --placements) placements=$2; shift 2 ;;
    --zl-window) zl_window=$2; shift 2 ;;
    --zl-steps) zl_steps=$2; shift 2 ;;
    --zl-rounds) zl_rounds=$2; shift 2 ;;
    --lat-fracs) lat_fracs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,49p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$quick" = 1 ]; then
  rounds=1 duration=1 warmup=0.5 rates= lat_rates=1000 lat_duration=1
  zl_window=0.3 zl_steps=2 zl_rounds=1 lat_fracs=50 zl_oneway=0
fi
for p in $placements; do case "$p" in P1|P2) ;; *) echo "run.sh: --placements takes P1 and/or P2" >&2; exit 2 ;; esac; done
[ -n "$placements" ] || { echo "run.sh: --placements: at least one of P1 P2" >&2; exit 2; }
[[ "$zl_steps" =~ ^[0-9]+$ ]] && [ "$zl_steps" -ge 1 ] && [ "$zl_steps" -le 20 ] || { echo "run.sh: --zl-steps: 1..20" >&2; exit 2; }
[[ "$zl_rounds" =~ ^[0-9]+$ ]] && [ "$zl_rounds" -le 50 ] || { echo "run.sh: --zl-rounds: 0..50" >&2; exit 2; }
[[ "$lat_fracs" =~ ^([1-9][0-9]?(,[1-9][0-9]?)*)?$ ]] || { echo "run.sh: --lat-fracs: percentages 1..99, e.g. 10,50,90" >&2; exit 2; }
awk -v z="$zl_window" 'BEGIN { exit !(z > 0 && z <= 60) }' 2>/dev/null || { echo "run.sh: --zl-window in (0, 60]" >&2; exit 2; }
for v in "$rounds" "$duration" "$warmup" "$lat_duration"; do
  [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: '$v' is not a number" >&2; exit 2; }
done
for v in "$rates" "$lat_rates"; do
  [[ "$v" =~ ^([1-9][0-9]*(,[1-9][0-9]*)*)?$ ]] \
    || { echo "run.sh: --rates and --lat-rates take frames/s as whole numbers, e.g. 25000,50000" >&2; exit 2; }
done
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 50 ] \
  || { echo "run.sh: --rounds must be a whole number 1..50" >&2; exit 2; }
awk -v d="$duration" -v w="$warmup" -v l="$lat_duration" 'BEGIN { exit !(d > 0 && d <= 60 && w <= 30 && l > 0 && l <= 60) }' \
  || { echo "run.sh: --duration and --lat-duration must be in (0, 60], --warmup at most 30" >&2; exit 2; }

die() { echo "run.sh: $*" >&2; exit 1; }
log() { [ "$quiet" = 1 ] || echo "bench-fwd: $*" >&2; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, veth, XDP); run it as root"
command -v ip >/dev/null || die "ip not found: install iproute2 (scripts/deps.sh)"
# ---- the bed (bench/lib/bed.sh): namespaces, sink, anchors, teardown on any exit ----
# shellcheck source=bench/lib/bed.sh
source "$here/../lib/bed.sh"
redir_bin=$build/bench/fwd/fwd_xdp_redirect
bed_pick_generator
shim=$build/bench/fwd/librf_sndbuf_shim.so
xdp_obj=$build/bench/fwd/xdp_sink.bpf.o
lat_bin=$build/bench/fwd/fwd_latency
sinklat_bin=$build/bench/fwd/fwd_sinklat
l2fwd_bin=$build/apps/l2fwd/ringflow-l2fwd
for f in "$shim" "$xdp_obj" "$lat_bin"; do
  [ -e "$f" ] || die "$f not built: run make build (or give --build DIR)"
done
out=${out:-$build/bench-fwd}
mkdir -p "$out"
out=$(cd "$out" && pwd)
res=$out/results.jsonl
: > "$res"
cpu_gen=0
cpu_fwd=1
[ "$(nproc)" -ge 2 ] || cpu_fwd=0

bed_up
bed_gro_on
bed_trafgen_frame "$state/frame.cfg" "$smac" "$gmac"

stat0=$(cpu_sample)
printf '{"bench":"fwd","impl":"host","case":"bed","value":0,"unit":"","tag":%d,"gen_ns":"%s","fwd_ns":"%s","sink_ns":"%s","cpu_gen":%d,"cpu_fwd":%d,"generator":"%s","gen_limit":%s,"fa_gro":%s,"loadavg":%s}\n' \
  "$tag" "$G" "$F" "$S" "$cpu_gen" "$cpu_fwd" "$gen_kind" "$gen_limit" "$([ "$gen_kind" = pktgen ] && echo true || echo false)" \
  "$(cut -d' ' -f1 /proc/loadavg)" >> "$res"

# ---- forwarders: start (fwd_start IMPL: 0 ok, 1 failed with the reason in $fwd_err) / stop ----
fwd_pid=
fwd_err=
fwd_log=
dpdk_n=0

fwd_start() {
  local impl=$1
  fwd_pid= fwd_err=
  fwd_log=$out/fwd-$impl.log
  : > "$fwd_log"
  case "$impl" in
    gen-only|gen-only-trafgen)
      [ "$impl" = gen-only-trafgen ] && ! command -v trafgen >/dev/null \
        && { fwd_err="trafgen not installed (netsniff-ng, scripts/deps.sh)"; return 1; }
      ip -n "$F" link set dev "$fa" xdpdrv obj "$xdp_obj" sec xdp 2>>"$fwd_log" \
        || { fwd_err="could not attach the XDP drop to $fa"; return 1; } ;;
    xdp-redirect)
      [ -x "$redir_bin" ] || { fwd_err="$redir_bin not built (needs libbpf: RF_WITH_XDP)"; return 1; }
      ip netns exec "$F" "$redir_bin" "$fa" "$fb" 2>>"$fwd_log" \
        || { fwd_err="$(tail -n 1 "$fwd_log")"; return 1; } ;;
    linux-bridge) # P1 moves its softirq to the forwarder's CPU, P2 leaves the veth default
      bridge_up || return 1 ;;
    ovs-system|ovs-afxdp)
      fwd_ovs_start "${impl#ovs-}" || return 1 ;;
    testpmd-af_packet|testpmd-af_xdp)
      command -v dpdk-testpmd >/dev/null || { fwd_err="dpdk-testpmd not installed (package dpdk-dev, scripts/deps.sh)"; return 1; }
      local kind=${impl#testpmd-} extra=
      [ "$kind" = af_xdp ] && extra=",start_queue=0,queue_count=1"
      dpdk_n=$((dpdk_n + 1))
      ip netns exec "$F" dpdk-testpmd -l "$cpu_gen,$cpu_fwd" --main-lcore "$cpu_gen" --no-pci --no-huge -m 512 \
        --file-prefix "rffwd${tag}t$dpdk_n" --log-level=lib.eal:error \
        --vdev "net_${kind}0,iface=$fa$extra" --vdev "net_${kind}1,iface=$fb$extra" \
        -- --forward-mode=io --auto-start --stats-period 3600 --nb-cores 1 --total-num-mbufs 16384 \
        </dev/null >> "$fwd_log" 2>&1 &
      fwd_pid=$! ;; # testpmd's stdout is block-buffered into the log: the probe says when it forwards
    ringflow-*)
      [ -x "$l2fwd_bin" ] || { fwd_err="$l2fwd_bin not built"; return 1; }
      local spec0 spec1
      # 16384 buffers, as testpmd's --total-num-mbufs below; the xdp driver sizes its rings from
      # the pool, so the xdp rows get testpmd's net_af_xdp shape (fill 4096, rx/tx/completion
      # 2048). With rings of 1024 ringflow's zero-loss rate was half (docs/forwarding-benchmark.md).
      case "${impl#ringflow-}" in
        packet) spec0="packet:dev=$fa,frames=1" spec1="packet:dev=$fb,frames=1" ;;
        packet-v2) spec0="packet:dev=$fa,frames=1,ring=v2" spec1="packet:dev=$fb,frames=1,ring=v2" ;;
        xdp-skb) spec0="xdp:dev=$fa,mode=skb,frames=1" spec1="xdp:dev=$fb,mode=skb,frames=1" ;;
        xdp-native|xdp-offload) spec0="xdp:dev=$fa,mode=native,frames=1" spec1="xdp:dev=$fb,mode=native,frames=1" ;;
        xdp-busypoll) # the poller runs fa's receive NAPI itself (recvfrom polls it); the
          # device defers it meanwhile (napi_defer_hard_irqs, gro_flush_timeout: af_xdp.rst)
          in_f sh -c "echo 2 > /sys/class/net/$fa/napi_defer_hard_irqs && echo 200000 > /sys/class/net/$fa/gro_flush_timeout" 2>>"$fwd_log" \
            || { fwd_err="could not set napi_defer_hard_irqs/gro_flush_timeout on $fa"; return 1; }
          spec0="xdp:dev=$fa,mode=native,frames=1,busy_poll=20" spec1="xdp:dev=$fb,mode=native,frames=1" ;;
        dpdk-af_packet) spec0="dpdk:vdev=net_af_packet0,iface=$fa,frames=1" spec1="dpdk:vdev=net_af_packet1,iface=$fb,frames=1" ;;
        dpdk-af_xdp) spec0="dpdk:vdev=net_af_xdp0,iface=$fa,frames=1" spec1="dpdk:vdev=net_af_xdp1,iface=$fb,frames=1" ;;
        *) fwd_err="unknown ringflow backend"; return 1 ;;
      esac
      # Idle policy: busy in P2 (the receive NAPI runs elsewhere); the app's default adaptive
      # in P1, where the NAPI that fills the poller's rings runs on the poller's own CPU and a
      # spinning poller takes the CPU from it (busy gave half the rate there:
      # docs/forwarding-benchmark.md); and with --offload (the kernel forwards, the poller
      # sees almost nothing), in both placements.
      local off= idle=busy
      [ "$pl" = P1 ] && idle=adaptive
      [ "$impl" = ringflow-xdp-offload ] && off=--offload idle=adaptive
      # busy polling: the poller's own recvfrom runs the receive NAPI, so it must keep calling
      [ "$impl" = ringflow-xdp-busypoll ] && idle=busy
      fwd_idle=$idle
      ip netns exec "$F" "$l2fwd_bin" --port "$spec0" --port "$spec1" $off \
        --cores "$cpu_fwd" --idle $idle --buffers 16384 </dev/null >> "$fwd_log" 2>&1 &
      fwd_pid=$! ;;
    *) fwd_err="unknown forwarder '$impl'"; return 1 ;;
  esac
  fwd_probe || { fwd_err="no frame reached SINK through $impl within 15 s${fwd_err:+: $fwd_err}"; return 1; }
}

cur_impl=
sink_rx() {
  if [ "${cur_impl#gen-only}" != "$cur_impl" ]; then devpk "$apid_f" "$fa" | cut -d' ' -f1
  else devpk "$apid_s" "$sdev" | cut -d' ' -f1; fi
}

fwd_ovs_start() { # system|afxdp
  ovs_up "$1" || return 1
  local ofa ofb
  ofa=$ovs_ofa ofb=$ovs_ofb
  ovs-ofctl del-flows "ovs$tag" >>"$fwd_log" 2>&1 &&
  ovs-ofctl add-flow "ovs$tag" "in_port=$ofa,actions=output:$ofb" >>"$fwd_log" 2>&1 &&
  ovs-ofctl add-flow "ovs$tag" "in_port=$ofb,actions=output:$ofa" >>"$fwd_log" 2>&1 \
    || { fwd_err="ovs-ofctl add-flow failed: $(tail -n 1 "$fwd_log")"; return 1; }
}

fwd_ovs_stop() { ovs_down; }

fwd_stop() {
  local impl=$1 i
  tg_stop
  if [ -n "$fwd_pid" ]; then
    kill -INT "$fwd_pid" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$fwd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$fwd_pid" 2>/dev/null || true
    wait "$fwd_pid" 2>/dev/null || true
    # ringflow's dpdk driver names its EAL files rf<pid>: a clean close removes them
    if [ -e "/var/run/dpdk/rf$fwd_pid" ]; then
      log "$impl left /var/run/dpdk/rf$fwd_pid (removed)"
      rm -rf "/var/run/dpdk/rf$fwd_pid"
    fi
    fwd_pid=
  fi
  case "$impl" in
    gen-only*|xdp-redirect) ip -n "$F" link set dev "$fa" xdp off 2>/dev/null || true ;;
    ringflow-xdp-busypoll)
      in_f sh -c "echo 0 > /sys/class/net/$fa/napi_defer_hard_irqs; echo 0 > /sys/class/net/$fa/gro_flush_timeout" 2>/dev/null || true ;;
    linux-bridge) bridge_down ;;
    ovs-*) fwd_ovs_stop ;;
    testpmd-*|ringflow-*)
      # a forwarder killed before its close leaves an XDP program attached: detach it
      ip -n "$F" link set dev "$fa" xdp off 2>/dev/null || true
      ip -n "$F" link set dev "$fb" xdp off 2>/dev/null || true ;;
  esac
  # An AF_XDP socket's queue binding is released a moment after its process exits: the next
  # forwarder binding the same queue would get EBUSY (seen with OVS afxdp after testpmd af_xdp).
  case "$impl" in *xdp*) sleep 1 ;; esac
  placement_reset
  # DPDK runtime files: a clean exit leaves none; say so if one did, then remove ours.
  local left
  left=$(ls -d /var/run/dpdk/rffwd"$tag"t* 2>/dev/null || true)
  if [ -n "$left" ]; then
    log "$impl left DPDK runtime files: $left (removed)"
    rm -rf /var/run/dpdk/rffwd"$tag"t*
  fi
}

# ---- latency through a running forwarder: reflector in SINK, sender in GEN (both CPU 0) ----
latency() { # impl rate
  local impl=$1 rate=$2 rpid line
  ip netns exec "$S" taskset -c "$cpu_gen" "$lat_bin" reflect --dev "$sdev" \
    --duration "$(awk -v d="$lat_duration" 'BEGIN { printf "%d", d + 4 }')" </dev/null >> "$out/latency.log" 2>&1 &
  rpid=$!
  sleep 0.2
  if line=$(ip netns exec "$G" taskset -c "$cpu_gen" "$lat_bin" ping --dev "$gdev" --dst "$smac" \
      --rate "$rate" --duration "$lat_duration" --label "$impl" 2>> "$out/latency.log") && [ -n "$line" ]; then
    [ -n "$placement" ] && line="${line%\}},\"placement\":\"$placement\"}"
    echo "$line" >> "$res"
    echo "  $line" >&2
  else
    log "$impl: latency at $rate/s failed: $(tail -n 1 "$out/latency.log")"
  fi
  kill -TERM "$rpid" 2>/dev/null || true
  wait "$rpid" 2>/dev/null || true
}

# ---- placements: where FWD's receive work for fa runs ----
# A veth receives on the CPU of the sender: by default (P2) fa's NAPI, and with it the packet
# socket copy, the XDP program or the bridge, runs on the generator's CPU. P1 puts all of the
# forwarder's work on its CPU: fa's NAPI threaded (/sys/class/net/fa/threaded, inside FWD) and
# its kthread pinned to cpu_fwd; where that is impossible (no NAPI: trafgen without GRO; no
# kthread found), RPS of fa's queue to cpu_fwd. $placement_how says which.
placement=
placement_how=
napi_kthreads() { # the PIDs of fa's NAPI kthreads (comm "napi/<dev>-<id>", cut to 15 bytes)
  local want p c
  want=$(printf '%.15s' "napi/$fa-")
  for p in /proc/[0-9]*; do
    c=$(cat "$p/comm" 2>/dev/null) || continue
    [ "${c#"$want"}" != "$c" ] && echo "${p#/proc/}"
  done
  return 0
}
placement_apply() { # P1|P2
  placement=$1 placement_how=default
  [ "$1" = P2 ] && return 0
  local pids pid ok=0
  if in_f sh -c "echo 1 > /sys/class/net/$fa/threaded" 2>>"$fwd_log"; then
    pids=$(napi_kthreads)
    for pid in $pids; do taskset -p -c "$cpu_fwd" "$pid" >/dev/null 2>>"$fwd_log" && ok=1; done
  fi
  if [ "$ok" = 1 ]; then
    placement_how=threaded-napi
  else
    in_f sh -c "echo 0 > /sys/class/net/$fa/threaded" 2>/dev/null || true
    in_f sh -c "echo $((1 << cpu_fwd)) > /sys/class/net/$fa/queues/rx-0/rps_cpus" 2>>"$fwd_log" \
      && placement_how=rps || placement_how=failed
  fi
}
placement_reset() {
  in_f sh -c "echo 0 > /sys/class/net/$fa/threaded" 2>/dev/null || true
  in_f sh -c "echo 0 > /sys/class/net/$fa/queues/rx-0/rps_cpus" 2>/dev/null || true
  placement= placement_how=
}

# ---- zero-loss throughput (RFC 2544 style): binary search on ringflow-pktgen --rate ----
# One trial: pktgen at RATE for the window (foreground, bounded), the far end's count before and
# after (0.2 s for frames in flight); loss against what pktgen attempted (its exact count,
# refused frames included). Prints "attempted forwarded attempted_pps"; 1 if pktgen failed.
zl_trial() { # rate
  local a b line
  a=$(sink_rx)
  line=$(timeout -k 2 "$(awk -v w="$zl_window" 'BEGIN { printf "%d", w + 15 }')" ip netns exec "$G" \
    "$pktgen_bin" --dev "$gdev" --dst-mac "$smac" --cpu "$cpu_gen" --rate "$1" --duration "$zl_window" \
    --json 2>>"$out/pktgen.log" | tail -n 1) || true
  sleep 0.2
  b=$(sink_rx)
  [[ "$line" == *'"attempted":'* ]] || return 1
  awk -v l="$line" -v fw=$((b - a)) 'BEGIN {
    match(l, /"attempted":[0-9]+/); at = substr(l, RSTART + 12, RLENGTH - 12)
    match(l, /"attempted_pps":[0-9.]+/); ap = substr(l, RSTART + 16, RLENGTH - 16)
    printf "%d %d %s\n", at, fw, ap }'
}
zl_rate=0
zero_loss() { # impl round max-forwarded-Mpps: sets zl_rate (pps, 0 if nothing passed)
  local impl=$1 r=$2 hi lo=0 mid step=0 at fw ap pass capped=false
  hi=$(awk -v m="$3" 'BEGIN { printf "%d", m * 1.25e6 }')
  zl_rate=0
  [ "$hi" -ge 1000 ] || hi=1000
  mid=$hi
  while [ "$step" -lt "$zl_steps" ]; do
    step=$((step + 1))
    if ! read -r at fw ap < <(zl_trial "$mid"); then
      log "$impl: zero-loss trial at $mid/s: the generator failed: $(tail -n 1 "$out/pktgen.log")"
      break
    fi
    pass=$(awk -v at="$at" -v fw="$fw" 'BEGIN { print (at > 0 && fw >= at * 0.999) ? 1 : 0 }')
    # the generator could not keep the rate: this rate cannot be judged; the search stops below it
    if awk -v ap="$ap" -v m="$mid" 'BEGIN { exit !(ap < 0.95 * m) }'; then capped=true; pass=0; fi
    printf '{"bench":"fwd","impl":"%s","case":"zl_step","round":%d,"placement":"%s","target_pps":%d,"attempted":%d,"forwarded":%d,"attempted_pps":%s,"pass":%s,"value":%s,"unit":"loss_pct"}\n' \
      "$impl" "$r" "$placement" "$mid" "$at" "$fw" "$ap" "$([ "$pass" = 1 ] && echo true || echo false)" \
      "$(awk -v at="$at" -v fw="$fw" 'BEGIN { printf "%.4f", (at > 0 ? 100 * (at - fw) / at : 100) }')" >> "$res"
    if [ "$pass" = 1 ]; then lo=$mid; else hi=$mid; fi
    [ "$lo" = "$hi" ] && break
    mid=$(( (lo + hi) / 2 ))
    [ "$mid" -gt "$lo" ] || break
  done
  zl_rate=$lo
  printf '{"bench":"fwd","impl":"%s","case":"zero_loss_64B","round":%d,"placement":"%s","value":%.4f,"unit":"Mpps","rate_pps":%d,"first_fail_pps":%d,"steps":%d,"window_s":%s,"loss_max_pct":0.1,"gen_capped":%s,"at_top":%s}\n' \
    "$impl" "$r" "$placement" "$(awk -v x="$lo" 'BEGIN { print x / 1e6 }')" "$lo" "$hi" "$step" "$zl_window" "$capped" \
    "$([ "$lo" = "$hi" ] && echo true || echo false)" >> "$res"
  tail -n 1 "$res" | sed 's/^/  /' >&2
}

# ---- one-way latency with ringflow-pktgen --timestamps: timed by SINK's XDP program ----
# pktgen stamps each frame's send time (bpf_ktime_get_ns) as it leaves; xdp_sink.bpf.c takes
# the same clock on arrival at SINK and counts the difference in its histogram, which
# fwd_sinklat reads over the window: GEN -> FWD -> SINK, one way, at any rate the forwarder
# carries, with nothing sent back through it.
latency_pktgen() { # impl rate-pps frac-pct
  local impl=$1 rate=$2 frac=$3 lpid line gline sent i
  if [ ! -x "$sinklat_bin" ]; then log "$impl: no latency: $sinklat_bin not built (needs libbpf)"; return 0; fi
  rm -f "$state/sinklat.ready"
  ip netns exec "$S" "$sinklat_bin" --dev "$sdev" --label "$impl" --ready "$state/sinklat.ready" \
    --duration "$(awk -v d="$lat_duration" 'BEGIN { print d + 1 }')" </dev/null > "$state/sinklat.out" 2>> "$out/latency.log" &
  lpid=$!
  for i in $(seq 100); do [ -e "$state/sinklat.ready" ] || ! kill -0 "$lpid" 2>/dev/null && break; sleep 0.05; done
  gline=$(timeout -k 2 "$(awk -v d="$lat_duration" 'BEGIN { printf "%d", d + 15 }')" ip netns exec "$G" \
    "$pktgen_bin" --dev "$gdev" --dst-mac "$smac" --cpu "$cpu_gen" --rate "$rate" --duration "$lat_duration" \
    --timestamps --json 2>>"$out/pktgen.log" | tail -n 1) || true
  wait "$lpid" 2>/dev/null || true
  line=$(cat "$state/sinklat.out" 2>/dev/null || true)
  sent=$(echo "$gline" | grep -o '"sent":[0-9]*' | cut -d: -f2 || true)
  if [[ "$line" == *'"case":"owd_64B"'* ]] && [ -n "$sent" ]; then
    line="${line%\}},\"sent\":$sent,\"rate_pps\":$rate,\"frac_of_zero_loss\":$frac,\"placement\":\"$placement\",\"lost\":$(awk -v s="$sent" -v l="$line" 'BEGIN {
      match(l, /"received":[0-9]+/); r = substr(l, RSTART + 11, RLENGTH - 11); print (s + 0 > r + 0 ? s - r : 0) }'),\"generator\":\"pktgen\"}"
    echo "$line" >> "$res"
    echo "  $line" >&2
  else
    log "$impl: latency at $rate/s ($frac % of zero-loss) failed: $(tail -n 1 "$out/latency.log") / $(tail -n 1 "$out/pktgen.log")"
  fi
}

read -r -a impl_list <<< "$impls"
IFS=, read -r -a rate_list <<< "$rates"
IFS=, read -r -a lat_list <<< "$lat_rates"
declare -A broken=()
main_gen=$gen_kind main_limit=$gen_limit
log "GEN $G ($gdev, CPU $cpu_gen) -> FWD $F ($fa, $fb; CPU $cpu_fwd) -> SINK $S ($sdev, XDP drop)"
log "$rounds round(s) of ${warmup}s warm-up + ${duration}s; sweep: ${rates:-none}; latency: ${lat_rates:-none} pps for ${lat_duration}s"
n=${#impl_list[@]}
read -r -a pl_list <<< "$placements"
IFS=, read -r -a frac_list <<< "$lat_fracs"
log "placements: $placements (P1: FWD's receive work on CPU $cpu_fwd, P2: the veth default); zero-loss: $zl_steps steps of ${zl_window}s in rounds 1..$zl_rounds"
for ((r = 1; r <= rounds; r++)); do
  for ((j = 0; j < n; j++)); do
    impl=${impl_list[$(( (j + r - 1) % n ))]}
    np=${#pl_list[@]}
    for ((k = 0; k < np; k++)); do # the placements' order alternates by round too
      pl=${pl_list[$(( (k + r - 1) % np ))]}
      [ -z "${broken[$impl]:-}" ] || continue
      cur_impl=$impl fwd_idle=-
      gen_kind=$main_gen gen_limit=$main_limit
      [ "$impl" = gen-only-trafgen ] && gen_kind=trafgen gen_limit=0.97
      log "[round $r/$rounds] $impl $pl"
      if ! fwd_start "$impl"; then
        log "$impl: skipped: $fwd_err"
        broken[$impl]=$fwd_err
        printf '{"bench":"fwd","impl":"%s","case":"unavailable","value":0,"unit":"","reason":"%s"}\n' \
          "$impl" "$(echo "$fwd_err" | tr -d '"\\' | tr '\n' ' ')" >> "$res"
        fwd_stop "$impl"
        continue
      fi
      placement_apply "$pl"
      printf '{"bench":"fwd","impl":"%s","case":"placement","round":%d,"placement":"%s","how":"%s","idle":"%s","value":0,"unit":""}\n' \
        "$impl" "$r" "$pl" "$placement_how" "$fwd_idle" >> "$res"
      if point "$impl" max_64B 0 "$r"; then
        maxf=$(tail -n 1 "$res" | grep -o '"value":[0-9.]*' | cut -d: -f2)
        if [ "$gen_kind" = pktgen ] && [ "$r" -le "$zl_rounds" ] \
          && { [ "$zl_oneway" = 1 ] || { [ "${impl#gen-only}" = "$impl" ] && [ "$impl" != xdp-redirect ]; }; }; then
          zero_loss "$impl" "$r" "$maxf"
          # one-way latency at fractions of this forwarder's zero-loss rate (round 1; the
          # in-kernel redirect too, not gen-only: its frames stop at FWD); when no rate
          # passed, at the first --lat-rates rate, marked frac 0
          if [ "$r" = 1 ] && [ "${impl#gen-only}" = "$impl" ]; then
            if [ "$zl_rate" -gt 0 ]; then
              for fr in "${frac_list[@]}"; do
                lr=$(( zl_rate * fr / 100 ))
                if [ "$lr" -ge 1 ]; then latency_pktgen "$impl" "$lr" "$fr"; fi
              done
            elif [ "${#lat_list[@]}" -gt 0 ]; then
              latency_pktgen "$impl" "${lat_list[0]}" 0
            fi
          fi
        fi
      fi
      if [ "$r" = 1 ]; then # the sweep; the old latency tool with trafgen
        for rate in "${rate_list[@]}"; do point "$impl" rate_64B "$rate" 1 || true; done
        if [ "$gen_kind" != pktgen ] && [ "${impl#gen-only}" = "$impl" ] && [ "$impl" != xdp-redirect ]; then
          for rate in "${lat_list[@]}"; do latency "$impl" "$rate"; done
        fi
      fi
      fwd_stop "$impl"
    done
  done
done
cur_impl=
gen_kind=$main_gen gen_limit=$main_limit
stat1=$(cpu_sample)
printf '{"bench":"fwd","impl":"host","case":"run_cpu","value":0,"unit":"",%s,"loadavg":%s}\n' \
  "$(cpu_json "$stat0" "$stat1")" "$(cut -d' ' -f1 /proc/loadavg)" >> "$res"

python3 "$here/report.py" "$out" "$gen_kind on GEN CPU $cpu_gen -> FWD CPU $cpu_fwd -> SINK (XDP drop), veth, 64 B frames$([ "$gen_kind" = pktgen ] && echo ", GRO on FWD's first veth")"
