#!/usr/bin/env bash
# bench/echo/run.sh: the echo benchmark of seed 002 over a veth pair between two network
# namespaces (root) or over loopback (otherwise): ringflow-echo in one namespace, the open-loop
# ringflow-loadgen in the other, for each backend, plus sockperf (its own server and
# `under-load --reply-every 1 --full-rtt` client) at the same rates as the external yardstick, in
# two configurations: epoll (its default: both block in epoll) and spin (`-F recvfrom
# --nonblocked`, its busy-poll mode); report.sh takes the better one as the yardstick and shows
# the other as a labelled extra. One closed-loop `sockperf ping-pong` point closes the run.
#
# Placement (2 CPUs): reflector on CPU 1, generator on CPU 0. The generators always spin (an
# open-loop schedule needs it; sockperf's client paces by spinning too). The reflectors follow
# --idle: adaptive (default; ringflow-echo blocks after idle rounds) or busy (it spins); sockperf
# runs both of its configurations whatever --idle says. On a shared, loaded machine a spinning
# reflector loses its CPU to other work for whole timeslices, so adaptive is the default here.
# Points are interleaved: for each rate, every backend and sockperf run one after another
# (the order rotates per rate), each with a fresh reflector, so host noise hits all alike.
# Every point records /proc/stat steal and per-CPU busy deltas.
#
# Output in --out DIR (default BUILD/bench-echo): results.jsonl (one JSON object per point,
# loadgen's keys; sockperf's points have backend "sockperf:under-load:epoll|spin" and
# "sockperf:ping-pong:CFG"), table.txt, rtt.svg (report.sh: RTT and received rate vs offered
# rate, one colour per backend, saturated points marked), and the raw logs.
#
#   bench/echo/run.sh [--build DIR] [--rates 20k,100k,...] [--warmup S] [--duration S]
#                     [--backends "udp tcp uring:udp uring:tcp uring:udp,taskrun=signal"] [--no-sockperf]
#                     [--idle busy|adaptive] [--loopback] [--out DIR] [--quiet]
set -euo pipefail

build=build
rates=20k,100k,200k,400k,800k,1.6M
warmup=1
duration=5
backends="udp tcp uring:udp uring:tcp"
backends="$backends xdp:skb xdp:native dpdk:af_packet dpdk:af_xdp" # bypass: the raw drivers
sockperf=1
idle=adaptive
loopback=0
out=
quiet=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --backends) backends=$2; shift 2 ;;
    --no-sockperf) sockperf=0; shift ;;
    --idle) idle=$2; shift 2 ;;
    --loopback) loopback=1; shift ;;
    --out) out=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$build/bench-echo}
echo_bin=$build/apps/echo/ringflow-echo
lg_bin=$build/apps/echo/ringflow-loadgen
for b in $([ -n "$backends" ] && echo "$echo_bin $lg_bin"); do
  [ -x "$b" ] || { echo "run.sh: $b not built: run make build (or give --build DIR)" >&2; exit 1; }
done
if [ "$sockperf" = 1 ] && ! command -v sockperf >/dev/null; then
  echo "run.sh: sockperf not installed (scripts/deps.sh installs it); continuing without it" >&2
  sockperf=0
fi
mkdir -p "$out"
: > "$out/results.jsonl"
ncpu=$(nproc)
cpu_gen=0
cpu_refl=$(( ncpu > 1 ? 1 : 0 ))

# ---- test bed (bench/echo/bed.sh): veth between two namespaces, or loopback ----
. "$(dirname "$0")/bed.sh"
trap bed_down EXIT
trap 'exit 130' INT TERM
bed_up
log() { [ "$quiet" = 1 ] || echo "bench-echo: $*" >&2; }
log "$where; reflector on CPU $cpu_refl, generator on CPU $cpu_gen, idle $idle; rates $rates; ${warmup}s warm-up + ${duration}s per point"

# ---- config strings per backend: server_spec, client_spec, wait_raw_open (bench/echo/bed.sh) ----


