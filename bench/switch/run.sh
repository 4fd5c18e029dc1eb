#!/usr/bin/env bash
# bench/switch/run.sh: ringflow-switch vs Open vSwitch's userspace datapath (`make bench-switch`,
# docs/switch.md "Figures"), on the forwarding bed of bench/fwd (bench/lib/bed.sh: three
# namespaces GEN --veth-- FWD --veth-- SINK, an XDP drop on SINK's veth counting what arrives,
# teardown on any exit). The generator on CPU 0 is ringflow-pktgen (BPF_PROG_RUN live frames,
# docs/pktgen.md; --flows gives each case's microflows) when it is built, trafgen (with the
# SO_SNDBUF shim) otherwise. With ringflow-pktgen FWD's first veth has GRO on for every switch
# (live frames reach a veth only in NAPI mode; AF_PACKET and OVS system ports see them only
# then). The switch under test runs in FWD, pinned whole to CPU 1 (pollers, agent; OVS:
# ovs-vswitchd and ovsdb-server). Placement: bench-fwd's P2 only, the veth default (FWD's
# receive NAPI runs where the kernel schedules it, often on the generator's CPU 0); the table
# says so.
#
# Switches (--impls), each started fresh per round, rounds interleaved (the order rotates):
#   ringflow-packet  ringflow-switch, packet driver (AF_PACKET), --idle busy
#   ovs-system       OVS 3.1, netdev bridge, system ports (AF_PACKET underneath)
#   ringflow-xdp     ringflow-switch, xdp driver (AF_XDP, native mode, copy on veth)
#   ringflow-xdp-offload  the same with --offload: decided microflows forwarded by the XDP
#                    program (docs/switch.md "The XDP fast path"), --idle adaptive; compared
#                    with ovs-afxdp too
#   ovs-afxdp        OVS 3.1, netdev bridge, type=afxdp ports (native mode), PMD on CPU 1
#   linux-bridge     the kernel's bridge between FWD's two veths (no OpenFlow, so cases one and
#                    exact1k only; its frames flood to the one other port): the reference that
#                    --offload's rows are also compared with (issue 24: >= 2x the bridge). It
#                    runs in FWD's receive softirq, as the XDP program does
# Both take their flows from the same file through `ovs-ofctl -O OpenFlow13 add-flows` over TCP
# (ringflow: --listen tcp:127.0.0.1:PORT in FWD; OVS: set-controller ptcp:PORT in FWD); ports
# are OpenFlow 1 (GEN side) and 2 (SINK side) in both.
# Each round also measures the generator alone (gen-only: no switch, an XDP drop on FWD's first
# veth; 1 flow): the generator's ceiling, printed beside the switches' figures, and, when
# ringflow-pktgen is the generator and trafgen is installed, trafgen alone (gen-only-trafgen, a
# labelled extra row, never a base of a ratio). Headroom rule: the generator alone must offer
# >= 3x what the best switch forwards; a point forwarding >= 90 % of its offer (trafgen: 97 %)
# is generator-limited (a lower bound).
# Cases (--cases; flows and frames from bench/switch/flows.py):
#   one       forwarded Mpps, 64 B, the generator flat out, 1 flow
#   exact1k   1000 exact 5-tuple flows, traffic over all of them (pktgen --flows 1000)
#   churn     exact1k's flows and traffic while bench/switch/ofchurn applies --churn-rate
#             FLOW_MODs/s (add/delete of flows the traffic never hits); compared with exact1k
#             of the same switch in the same round
#   wild100k  100000 flows over 10 nw_src masks, traffic over 50000 random microflows
#             (pktgen --flows 50000 --flows-mode random); what fits in --install-timeout s (100)
#             is installed and measured (the count and any TABLE_FULL are recorded); only in
#             the first --wild-rounds rounds (default 1: the install is the slow part)
#   pipe3     a 3-table pipeline, ACL (table 0, 301 flows: drops on 5-tuple wildcards, allows
#             -> goto_table:1) -> L2 (table 1: eth_dst -> write_metadata, goto_table:2) ->
#             L3-style (table 2: nw_dst prefixes /8../32 by priority -> set_field eth_src and
#             eth_dst, dec_ttl, output:2), each table ending in a priority-0 drop; exact1k's
#             traffic. After the point the flows' counters are read (check_pipe3): the flows
#             taken per table and the packets any drop flow (table-miss included) took
#   l2l3      pipe3's tables 1 and 2 (L2, routes) behind a table 0 that only goes on, wild100k's
#             traffic (50000 random microflows, which no table tells apart); the flows'
#             counters are read after the point as for pipe3 (check_l2l3)
#   select    in_port=1 -> group:1, a select group of 4 buckets (weights 40 30 20 10, each its
#             own set_field eth_src, output:2), added by `ovs-ofctl add-groups` before the flow;
#             exact1k's traffic; the group's bucket counters are read after the point
#             (check_select)
#   setup     new flows per second under ringflow-controller (learning app, CPU 0, adaptive):
#             bench/switch/flowsetup, --setup-flows flows (2000), --setup-window in flight
#             (32); packet/system ports only; ringflow-switch with --idle --setup-idle
#             (default adaptive: the ports are nearly idle, as OVS's system ports sleep in poll)
#             and packet ports with ring=v2 (each frame handed over on arrival: V3's blocks
#             hold a lone frame until their timer, a kernel tick, which a frame-at-a-time
#             workload pays on every flow; docs/switch.md, "Flow setup")
# Output in --out DIR (default BUILD/bench-switch): results.jsonl (JSON lines: every point with
# offered and forwarded, steal and per-CPU busy; install times; churn and setup details; then
# the summary and ratio lines), table.txt (printed), switch.svg and switch-setup.svg
# (gnuplot), the logs.
#
#   bench/switch/run.sh [--build DIR] [--quick] [--rounds N (3)] [--duration S (3)]
#                       [--warmup S (1)] [--impls "LIST"] [--cases "LIST"] [--setup-flows N]
#                       [--setup-window N] [--setup-idle busy|adaptive] [--churn-rate N (10000)]
#                       [--install-timeout S] [--wild-rounds N] [--switch-bin PATH]
#                       [--buffers N] [--out DIR] [--quiet]
# --switch-bin: another build of ringflow-switch (e.g. a branch's), the rest from --build.
# --buffers: ringflow-switch's packet buffers (its --buffers; default: its own, 8192).
# --quick: 1 round of 1 s, ringflow-packet and ovs-system, cases one exact1k churn pipe3 select
# setup, 200 setup flows (options given explicitly win): a smoke test (ctest switch_bed), under
# 90 s.
# Needs root. Touches nothing in the root namespace; the bed's teardown removes everything.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=build
sw_bin=
rounds=3
duration=3
warmup=1
impls=
cases=
setup_flows=
setup_window=32
setup_idle=adaptive
churn_rate=10000
install_timeout=100
wild_rounds=1
quick=0
buffers=
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
    --cases) cases=$2; shift 2 ;;
    --setup-flows) setup_flows=$2; shift 2 ;;
    --churn-rate) churn_rate=$2; shift 2 ;;
    --setup-idle) setup_idle=$2; shift 2 ;;
    --setup-window) setup_window=$2; shift 2 ;;
    --install-timeout) install_timeout=$2; shift 2 ;;
    --wild-rounds) wild_rounds=$2; shift 2 ;;
    --switch-bin) sw_bin=$2; shift 2 ;;
    --buffers) buffers=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,/^# Needs root/p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$quick" = 1 ]; then # the options given explicitly still win for impls and cases
  rounds=1 duration=1 warmup=0.5 setup_flows=${setup_flows:-200}
  impls=${impls:-ringflow-packet ovs-system} cases=${cases:-one exact1k churn pipe3 select setup}
