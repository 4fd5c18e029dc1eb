#!/usr/bin/env bash
# bench/lib/bed.sh: the bench library's forwarding bed, sourced by bench/fwd/run.sh (`make
# bench-fwd`), bench/switch/run.sh (`make bench-switch`) and bench/observe/scrape_cost.sh (its
# trafgen frame). Defines functions only (and sources bench/lib/stat.sh, the counters and CPU
# samples that bench/echo shares too); nothing runs at source time.
#   bed_up             three namespaces in a line, GEN --veth-- FWD --veth-- SINK, named from
#                      the caller's PID (rffg/rfff/rffs + PID; devices fg, fa/fb, fs + PID),
#                      SINK's veth dropping every frame in XDP (but ethertype 0x88b5), one
#                      anchor process per namespace for its counters, teardown.sh on any exit
#                      (trap + a watchdog for SIGKILL). Sets tag G F S gdev fa fb sdev state
#                      apid_g apid_f apid_s gmac smac.
#   devpk now_ns cpu_sample cpu_json    counters and /proc/stat samples (bench/lib/stat.sh)
#   bed_pick_generator  ringflow-pktgen ($build/bench/tools) when built and the kernel runs its
#                      live frames (its --probe), else trafgen, saying why: sets
#                      pktgen_bin gen_kind gen_limit (0.90 / 0.97); needs the caller's die, log
#   bed_gro_on         GRO on FWD's first veth when the generator is ringflow-pktgen (live
#                      frames reach a veth only in NAPI mode)
#   bed_trafgen_frame FILE SMAC GMAC   trafgen's one 64-byte frame (IPv4/UDP 10.0.0.1:1024 ->
#                      10.0.0.2:2048 to SMAC from GMAC) written to FILE
#   fwd_probe          a few frames reach SINK within 15 s (else fwd_err says why)
#   point IMPL CASE RATE ROUND    one throughput point as a JSON line in $res
#   tg_start tg_stop   the generator on GEN (CPU cpu_gen): trafgen from $tg_conf (default
#                      $state/frame.cfg), or ringflow-pktgen ($pktgen_bin, 64 B to SINK's MAC)
#                      when the caller sets gen_kind=pktgen (trafgen by default), with the
#                      extra arguments in $pktgen_args (e.g. "--flows 1000 --flows-mode seq")
#   ovs_up TYPE / ovs_down   private ovsdb-server + ovs-vswitchd in FWD, a netdev bridge
#                      ovs$tag with fa, fb as OpenFlow ports 1, 2 (TYPE system or afxdp);
#                      no flows: the caller adds them. Sets ovs_ofa ovs_ofb; on failure fwd_err.
# The caller sets before bed_up: shim, xdp_obj, out, cpu_gen,
# cpu_fwd, quiet; and fwd_log (a log file) before ovs_up. Optional: gen_kind (trafgen or
# pktgen), pktgen_bin, gen_limit (the forwarded/offered share from which a point is marked
# generator-limited, default 0.97).
# shellcheck shell=bash disable=SC2034,SC2154 # variables are shared with the sourcing script

bed_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=bench/lib/stat.sh
source "$bed_lib/stat.sh"