# UDP datagrams the kernel dropped because a socket's receive buffer was full (/proc/net/snmp
# of the namespace): says on which side a point lost its messages.
snmp_rcvbuf() { # ns-prefix...
  "$@" awk '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "RcvbufErrors") c = i; h = 1 }
                      else { print $c; exit } }' /proc/net/snmp
}
drops_json() { # s0 s1 c0 c1
  if [ "$loopback" = 0 ]; then
    printf '"udp_rcvbuf_drops_reflector":%d,"udp_rcvbuf_drops_generator":%d' $(( $2 - $1 )) $(( $4 - $3 ))
  else
    printf '"udp_rcvbuf_drops_host":%d' $(( $2 - $1 ))
  fi
}

# Where the reflector's side lost packets during a point, from ringflow-netstat (bench/tools,
# docs/diagnosing-drops.md): it samples the reflector's namespace every 0.25 s while the point
# runs and is stopped (by its PID) when the point ends; every drop or error counter that moved is
# added to the point's JSON line as a count ("reflector_drops"), so a saturated point says where
# its messages went.
netstat_bin=$build/bench/tools/ringflow-netstat
netstat_start() { # log-file: starts the sampler, sets netstat_pid ('' if unavailable)
  netstat_pid=
  [ "$loopback" = 0 ] && [ -x "$netstat_bin" ] || return 0
  local n
  n=$(awk -v w="$warmup" -v d="$duration" 'BEGIN { printf "%d", (w + d + 10) * 4 }') # bound
  "$netstat_bin" --netns "$ns_s" --dev "$sdev" --interval 0.25 --count "$n" --json > "$1" 2>/dev/null &
  netstat_pid=$!
  pids+=("$netstat_pid")
}
netstat_json() { # log-file: stops the sampler, prints ',"reflector_drops":{...}' or nothing
  [ -n "$netstat_pid" ] || return 0
  kill -TERM "$netstat_pid" 2>/dev/null || true
  wait "$netstat_pid" 2>/dev/null || true
  awk '/"case":"[^"]*(drop|squeeze|err|fifo)[^"]*"/ {
      c = $0; sub(/.*"case":"/, "", c); sub(/".*/, "", c)
      v = $0; sub(/.*"value":/, "", v); sub(/,.*/, "", v)
      n[c] += v * 0.25 }
    END { out = ""; for (c in n) if (n[c] >= 0.5) out = out (out == "" ? "" : ",") sprintf("\"%s\":%d", c, n[c] + 0.5)
      printf ",\"reflector_drops\":{%s}", out }' "$1"
}

port_base=$(( 20000 + (tag % 2000) * 10 ))
point=0