fi
impls=${impls:-ringflow-packet ovs-system ringflow-xdp ringflow-xdp-offload ovs-afxdp linux-bridge}
all_cases="one exact1k churn pipe3 l2l3 select wild100k setup"
cases=${cases:-$all_cases}
setup_flows=${setup_flows:-2000}
die() { echo "bench-switch: $*" >&2; exit 1; }
log() { [ "$quiet" = 1 ] || echo "bench-switch: $*" >&2; }
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 20 ] || die "--rounds: a whole number 1..20"
[[ "$setup_flows" =~ ^[0-9]+$ ]] && [ "$setup_flows" -ge 1 ] && [ "$setup_flows" -le 8000 ] \
  || die "--setup-flows: 1..8000 (the controller learns at most 8192 MACs per switch)"
[[ "$setup_window" =~ ^[0-9]+$ ]] && [ "$setup_window" -ge 1 ] && [ "$setup_window" -le 1024 ] || die "--setup-window: 1..1024"
[ -z "$buffers" ] || { [[ "$buffers" =~ ^[0-9]+$ ]] && [ "$buffers" -ge 256 ] && [ "$buffers" -le 4194304 ]; } || die "--buffers: 256..4194304"
case "$setup_idle" in busy|adaptive) ;; *) die "--setup-idle: busy or adaptive" ;; esac
[[ "$install_timeout" =~ ^[0-9]+$ ]] && [ "$install_timeout" -ge 5 ] && [ "$install_timeout" -le 600 ] || die "--install-timeout: 5..600 s"
[[ "$wild_rounds" =~ ^[0-9]+$ ]] || die "--wild-rounds: a whole number"
[[ "$churn_rate" =~ ^[0-9]+$ ]] && [ "$churn_rate" -ge 1 ] && [ "$churn_rate" -le 100000 ] || die "--churn-rate: 1..100000"
awk -v d="$duration" -v w="$warmup" 'BEGIN { exit !(d > 0 && d <= 60 && w >= 0 && w <= 30) }' 2>/dev/null \
  || die "--duration in (0, 60], --warmup in [0, 30]"