bed_up() {
  tag=$$
  G=rffg$tag F=rfff$tag S=rffs$tag
  gdev=fg$tag fa=fa$tag fb=fb$tag sdev=fs$tag
  state=$(mktemp -d "/tmp/ringflow-fwd-$tag.XXXXXX")
  # The watchdog: a detached shell that waits for this script to end, however it ends, then runs
  # teardown.sh (idempotent: the exit trap normally ran it already). Bounded by the run's own end.
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec bash "$2" "$3" "$4"' \
    _ "$$" "$bed_lib/teardown.sh" "$tag" "$state" </dev/null >/dev/null 2>&1 &
  watchdog=$!
  cleanup() {
    trap - EXIT INT TERM HUP
    bash "$bed_lib/teardown.sh" "$tag" "$state"
    kill "$watchdog" 2>/dev/null || true
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM HUP

  for ns in "$G" "$F" "$S"; do
    ip netns add "$ns"
    ip netns exec "$ns" sh -c 'sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1' \
      || true # no router solicitations or MLD reports counted as forwarded frames
    ip -n "$ns" link set lo up
  done
  ip link add "$gdev" netns "$G" type veth peer name "$fa" netns "$F"
  ip link add "$fb" netns "$F" type veth peer name "$sdev" netns "$S"
  ip -n "$G" link set "$gdev" up
  ip -n "$F" link set "$fa" up
  ip -n "$F" link set "$fb" up
  ip -n "$S" link set "$sdev" up
  # The sink: native XDP drops every frame but the latency tool's (ethertype 0x88b5).
  ip -n "$S" link set dev "$sdev" xdpdrv obj "$xdp_obj" sec xdp \
    || die "could not attach $xdp_obj to $sdev in $S"
  # One anchor process per namespace: its /proc/PID/net/dev is that namespace's counters, read
  # without starting a process per sample. Bounded (the run's own limit), killed by teardown.
  anchor() { ip netns exec "$1" sleep 7200 </dev/null >/dev/null 2>&1 & echo $!; }
  apid_g=$(anchor "$G") apid_f=$(anchor "$F") apid_s=$(anchor "$S")
  mac_of() { ip -n "$1" -br link show dev "$2" | awk '{print $3}'; }
  gmac=$(mac_of "$G" "$gdev") smac=$(mac_of "$S" "$sdev")
  ovs_dir=$state/ovs
}

# ---- the generator: which one, and what FWD's first veth needs for it ----
bed_pick_generator() {
  pktgen_bin=$build/bench/tools/ringflow-pktgen
  local why=
  if [ ! -x "$pktgen_bin" ]; then
    why="$pktgen_bin not built (needs libbpf: RF_WITH_XDP)"
  elif ! why=$("$pktgen_bin" --probe 2>&1 >/dev/null); then
    why="ringflow-pktgen cannot send here: ${why:-its --probe failed}"
  fi
  if [ -z "$why" ]; then
    gen_kind=pktgen gen_limit=0.90
    command -v ethtool >/dev/null || die "ethtool not found (GRO on FWD's veth for live frames): install it (scripts/deps.sh)"
  else
    gen_kind=trafgen gen_limit=0.97
    log "$why: trafgen is the generator"
    command -v trafgen >/dev/null || die "trafgen not found: install netsniff-ng (scripts/deps.sh)"
  fi
}
bed_gro_on() {
  if [ "$gen_kind" = pktgen ]; then
    # Live frames reach FWD only while its first veth is in NAPI mode: GRO on, for every row.
    ip netns exec "$F" ethtool -K "$fa" gro on >/dev/null || die "ethtool -K $fa gro on failed in $F"
  fi
}

# trafgen's packet: Ethernet to SMAC from GMAC, IPv4/UDP 10.0.0.1:1024 -> 10.0.0.2:2048, 60 bytes.
bed_trafgen_frame() { # file smac gmac
  hexmac() { echo "$1" | sed 's/^/0x/; s/:/, 0x/g'; }
  cat > "$1" <<EOF
{
  $(hexmac "$2"), $(hexmac "$3"), c16(0x0800),
  0x45, 0x00, c16(46), c16(0), c16(0x4000), 64, 17, csumip(14, 33),
  10, 0, 0, 1, 10, 0, 0, 2,
  c16(1024), c16(2048), c16(26), c16(0),
  fill(0x00, 18)
}
EOF
}

# ---- the generator: started in its own session, stopped by its process group ----
# trafgen (its fork); or ringflow-pktgen (BPF_PROG_RUN live frames: FWD's first veth must be in
# NAPI mode, which the caller arranges), bounded by its own --duration, SIGINT ends it early.
tg_pid=
gen_log() { if [ "${gen_kind:-trafgen}" = pktgen ]; then echo "$out/pktgen.log"; else echo "$out/trafgen.log"; fi; }
tg_start() { # rate-pps (0: as fast as it can) [count]
  if [ "${gen_kind:-trafgen}" = pktgen ]; then
    local lim=(--duration 600)
    [ -n "${2:-}" ] && lim=(--count "$2" --duration 10)
    local extra=()
    read -r -a extra <<< "${pktgen_args:-}"
    ip netns exec "$G" setsid "$pktgen_bin" --dev "$gdev" --dst-mac "$smac" --cpu "$cpu_gen" \
      --rate "$1" "${lim[@]}" "${extra[@]}" </dev/null >> "$out/pktgen.log" 2>&1 &
    tg_pid=$!
    return 0
  fi
  local rate=() num=()
  [ "$1" -gt 0 ] && rate=(--rate "${1}pps")
  [ -n "${2:-}" ] && num=(--num "$2")
  ip netns exec "$G" env LD_PRELOAD="$shim" setsid taskset -c "$cpu_gen" trafgen --no-sock-mem \
    --cpus 1 --no-cpu-stats --dev "$gdev" --conf "${tg_conf:-$state/frame.cfg}" "${rate[@]}" "${num[@]}" \
    </dev/null >> "$out/trafgen.log" 2>&1 &
  tg_pid=$!
}
tg_stop() {
  [ -n "$tg_pid" ] || return 0
  kill -INT -- "-$tg_pid" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$tg_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$tg_pid" 2>/dev/null || true
  wait "$tg_pid" 2>/dev/null || true
  tg_pid=
}

ovs_lock_held=0
in_f() { ip netns exec "$F" "$@"; }
vsctl() { ovs-vsctl --db="unix:$ovs_dir/db.sock" --timeout=10 "$@"; }

ovs_up() { # system|afxdp
  local type=$1
  command -v ovs-vswitchd >/dev/null || { fwd_err="ovs-vswitchd not installed (openvswitch-switch)"; return 1; }
  # As tests/openflow/ovs_bed.sh: private daemons in a private run directory, one userspace
  # datapath at a time on the host (its lock: every netdev datapath opens a tap "ovs-netdev"
  # and the OVS tests refuse a foreign holder), 60 s of waiting at most.
  exec 8>/tmp/ringflow-ovs-bed.lock
  flock -w 60 8 || { fwd_err="another OVS bed held /tmp/ringflow-ovs-bed.lock for 60 s"; exec 8>&-; return 1; }
  ovs_lock_held=1
  rm -rf "$ovs_dir"; mkdir -p "$ovs_dir"
  export OVS_RUNDIR=$ovs_dir OVS_DBDIR=$ovs_dir OVS_LOGDIR=$ovs_dir OVS_SYSCONFDIR=$ovs_dir
  ovsdb-tool create "$ovs_dir/conf.db" /usr/share/openvswitch/vswitch.ovsschema >>"$fwd_log" 2>&1 &&
  in_f taskset -c "$cpu_fwd" ovsdb-server "$ovs_dir/conf.db" --remote="punix:$ovs_dir/db.sock" \
    --pidfile="$ovs_dir/ovsdb-server.pid" --log-file="$ovs_dir/ovsdb-server.log" \
    --unixctl="$ovs_dir/ovsdb-server.ctl" --detach --no-chdir -vconsole:off >>"$fwd_log" 2>&1 8>&- &&
  vsctl --no-wait init >/dev/null &&
  in_f taskset -c "$cpu_fwd" ovs-vswitchd "unix:$ovs_dir/db.sock" --pidfile="$ovs_dir/ovs-vswitchd.pid" \
    --log-file="$ovs_dir/ovs-vswitchd.log" --detach --no-chdir -vconsole:off >>"$fwd_log" 2>&1 8>&- \
    || { fwd_err="OVS daemons did not start: $(tail -n 1 "$fwd_log")"; return 1; }
  local ptype=()
  [ "$type" = afxdp ] && ptype=(-- set interface "$fa" type=afxdp options:xdp-mode=native
    -- set interface "$fb" type=afxdp options:xdp-mode=native)
  vsctl set Open_vSwitch . other_config:pmd-cpu-mask=$(printf '0x%x' $((1 << cpu_fwd))) \
    -- add-br "ovs$tag" -- set bridge "ovs$tag" datapath_type=netdev fail_mode=secure \
    -- add-port "ovs$tag" "$fa" -- set interface "$fa" ofport_request=1 \
    -- add-port "ovs$tag" "$fb" -- set interface "$fb" ofport_request=2 "${ptype[@]}" >>"$fwd_log" 2>&1 \
    || { fwd_err="ovs-vsctl failed: $(tail -n 1 "$fwd_log")"; return 1; }
  local i
  for i in $(seq 50); do
    ovs_ofa=$(vsctl get interface "$fa" ofport 2>/dev/null || echo -1)
    ovs_ofb=$(vsctl get interface "$fb" ofport 2>/dev/null || echo -1)
    [ "${ovs_ofa:--1}" -gt 0 ] 2>/dev/null && [ "${ovs_ofb:--1}" -gt 0 ] 2>/dev/null && break
    sleep 0.1
  done
  [ "${ovs_ofa:--1}" -gt 0 ] 2>/dev/null && [ "${ovs_ofb:--1}" -gt 0 ] 2>/dev/null \
    || { fwd_err="OVS gave the ports no OpenFlow number ($type ports; see $ovs_dir/ovs-vswitchd.log): $(vsctl get interface "$fa" error 2>/dev/null)"; return 1; }
}

ovs_down() {
  local pf pid i
  for pf in "$ovs_dir/ovs-vswitchd.pid" "$ovs_dir/ovsdb-server.pid"; do
    [ -r "$pf" ] || continue
    pid=$(cat "$pf")
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || continue
    for i in $(seq 51); do
      case "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" in ""|Z) break ;; esac
      [ "$i" -le 50 ] && sleep 0.05 || kill -9 "$pid" 2>/dev/null
    done
  done
  cp "$ovs_dir/ovs-vswitchd.log" "$out/ovs-vswitchd-last.log" 2>/dev/null || true
  # the datapath's tap and the bridge's internal port outlive ovs-vswitchd
  ip -n "$F" link del "ovs$tag" 2>/dev/null || true
  ip -n "$F" link del ovs-netdev 2>/dev/null || true
  # OVS took the ports' addresses of nothing, but an afxdp port leaves its program: detach.
  ip -n "$F" link set dev "$fa" xdp off 2>/dev/null || true
  ip -n "$F" link set dev "$fb" xdp off 2>/dev/null || true
  rm -rf "$ovs_dir"
  unset OVS_RUNDIR OVS_DBDIR OVS_LOGDIR OVS_SYSCONFDIR
  if [ "$ovs_lock_held" = 1 ]; then exec 8>&-; ovs_lock_held=0; fi
}