run_ours() { # backend rate
  local b=$1 rate=$2 port=$(( port_base + point % 10 )) proto=u
  case "$b" in *tcp*) proto=t ;; esac
  local elog="$out/echo-${b//:/_}-$rate.log"
  # bypass: raw drivers need the veth bed; the kernel must not also own the address (it
  # would answer the port with ICMP unreachable: net_af_packet is a tap, not a redirect).
  local raw=0
  case "$b" in xdp:*|dpdk:*) raw=1 ;; esac
  if [ "$raw" = 1 ] && [ "$loopback" = 1 ]; then log "$b: needs the veth bed (root): skipped"; return 0; fi
  [ "$raw" = 1 ] && ip -n "$ns_s" addr del "$saddr/24" dev "$sdev" 2>/dev/null
  "${in_s[@]}" "$echo_bin" --backend "$(server_spec "$b" "$port")" --cores "$cpu_refl" --idle "$idle" \
    > "$elog" 2>&1 &
  local epid=$!
  pids+=("$epid")
  if { [ "$raw" = 0 ] && ! wait_listen "$proto" "$port" "$epid"; } ||
     { [ "$raw" = 1 ] && ! wait_raw_open "$elog" "$epid"; }; then
    log "$b: reflector did not start: $(tail -n 1 "$elog")"
    kill "$epid" 2>/dev/null || true; wait "$epid" 2>/dev/null || true
    [ "$raw" = 1 ] && ip -n "$ns_s" addr add "$saddr/24" dev "$sdev" 2>/dev/null
    return 0
  fi
  local s0 c0 line nlog="$out/netstat-${b//[:,=]/_}-$rate.jsonl"
  s0=$(snmp_rcvbuf "${in_s[@]}"); c0=$(snmp_rcvbuf "${in_c[@]}")
  netstat_start "$nlog"
  if line=$("${in_c[@]}" "$lg_bin" --backend "$(client_spec "$b" "$port")" --rates "$rate" \
      --label "$b" --warmup "$warmup" --duration "$duration" --json --cores "$cpu_gen" \
      2>> "$out/loadgen.log") && [ -n "$line" ]; then
    echo "${line%\}},$(drops_json "$s0" "$(snmp_rcvbuf "${in_s[@]}")" "$c0" "$(snmp_rcvbuf "${in_c[@]}")")$(netstat_json "$nlog")}" \
      >> "$out/results.jsonl"
  else
    log "$b at $rate: loadgen failed: $(tail -n 1 "$out/loadgen.log")"
  fi
  kill -TERM "$epid" 2>/dev/null || true
  wait "$epid" 2>/dev/null || true
  [ "$raw" = 1 ] && ip -n "$ns_s" addr add "$saddr/24" dev "$sdev" 2>/dev/null
  # bypass: a reflector killed before its close leaves XDP attached: detach it.
  [ "$raw" = 1 ] && ip -n "$ns_s" link set dev "$sdev" xdp off 2>/dev/null
  return 0
}

# sockperf in one of its configurations (the yardstick is the best of them, report.sh):
#   epoll  its default: server and client block in epoll (the client paces --mps by spinning)
#   spin   both spin: -F recvfrom --nonblocked (needs a feed file -f), sockperf's busy-poll mode
# ping-pong (closed loop, one message in flight, at whatever rate that gives) runs once per run
# with the client spinning, the server like ringflow-echo's --idle: epoll (adaptive) or spin (busy).
sockperf_args() { # cfg port -> sets sp_srv sp_cli
  local spin=(-f "$out/sockperf-feed-$2" -F r --nonblocked)
  echo "U:$saddr:$2" > "$out/sockperf-feed-$2"
  sp_srv=(-i "$saddr" -p "$2") sp_cli=(-i "$saddr" -p "$2")
  case "$1" in
    spin) sp_srv=("${spin[@]}") sp_cli=("${spin[@]}") ;;
    spin-client) sp_cli=("${spin[@]}") ;;
  esac
}