for c in $cases; do [[ " $all_cases " == *" $c "* ]] || die "unknown case '$c'"; done
for i in $impls; do case "$i" in ringflow-packet|ringflow-xdp|ringflow-xdp-offload|ovs-system|ovs-afxdp|linux-bridge) ;; *) die "unknown switch '$i'" ;; esac; done

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, veth, XDP); run it as root"
for t in ip ovs-vswitchd ovs-ofctl python3; do
  command -v "$t" >/dev/null || die "$t not found: run scripts/deps.sh (iproute2, openvswitch-switch)"
done
# ---- the bed (bench/lib/bed.sh) ----
# shellcheck source=bench/lib/bed.sh
source "$here/../lib/bed.sh"
bed_pick_generator
main_gen=$gen_kind main_limit=$gen_limit
shim=$build/bench/fwd/librf_sndbuf_shim.so
xdp_obj=$build/bench/fwd/xdp_sink.bpf.o
sw_bin=${sw_bin:-$build/apps/ofswitch/ringflow-switch}
ctl_bin=$build/apps/openflow/controller/ringflow-controller
churn_bin=$build/bench/switch/ofchurn
setup_bin=$build/bench/switch/flowsetup
for f in "$shim" "$xdp_obj" "$sw_bin" "$ctl_bin" "$churn_bin" "$setup_bin"; do
  [ -e "$f" ] || die "$f not built: run make build (or give --build DIR)"
done
out=${out:-$build/bench-switch}
mkdir -p "$out"
out=$(cd "$out" && pwd)
res=$out/results.jsonl
: > "$res"
cpu_gen=0
cpu_fwd=1
[ "$(nproc)" -ge 2 ] || cpu_fwd=0
bed_bench=switch