# ---- the Linux bridge between FWD's two veths (bench-fwd's and bench-switch's linux-bridge) ----
# It runs in the softirq of the CPU that receives: where that is, is the placement's business.
bridge_up() {
  ip -n "$F" link add "br$tag" type bridge 2>>"$fwd_log" &&
    ip -n "$F" link set "$fa" master "br$tag" && ip -n "$F" link set "$fb" master "br$tag" &&
    ip -n "$F" link set "br$tag" up 2>>"$fwd_log" \
    || { fwd_err="bridge setup failed: $(tail -n 1 "$fwd_log")"; bridge_down; return 1; }
}

bridge_down() { ip -n "$F" link del "br$tag" 2>/dev/null || true; }

# ---- one throughput point: the generator at a rate (0: flat out) through the running forwarder ----
# Appends a JSON line to $res (bench ${bed_bench:-fwd}); the caller defines sink_rx (frames
# that reached the far end) and sets warmup, duration, and optionally placement (P1/P2).
point() { # impl case rate round
  local impl=$1 case=$2 rate=$3 round=$4
  local s0 s1 g0 g1 t0 t1 c0 c1
  tg_start "$rate"
  sleep "$warmup"
  kill -0 "$tg_pid" 2>/dev/null || { log "$impl: the generator stopped: $(tail -n 1 "$(gen_log)")"; tg_pid=; return 1; }
  c0=$(cpu_sample); t0=$(now_ns); s0=$(sink_rx); g0=$(devpk "$apid_g" "$gdev" | cut -d' ' -f2)
  sleep "$duration"
  t1=$(now_ns); s1=$(sink_rx); g1=$(devpk "$apid_g" "$gdev" | cut -d' ' -f2); c1=$(cpu_sample)
  local alive=1
  kill -0 "$tg_pid" 2>/dev/null || alive=0
  tg_stop
  [ "$alive" = 1 ] || { log "$impl: the generator stopped during the point: $(tail -n 1 "$(gen_log)")"; return 1; }
  awk -v bench="${bed_bench:-fwd}" -v impl="$impl" -v c="$case" -v r="$rate" -v round="$round" -v dt=$((t1 - t0)) \
      -v fw=$((s1 - s0)) -v off=$((g1 - g0)) -v cpu="$(cpu_json "$c0" "$c1")" -v lim="${gen_limit:-0.97}" \
      -v gen="${gen_kind:-trafgen}" -v pl="${placement:-}" 'BEGIN {
    s = dt / 1e9; f = fw / s / 1e6; o = off / s / 1e6
    printf "{\"bench\":\"%s\",\"impl\":\"%s\",\"case\":\"%s\",\"round\":%d,\"value\":%.4f,\"unit\":\"Mpps\",", bench, impl, c, round, f
    printf "\"offered_mpps\":%.4f,\"target_pps\":%d,\"forwarded\":%d,\"sent\":%d,\"seconds\":%.3f,", o, r, fw, off, s
    if (pl != "") printf "\"placement\":\"%s\",", pl
    printf "\"generator\":\"%s\",\"gen_limited\":%s,%s}\n", gen, (off > 0 && fw >= lim * off) ? "true" : "false", cpu }' >> "$res"
  tail -n 1 "$res" | sed 's/^/  /' >&2
}

# Forwarding works: a few frames from GEN reach SINK (or FWD's first veth for gen-only). A
# frame cannot reach SINK any other way: IPv6 is off and nothing else sends there. Uses the
# caller's sink_rx, fwd_pid (0 or the forwarder's PID) and fwd_log; the reason in fwd_err.
fwd_probe() {
  local i a b
  for i in $(seq 30); do
    if [ -n "$fwd_pid" ] && ! kill -0 "$fwd_pid" 2>/dev/null; then
      fwd_err="it exited: $( (grep -iE 'cause|error|fail|cannot|usage' "$fwd_log" || cat "$fwd_log") | tail -n 1)"
      return 1
    fi
    a=$(sink_rx)
    tg_start 0 20; wait "$tg_pid" 2>/dev/null || true; tg_pid=
    sleep 0.2
    b=$(sink_rx)
    [ $((b - a)) -ge 10 ] && return 0
    sleep 0.3
  done
  # ringflow-pktgen says why a device took no frame (e.g. a veth peer not in NAPI mode)
  [ "${gen_kind:-trafgen}" = pktgen ] && fwd_err="last generator line: $(tail -n 1 "$out/pktgen.log")"
  return 1
}