run_sockperf() { # rate cfg
  local rate=$1 cfg=$2 port=$(( port_base + point % 10 ))
  sockperf_args "$cfg" "$port"
  local mps
  mps=$(awk -v r="$rate" 'BEGIN { m = 1; if (r ~ /[kK]$/) m = 1e3; if (r ~ /M$/) m = 1e6;
                                 sub(/[kKM]$/, "", r); printf "%d", r * m }')
  "${in_s[@]}" taskset -c "$cpu_refl" sockperf server "${sp_srv[@]}" \
    > "$out/sockperf-server.log" 2>&1 &
  local spid=$!
  pids+=("$spid")
  if ! wait_listen u "$port" "$spid"; then
    log "sockperf server did not start: $(tail -n 1 "$out/sockperf-server.log")"
    return 0
  fi
  local a b t slog="$out/sockperf-$cfg-$rate.log"
  t=$(awk -v w="$warmup" -v d="$duration" 'BEGIN { printf "%d", w + d + 0.999 }')
  local s0 c0 nlog="$out/netstat-sockperf-$rate.jsonl"
  s0=$(snmp_rcvbuf "${in_s[@]}"); c0=$(snmp_rcvbuf "${in_c[@]}")
  netstat_start "$nlog"
  a=$(cpu_sample)
  local mode=(under-load --mps "$mps" --reply-every 1) name=sockperf:under-load:$cfg
  [ "$rate" = pp ] && mode=(ping-pong) name=sockperf:ping-pong:$cfg
  "${in_c[@]}" taskset -c "$cpu_gen" sockperf "${mode[@]}" "${sp_cli[@]}" \
    --full-rtt -t "$t" -m 100 2>&1 \
    | sed 's/\x1b\[[0-9;]*m//g' > "$slog" || true
  b=$(cpu_sample)
  local drops
  drops=$(drops_json "$s0" "$(snmp_rcvbuf "${in_s[@]}")" "$c0" "$(snmp_rcvbuf "${in_c[@]}")")$(netstat_json "$nlog")
  kill -TERM "$spid" 2>/dev/null || true
  wait "$spid" 2>/dev/null || true
  # sockperf's own figures: the [Valid Duration] counts, its percentiles (us, full RTT).
  # ping-pong (mps 0): a closed loop, so "offered" is the rate it reached.
  awk -v mps="$mps" -v name="$name" -v cpu="$(cpu_json "$a" "$b" load),$drops" '
    /\[Valid Duration\]/ { for (i = 1; i <= NF; i++) { split($i, kv, "=");
        if (kv[1] == "RunTime") rt = kv[2] + 0; if (kv[1] == "SentMessages") s = kv[2] + 0;
        if (kv[1] == "ReceivedMessages") r = kv[2] + 0 } }
    /dropped messages/ { for (i = 1; i <= NF; i++) if ($i == "=") { d = $(i+1) + 0; break } }
    /<MAX> observation/ { mx = $NF } /<MIN> observation/ { mn = $NF }
    /percentile 50.000/ { p50 = $NF } /percentile 90.000/ { p90 = $NF }
    /percentile 99.000/ { p99 = $NF } /percentile 99.900/ { p999 = $NF }
    END { if (rt <= 0) exit 1
      if (mps == 0) mps = int(r / rt)
      off = mps * rt; loss = s > 0 ? (s - r) / s : 0; if (loss < 0) loss = 0
      sat = (r * 100 < off * 99 || (s - r) * 1000 > s) ? "true" : "false"
      printf "{\"backend\":\"%s\",\"offered\":%d,\"achieved\":%.1f,\"received\":%.1f,", name, mps, s / rt, r / rt
      printf "\"loss\":%.6f,\"sent_msgs\":%d,\"received_msgs\":%d,\"dropped\":%d,", loss, s, r, d
      printf "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"max_us\":%.2f,", mn, p50, p90, p99, p999, mx
      printf "\"saturated\":%s,\"seconds\":%.3f,%s}\n", sat, rt, cpu }' "$slog" >> "$out/results.jsonl" \
    || log "sockperf $cfg at $rate: no result (see $slog)"
}

IFS=, read -r -a rate_list <<< "$rates"
read -r -a impls <<< "$backends"
[ "$sockperf" = 1 ] && impls+=(sockperf:epoll sockperf:spin)
ri=0
for rate in "${rate_list[@]}"; do
  n=${#impls[@]}
  for ((j = 0; j < n; j++)); do
    impl=${impls[$(( (j + ri) % n ))]}
    point=$((point + 1))
    log "[$rate] $impl"
    case "$impl" in
      sockperf:*) run_sockperf "$rate" "${impl#sockperf:}" ;;
      *) run_ours "$impl" "$rate" ;;
    esac
  done
  ri=$((ri + 1))
done
if [ "$sockperf" = 1 ]; then # one closed-loop point: sockperf ping-pong, client spinning
  point=$((point + 1))
  pp_cfg=spin-client
  [ "$idle" = busy ] && pp_cfg=spin
  log "[closed loop] sockperf ping-pong ($pp_cfg)"
  run_sockperf pp "$pp_cfg"
fi

# ---- table, data files, plot ----
bash "$(dirname "$0")/report.sh" "$out" "$where, reflector CPU $cpu_refl, generator CPU $cpu_gen, idle $idle"