bed_up
bed_gro_on
ceiling=0 # 1 while the generator's ceiling is measured (frames counted at FWD's first veth)
sink_rx() {
  if [ "$ceiling" = 1 ]; then devpk "$apid_f" "$fa" | cut -d' ' -f1
  else devpk "$apid_s" "$sdev" | cut -d' ' -f1; fi
}
for c in one exact1k wild100k pipe3 l2l3 select; do
  python3 "$here/flows.py" "$c" "$state" "$smac" "$gmac"
done
# fwd_probe sends 20 frames of the case's traffic ($tg_conf for trafgen, $pktgen_args for pktgen)
stat0=$(cpu_sample)
printf '{"bench":"switch","impl":"host","case":"bed","value":0,"unit":"","placement":"P2","tag":%d,"generator":"%s","gen_limit":%s,"fa_gro":%s,"cpu_gen":%d,"cpu_fwd":%d,"loadavg":"%s","procs_running":%s,"ovs":"%s","kernel":"%s","switch_bin":"%s","sw_buffers":%s,"commit":"%s"}\n' \
  "$tag" "$gen_kind" "$gen_limit" "$([ "$gen_kind" = pktgen ] && echo true || echo false)" "$cpu_gen" "$cpu_fwd" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(awk '/^procs_running/ {print $2}' /proc/stat)" \
  "$(ovs-vswitchd --version | awk 'NR==1 {print $NF}')" "$(uname -r)" "$sw_bin" "${buffers:-null}" \
  "$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)" >> "$res"

# ---- the switch under test ----
# Its OpenFlow listener and the controller's port are on FWD's own loopback (private to this
# run); fresh numbers for every start, so no TIME_WAIT of a previous switch is in the way.
sw_n=0
OF=
ctl_port=
fwd_pid=
fwd_log=
ctl_pid=
ofctl() { in_f timeout 300 ovs-ofctl -O OpenFlow13 "$@"; }
ofdump() { in_f timeout 10 ovs-ofctl -O OpenFlow13 dump-flows "$OF" 2>/dev/null; }
# Background processes in FWD are started with `ip netns exec` itself (it execs them), never
# through a shell function: $! must be the process, so that stopping it by PID stops it.

sw_start() { # impl [with-controller]
  local impl=$1 ctl=${2:-} i
  fwd_pid='' fwd_err=''
  sw_n=$((sw_n + 1))
  of_port=$((7000 + sw_n)) OF=tcp:127.0.0.1:$((7000 + sw_n))
  fwd_log=$out/sw-$impl.log
  case "$impl" in
    linux-bridge) # no OpenFlow listener to wait for
      bridge_up
      return ;;
    ringflow-*)
      local a b
      if [ "${impl#ringflow-}" != packet ]; then a="xdp:dev=$fa,mode=native,frames=1" b="xdp:dev=$fb,mode=native,frames=1"
      else a="packet:dev=$fa,frames=1" b="packet:dev=$fb,frames=1"; fi
      [ -n "$ctl" ] && [ "$impl" = ringflow-packet ] && a+=",ring=v2" b+=",ring=v2" # flow setup
      local cargs=()
      [ "$impl" = ringflow-xdp-offload ] && cargs=(--offload)
      [ -n "$ctl" ] && cargs+=(--controller "tcp:127.0.0.1:$ctl_port")
      [ -n "$buffers" ] && cargs+=(--buffers "$buffers")
      # forwarding: busy polling (as ringflow-l2fwd on the bed), but --offload idles adaptively
      # (its poller has little to do, and a spinning one takes the CPU from the NAPI that runs
      # the XDP program when both share it); flow setup: --setup-idle
      local idle=busy
      [ "$impl" = ringflow-xdp-offload ] && idle=adaptive
      [ -n "$ctl" ] && idle=$setup_idle
      ip netns exec "$F" taskset -c "$cpu_fwd" "$sw_bin" --port "$a" --port "$b" --cores "$cpu_fwd" --idle "$idle" \
        --listen "$OF" "${cargs[@]}" </dev/null >> "$fwd_log" 2>&1 &
      fwd_pid=$! ;;
    ovs-*)
      ovs_up "${impl#ovs-}" || return 1
      local ctls=("ptcp:$of_port:127.0.0.1")
      [ -n "$ctl" ] && ctls+=("tcp:127.0.0.1:$ctl_port")
      # in-band control off: no hidden flows of OVS's own beside the benchmark's
      vsctl --no-wait set bridge "ovs$tag" protocols=OpenFlow13 other_config:disable-in-band=true \
        -- set-controller "ovs$tag" "${ctls[@]}" >>"$fwd_log" 2>&1 \
        || { fwd_err="ovs-vsctl set-controller failed: $(tail -n 1 "$fwd_log")"; return 1; } ;;
  esac
  for i in $(seq 100); do # the listener answers (10 s at most)
    if [ -n "$fwd_pid" ] && ! kill -0 "$fwd_pid" 2>/dev/null; then
      fwd_err="it exited: $(tail -n 1 "$fwd_log")"; return 1
    fi
    ofdump >/dev/null && return 0
    sleep 0.1
  done
  fwd_err="no OpenFlow listener at $OF in $F within 10 s"
  return 1
}

sw_stop() { # impl
  local i
  tg_stop
  if [ -n "$fwd_pid" ]; then
    kill -INT "$fwd_pid" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$fwd_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$fwd_pid" 2>/dev/null || true
    wait "$fwd_pid" 2>/dev/null || true
    fwd_pid=
    ip -n "$F" link set dev "$fa" xdp off 2>/dev/null || true
    ip -n "$F" link set dev "$fb" xdp off 2>/dev/null || true
  fi
  case "$1" in
    ovs-*) ovs_down ;;
    linux-bridge) bridge_down ;;
  esac
  if [ -n "$ctl_pid" ]; then
    kill -TERM "$ctl_pid" 2>/dev/null || true
    for i in $(seq 30); do kill -0 "$ctl_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$ctl_pid" 2>/dev/null || true
    wait "$ctl_pid" 2>/dev/null || true
    ctl_pid=
  fi
  case "$1" in *xdp*) sleep 1 ;; esac # the AF_XDP queue binding outlives the process a moment
}

note() { # impl case round reason: a point that could not be measured
  printf '{"bench":"switch","impl":"%s","case":"%s","round":%d,"value":null,"unit":"Mpps","reason":"%s"}\n' \
    "$1" "$2" "$3" "$(echo "$4" | tr -d '"\\' | tr '\n' ' ')" >> "$res"
  log "$1 $2: $4"
}

# Replaces the switch's flows (and groups) with a case's files, the groups (CASE.groups, if the
# case has one) before the flows that use them; records the time and how many went in.
install() { # impl case round
  local impl=$1 c=$2 r=$3 t0 t1 n rc=0 want
  want=$(wc -l < "$state/$c.flows")
  ofctl del-groups "$OF" >> "$fwd_log" 2>&1 \
    || log "$impl: del-groups failed: $(tail -n 1 "$fwd_log")"
  t0=$(now_ns)
  ofctl del-flows "$OF" >> "$fwd_log" 2>&1 || rc=$?
  if [ "$rc" = 0 ] && [ -e "$state/$c.groups" ]; then
    ofctl add-groups "$OF" "$state/$c.groups" >> "$out/install-$impl.log" 2>&1 || rc=$?
  fi
  [ "$rc" = 0 ] && { in_f timeout "$install_timeout" ovs-ofctl -O OpenFlow13 add-flows "$OF" "$state/$c.flows" >> "$out/install-$impl.log" 2>&1 || rc=$?; }
  t1=$(now_ns)
  n=$(ofctl dump-flows "$OF" 2>/dev/null | grep -c 'actions=' || true)
  printf '{"bench":"switch","impl":"%s","case":"install_%s","round":%d,"value":%.3f,"unit":"s","flows_wanted":%d,"flows_installed":%d,"ofctl_status":%d,"last_error":"%s"}\n' \
    "$impl" "$c" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) / 1e9 }')" "$want" "$n" "$rc" \
    "$( (grep -iE 'error|TABLE_FULL|fail' "$out/install-$impl.log" || true) | tail -n 1 | tr -d '"\\' | cut -c1-160)" >> "$res"
  [ "$n" -gt 0 ] || { fwd_err="no flow installed (ovs-ofctl status $rc: $(tail -n 1 "$out/install-$impl.log"))"; return 1; }
  [ "$n" -eq "$want" ] || log "$impl $c: $n of $want flows installed (ovs-ofctl status $rc)"
}

churn_point() { # impl round
  local impl=$1 r=$2 cpid line
  ip netns exec "$F" taskset -c "$cpu_gen" "$churn_bin" --connect "127.0.0.1:$of_port" --rate "$churn_rate" \
    --duration "$(awk -v w="$warmup" -v d="$duration" 'BEGIN { print w + d + 0.5 }')" \
    > "$state/churn.out" 2>> "$out/churn-$impl.log" &
  cpid=$!
  sleep 0.3
  point "$impl" churn 0 "$r" || true
  wait "$cpid" || { note "$impl" churn_client "$r" "ofchurn failed: $(tail -n 1 "$out/churn-$impl.log")"; return 0; }
  line=$(cat "$state/churn.out")
  echo "${line%\}},\"impl\":\"$impl\",\"case\":\"churn_client\",\"round\":$r,\"value\":0,\"unit\":\"\"}" >> "$res"
  log "  $line"
}

fwd_cases() { # impl round: every forwarding case on one running switch
  local impl=$1 r=$2 c
  for c in $cases; do
    [ "$c" = setup ] && continue
    [ "$c" = wild100k ] && [ "$r" -gt "$wild_rounds" ] && continue
    # the bridge takes no flows: only the traffic of one and exact1k, through it
    [ "$impl" = linux-bridge ] && [ "$c" != one ] && [ "$c" != exact1k ] && continue
    local fc=$c
    [ "$c" = churn ] && fc=exact1k
    # churn right after exact1k reuses its flows; otherwise (re)install
    if [ "$impl" != linux-bridge ] && ! { [ "$c" = churn ] && [ "$last_installed" = exact1k ]; }; then
      install "$impl" "$fc" "$r" || { note "$impl" "$c" "$r" "$fwd_err"; last_installed=; continue; }
      last_installed=$fc
    fi
    tg_conf=$state/$fc.cfg pktgen_args=$(cat "$state/$fc.gen")
    # not ready after 15 s: said, and measured all the same (a partial table forwards part)
    fwd_probe || note "$impl" "probe_$c" "$r" "fewer than 10 of 20 probe frames reached SINK within 15 s"
    if [ "$c" = churn ]; then churn_point "$impl" "$r"; else point "$impl" "$c" 0 "$r" || true; fi
    if [ "$c" = exact1k ] && [ "$impl" != linux-bridge ]; then flows_hit "$impl" "$r"; fi
    case "$c" in pipe3|l2l3|select) path_check "$impl" "$c" "$r" ;; esac
  done
}

# How many of the installed flows matched a frame (n_packets > 0): the generator's microflows
# reached the switch as distinct flows. OVS folds its datapath counters into the OpenFlow rules
# every 0.5 s or so, later on a loaded machine: polled up to 10 s until every installed flow
# has a count (the wait is recorded as poll_s).
flows_hit() { # impl round
  local i n=0 want t0
  want=$(ofdump | grep -c 'actions=' || true)
  t0=$(now_ns)
  for i in $(seq 100); do
    n=$(ofdump | grep -cE 'n_packets=[1-9]' || true)
    [ "$n" -ge "$want" ] && break
    sleep 0.1
  done
  printf '{"bench":"switch","impl":"%s","case":"flows_hit_exact1k","round":%d,"value":%d,"unit":"flows","flows_in_table":%d,"poll_s":%s}\n' \
    "$1" "$2" "$n" "$want" "$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')" >> "$res"
}

# Where a case's frames went, from the switch's own counters after the point (the probe's frames
# included): pipe3 and l2l3, per table the flows that took frames and the packets that drop flows took
# (the table-miss entries included: any is a frame that left the pipeline early); select, the
# group's and each bucket's packets. OVS folds its counters in late: read until two reads 0.5 s
# apart agree (10 s at most; the generator has stopped).
path_check() { # impl case round
  local impl=$1 c=$2 r=$3 i prev='' cur='' j
  for i in $(seq 20); do
    if [ "$c" = select ]; then
      cur=$(in_f timeout 10 ovs-ofctl -O OpenFlow13 dump-group-stats "$OF" 2>/dev/null || true)
    else
      cur=$(ofdump || true)
    fi
    cur=$(echo "$cur" | sed -E 's/(duration|idle_age|hard_age)=[0-9.]+s?, ?//g')
    [ -n "$cur" ] && [ "$cur" = "$prev" ] && break
    prev=$cur
    sleep 0.5
  done
  if [ "$c" = select ]; then
    local buckets total
    buckets=$(echo "$cur" | grep -o 'bucket[0-9]*:packet_count=[0-9]*' | sed 's/.*=//' \
      | paste -sd, -)
    total=$(echo "$cur" | grep -o 'ref_count=[0-9]*,packet_count=[0-9]*' | sed 's/.*=//' \
      | head -n 1)
    j=$(ofdump | grep 'actions=group:1' | grep -o 'n_packets=[0-9]*' | sed 's/.*=//' | head -n 1)
    printf '{"bench":"switch","impl":"%s","case":"check_select","round":%d,"value":%s,' \
      "$impl" "$r" "${total:-null}" >> "$res"
    printf '"unit":"packets","bucket_packets":[%s],"flow_packets":%s}\n' "$buckets" "${j:-null}" \
      >> "$res"
  else
    echo "$cur" | awk -v impl="$impl" -v r="$r" -v c="$c" '
      /actions=/ {
        t = 0; n = 0; p = 32768
        if (match($0, /table=[0-9]+/)) t = substr($0, RSTART + 6, RLENGTH - 6)
        if (match($0, /n_packets=[0-9]+/)) n = substr($0, RSTART + 10, RLENGTH - 10)
        if (match($0, /priority=[0-9]+/)) p = substr($0, RSTART + 9, RLENGTH - 9)
        if (n > 0) hit[t]++
        if ($0 ~ /actions=drop/) { dropped += n; if (p == 0) miss += n }
        if (t == 2 && n > 0 && p > maxp) { maxp = p; out = n }
        tables[t] = 1
      }
      END {
        printf "{\"bench\":\"switch\",\"impl\":\"%s\",\"case\":\"check_%s\",", impl, c
        printf "\"round\":%d,\"value\":%d,\"unit\":\"packets\",", r, dropped
        printf "\"table_miss_packets\":%d,\"flows_hit\":[%d,%d,%d],", miss, hit[0], hit[1], hit[2]
        printf "\"out_flow_priority\":%d,\"out_flow_packets\":%d}\n", maxp, out
      }' >> "$res"
  fi
  log "  $(tail -n 1 "$res")"
}

setup_case() { # impl round
  local impl=$1 r=$2 i line
  : > "$out/ctl-$impl.log"
  ctl_port=$((6000 + sw_n + 1))
  ip netns exec "$F" taskset -c "$cpu_gen" "$ctl_bin" --listen "127.0.0.1:$ctl_port" --cores "$cpu_gen" --idle adaptive \
    </dev/null >> "$out/ctl-$impl.log" 2>&1 &
  ctl_pid=$!
  sw_start "$impl" with-controller || { note "$impl" setup "$r" "$fwd_err"; return 0; }
  for i in $(seq 100); do # connected: the controller's table-miss flow is in
    ofdump | grep -q 'priority=0.*CONTROLLER' && break
    sleep 0.1
  done
  [ "$i" -lt 100 ] || { note "$impl" setup "$r" "the controller did not install its table-miss flow within 10 s"; return 0; }
  if line=$(taskset -c "$cpu_gen" "$setup_bin" --gen "$G:$gdev" --sink "$S:$sdev" --flows "$setup_flows" \
      --window "$setup_window" --timeout 60 --label "$impl" 2>> "$out/setup-$impl.log"); then
    local n
    n=$(ofdump | grep -c 'dl_dst=02:5e:00' || true)
    echo "${line%\}},\"round\":$r,\"flows_in_table\":$n}" >> "$res"
    log "  $line (flows in the table after: $n)"
  else
    note "$impl" setup "$r" "flowsetup failed: $(tail -n 1 "$out/setup-$impl.log")"
  fi
}

# The generator's own ceiling this round: no switch, an XDP drop on FWD's first veth counts
# what arrives (as bench/fwd's gen-only): what the generator could offer at all, 1 flow.
# IMPL gen-only (the run's generator) or gen-only-trafgen (trafgen, the labelled extra row).
gen_ceiling() { # impl round
  local impl=$1
  ceiling=1 tg_conf=$state/one.cfg pktgen_args=$(cat "$state/one.gen") fwd_pid='' fwd_err='' fwd_log=$out/$impl.log
  [ "$impl" = gen-only-trafgen ] && gen_kind=trafgen gen_limit=0.97
  if ip -n "$F" link set dev "$fa" xdpdrv obj "$xdp_obj" sec xdp 2>>"$fwd_log" && fwd_probe; then
    point "$impl" ceiling 0 "$2" || true
  else
    note "$impl" ceiling "$2" "could not measure the generator alone${fwd_err:+: $fwd_err}"
  fi
  ip -n "$F" link set dev "$fa" xdp off 2>/dev/null || true
  ceiling=0 gen_kind=$main_gen gen_limit=$main_limit
}

read -r -a impl_list <<< "$impls"
n=${#impl_list[@]}
last_installed=
log "GEN $G ($gdev, CPU $cpu_gen) -> FWD $F ($fa, $fb; CPU $cpu_fwd) -> SINK $S ($sdev, XDP drop)"
log "$rounds round(s); cases: $cases; ${warmup}s warm-up + ${duration}s per point"
for ((r = 1; r <= rounds; r++)); do
  log "[round $r/$rounds] $gen_kind alone (the generator's ceiling)"
  gen_ceiling gen-only "$r"
  if [ "$gen_kind" = pktgen ] && [ "$quick" = 0 ] && command -v trafgen >/dev/null; then
    log "[round $r/$rounds] trafgen alone (labelled extra row)"
    gen_ceiling gen-only-trafgen "$r"
  fi
  for ((j = 0; j < n; j++)); do
    impl=${impl_list[$(( (j + r - 1) % n ))]}
    if [[ " $cases " =~ \ (one|exact1k|churn|pipe3|l2l3|select|wild100k)\  ]]; then
      log "[round $r/$rounds] $impl"
      last_installed=
      if sw_start "$impl"; then fwd_cases "$impl" "$r"; else note "$impl" start "$r" "$fwd_err"; fi
      sw_stop "$impl"
    fi
  done
  if [[ " $cases " =~ \ setup\  ]]; then # flow setup: AF_PACKET-class ports, rotating order
    for impl in $( ((r % 2)) && echo "ringflow-packet ovs-system" || echo "ovs-system ringflow-packet"); do
      [[ " $impls " =~ \ $impl\  ]] || continue
      log "[round $r/$rounds] $impl: flow setup under ringflow-controller"
      setup_case "$impl" "$r"
      sw_stop "$impl"
    done
  fi
done
stat1=$(cpu_sample)
printf '{"bench":"switch","impl":"host","case":"run_cpu","value":0,"unit":"",%s,"loadavg":"%s"}\n' \
  "$(cpu_json "$stat0" "$stat1")" "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$res"
python3 "$here/report.py" "$out"
