#!/usr/bin/env bash
# bench/echo/modes.sh: the netperf-style modes of ringflow-loadgen beside their peers, in one run
# on the echo bed (bench/echo/bed.sh: a veth pair between two namespaces as root, else loopback):
#   stream  TCP_STREAM / UDP_STREAM: ringflow-loadgen --mode stream into ringflow-echo --sink, for
#           tcp, uring:tcp, udp, uring:udp and (veth bed) the bypass servers of --raw, whose
#           client is UDP sockets; peer iperf3 (TCP, and UDP with -b 0), same message size
#           (-l). Gbit/s and msg/s of what arrived, UDP loss, CPU of client and server processes.
#   rr      TCP_RR / UDP_RR: --mode rr against ringflow-echo, 1 connection x 1 outstanding (as
#           netperf), plus tcp with 4 x 8, plus the --raw bypass servers; peer sockperf ping-pong against its own server, in two
#           configurations: epoll (its default, blocking) and spin (-F recvfrom --nonblocked on both
#           sides) and spin-client (client spins, server sleeps in epoll: like ringflow-loadgen,
#           which spins, against ringflow-echo --idle adaptive); the best is the yardstick, the
#           others labelled extras.
#   crr     TCP_CRR: --mode crr (client: the tcp driver) against ringflow-echo on tcp and on
#           uring:tcp; peer: ringflow-crr-floor, a blocking C client and server (Debian 12 main has
#           no netperf or other connection-rate tool): the floor.
# Placement: servers on CPU 1, clients on CPU 0. ringflow-echo uses --idle IDLE (default
# adaptive); extra rr points run udp with a busy server ("udp,busy") and with the client blocking
# between replies ("udp,block": --wait block, the shape of sockperf's default epoll client). Rounds interleave every
# item (order rotated each round) so host noise hits all alike; the summary gives median, best and
# spread over rounds, and the per-round ratios ours/peer.
# Output in --out DIR (default BUILD/bench-modes): results.jsonl (one JSON object per point with
# "bench", "impl", "round"), summary.txt (also printed), logs.
#
#   bench/echo/modes.sh [--build DIR] [--warmup S] [--duration S] [--repeats N]
#                       [--modes "stream rr crr"] [--stream-size 1400] [--rr-size 100]
#                       [--idle adaptive|busy] [--raw "xdp:skb xdp:native dpdk:af_packet dpdk:af_xdp"]
#                       [--loopback] [--out DIR] [--quiet]
set -euo pipefail

build=build
warmup=0.5
duration=2
repeats=3
modes="stream rr crr"
stream_size=1400
rr_size=100
idle=adaptive
raw="xdp:skb xdp:native dpdk:af_packet dpdk:af_xdp" # bypass backends (server side; veth bed only)
loopback=0
out=
quiet=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --stream-size) stream_size=$2; shift 2 ;;
    --rr-size) rr_size=$2; shift 2 ;;
    --idle) idle=$2; shift 2 ;;
    --raw) raw=$2; shift 2 ;;
    --loopback) loopback=1; shift ;;
    --out) out=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n "2,30p" "$0"; exit 0 ;;
    *) echo "modes.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$repeats" in ''|*[!0-9]*) echo "modes.sh: --repeats: give 1..20" >&2; exit 2 ;; esac
[ "$repeats" -ge 1 ] && [ "$repeats" -le 20 ] || { echo "modes.sh: --repeats: give 1..20" >&2; exit 2; }
out=${out:-$build/bench-modes}
echo_bin=$build/apps/echo/ringflow-echo
lg_bin=$build/apps/echo/ringflow-loadgen
floor_bin=$build/bench/echo/ringflow-crr-floor
for b in "$echo_bin" "$lg_bin" "$floor_bin"; do
  [ -x "$b" ] || { echo "modes.sh: $b not built: run make build (or give --build DIR)" >&2; exit 1; }
done
have() { command -v "$1" >/dev/null; }
have iperf3 || echo "modes.sh: iperf3 not installed (scripts/deps.sh installs it): no stream peer" >&2
have sockperf || echo "modes.sh: sockperf not installed (scripts/deps.sh): no rr peer" >&2
mkdir -p "$out"
: > "$out/results.jsonl"
cpu_cli=0
cpu_srv=$(( $(nproc) > 1 ? 1 : 0 ))

. "$(dirname "$0")/bed.sh"
trap bed_down EXIT
trap 'exit 130' INT TERM
bed_up
log() { [ "$quiet" = 1 ] || echo "bench-modes: $*" >&2; }
log "$where; servers on CPU $cpu_srv, clients on CPU $cpu_cli, ringflow-echo idle $idle; ${warmup}s warm-up + ${duration}s per point, $repeats rounds"
if [ "$loopback" = 0 ]; then
  # crr opens thousands of connections: our client namespace only, so TIME_WAIT does not run
  # the port range dry within a run.
  "${in_c[@]}" sysctl -qw net.ipv4.tcp_tw_reuse=1 net.ipv4.ip_local_port_range="10000 65000" || true
fi

port_base=$(( 20000 + (tag % 2000) * 10 + 5 ))
seq_no=0
next_port() { seq_no=$((seq_no + 1)); port=$(( port_base + seq_no % 5 )); }
hz=$(getconf CLK_TCK)
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
now_s() { date +%s.%N; }
# Appends a JSON line with extra fields (",k:v..." without braces) to results.jsonl.
emit() { [ -n "$1" ] && echo "${1%\}},$2}" >> "$out/results.jsonl"; }

# ringflow-echo in the server namespace on CPU cpu_srv; sets epid (empty on failure).
start_echo() { # proto(u|t|raw) spec idle extra...
  local proto=$1 spec=$2 eidle=$3; shift 3
  "${in_s[@]}" "$echo_bin" --backend "$spec" --cores "$cpu_srv" --idle "$eidle" "$@" \
    > "$out/echo.log" 2>&1 &
  epid=$!
  pids+=("$epid")
  if { [ "$proto" = raw ] && ! wait_raw_open "$out/echo.log" "$epid"; } ||
     { [ "$proto" != raw ] && ! wait_listen "$proto" "$port" "$epid"; }; then
    log "ringflow-echo $spec did not start: $(tail -n 1 "$out/echo.log")"
    kill "$epid" 2>/dev/null || true; wait "$epid" 2>/dev/null || true
    epid=
  fi
}
stop_pid() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# One ringflow point: server = ringflow-echo (sink for stream), client = ringflow-loadgen.
run_ours() { # round mode backend[,busy|,block] [loadgen args...]
  local r=$1 mode=$2 word=$3; shift 3
  local be=${word%%,*} eidle=$idle proto=u label=$word wait=()
  case "$word" in
    *,busy) eidle=busy ;;          # the server spins
    *,block) wait=(--wait block) ;; # the client blocks between replies (like sockperf's default)
  esac
  case "$be" in *tcp*) proto=t ;; xdp:*|dpdk:*) proto=raw ;; esac
  # bypass (xdp, dpdk): ringflow-echo owns the server's address on the veth (the kernel must
  # not answer the port too); the client is UDP sockets (client_spec, bed.sh).
  if [ "$proto" = raw ] && [ "$loopback" = 1 ]; then log "$be: needs the veth bed (root): skipped"; return 0; fi
  next_port
  local sargs=()
  [ "$mode" = stream ] && sargs=(--sink)
  [ "$proto" = raw ] && ip -n "$ns_s" addr del "$saddr/24" dev "$sdev" 2>/dev/null
  start_echo "$proto" "$(server_spec "$be" "$port")" "$eidle" "${sargs[@]}"
  if [ -z "$epid" ]; then
    [ "$proto" = raw ] && ip -n "$ns_s" addr add "$saddr/24" dev "$sdev" 2>/dev/null
    return 0
  fi
  local cspec
  cspec=$(client_spec "$be" "$port")
  [ "$mode" = crr ] && cspec=tcp:connect=$saddr:$port # crr: the server is under test, the client the tcp driver
  local t0 k0 line
  k0=$(proc_ticks "$epid"); t0=$(now_s)
  line=$("${in_c[@]}" "$lg_bin" --mode "$mode" --backend "$cspec" \
          --label "$label" --warmup "$warmup" --duration "$duration" --json --cores "$cpu_cli" \
          "${wait[@]}" "$@" 2>> "$out/loadgen.log") || line=
  local srv
  srv=$(awk -v k0="$k0" -v k1="$(proc_ticks "$epid")" -v t0="$t0" -v t1="$(now_s)" -v hz="$hz" \
        'BEGIN { printf "%.1f", (t1 > t0) ? 100 * (k1 - k0) / hz / (t1 - t0) : 0 }')
  stop_pid "$epid"
  if [ "$proto" = raw ]; then # give the address back; a killed XDP reflector may stay attached
    ip -n "$ns_s" addr add "$saddr/24" dev "$sdev" 2>/dev/null
    ip -n "$ns_s" link set dev "$sdev" xdp off 2>/dev/null || true
  fi
  if [ -n "$line" ]; then
    emit "$line" "\"bench\":\"$mode\",\"impl\":\"ringflow\",\"round\":$r,\"idle\":\"$eidle\",\"cpu_server_pct\":$srv"
  else
    log "$mode $word: loadgen failed: $(tail -n 1 "$out/loadgen.log")"
  fi
}

run_iperf3() { # round tcp|udp|tcp128k (tcp128k: iperf3's default 128 KiB writes, an extra)
  have iperf3 || return 0
  local r=$1 proto=$2 f="$out/iperf3-$2-$1.json" len=$stream_size
  [ "$proto" = tcp128k ] && len=131072
  next_port
  "${in_s[@]}" taskset -c "$cpu_srv" iperf3 -s -1 -B "$saddr" -p "$port" > "$out/iperf3-server.log" 2>&1 &
  local spid=$!
  pids+=("$spid")
  wait_listen t "$port" "$spid" || { log "iperf3 server did not start"; stop_pid "$spid"; return 0; }
  local omit t uargs=()
  omit=$(awk -v w="$warmup" 'BEGIN { printf "%d", w + 0.999 }')
  t=$(awk -v d="$duration" 'BEGIN { printf "%d", d + 0.999 }')
  [ "$proto" = udp ] && uargs=(-u -b 0)
  "${in_c[@]}" taskset -c "$cpu_cli" timeout $(( omit + t + 20 )) iperf3 -c "$saddr" -p "$port" \
    -t "$t" -O "$omit" -l "$len" "${uargs[@]}" -J > "$f" 2>&1 || true
  stop_pid "$spid"
  python3 - "$f" "$proto" "$len" "$r" >> "$out/results.jsonl" <<'PY' || log "iperf3 $proto: no result (see $f)"
import json, sys
f, proto, size, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
e = json.load(open(f))["end"]
s, rcv, cpu = e["sum_sent"], e["sum_received"], e["cpu_utilization_percent"]
secs = rcv["seconds"] or 1
name = "iperf3 tcp (extra: 128 KiB writes)" if proto == "tcp128k" else "iperf3 " + proto
o = {"mode": "stream", "backend": name, "size": size, "seconds": round(secs, 3),
     "sent_bytes": s["bytes"], "received_bytes": rcv["bytes"],
     "gbit_s": round(rcv["bits_per_second"] / 1e9, 4), "sent_gbit_s": round(s["bits_per_second"] / 1e9, 4),
     "msgs_s": round(rcv["bytes"] / size / secs, 1),
     # from the bytes: iperf3 3.12's lost_percent counts the omitted (-O) seconds' datagrams too
     "loss": round(max(0.0, 1 - rcv["bytes"] / s["bytes"]), 6) if proto == "udp" and s["bytes"] else 0.0,
     "cpu_client_pct": round(cpu["host_total"], 1), "cpu_server_pct": round(cpu["remote_total"], 1),
     "bench": "stream", "impl": "iperf3", "round": rnd}
print(json.dumps(o, separators=(",", ":")))
PY
}

run_sockperf() { # round epoll|spin
  have sockperf || return 0
  local r=$1 cfg=$2 f="$out/sockperf-$2-$1.log"
  next_port
  local args=(-i "$saddr" -p "$port")
  local cargs=()
  echo "U:$saddr:$port" > "$out/sockperf-feed"
  local spin=(-f "$out/sockperf-feed" -F r --nonblocked)
  case "$cfg" in
    spin) args=("${spin[@]}") ;;                             # both spin
    spin-client) cargs=("${spin[@]}") ;;                     # like ours: client spins, server sleeps
  esac
  [ ${#cargs[@]} -eq 0 ] && cargs=("${args[@]}")
  "${in_s[@]}" taskset -c "$cpu_srv" sockperf server "${args[@]}" > "$out/sockperf-server.log" 2>&1 &
  local spid=$!
  pids+=("$spid")
  wait_listen u "$port" "$spid" || { log "sockperf server did not start"; stop_pid "$spid"; return 0; }
  local t
  t=$(awk -v w="$warmup" -v d="$duration" 'BEGIN { printf "%d", w + d + 0.999 }')
  "${in_c[@]}" taskset -c "$cpu_cli" timeout $(( t + 20 )) sockperf ping-pong "${cargs[@]}" -t "$t" \
    -m "$rr_size" --full-rtt 2>&1 | sed 's/\x1b\[[0-9;]*m//g' > "$f" || true
  stop_pid "$spid"
  awk -v cfg="$cfg" -v size="$rr_size" -v rnd="$r" '
    /\[Valid Duration\]/ { for (i = 1; i <= NF; i++) { split($i, kv, "=");
        if (kv[1] == "RunTime") rt = kv[2] + 0; if (kv[1] == "SentMessages") s = kv[2] + 0;
        if (kv[1] == "ReceivedMessages") n = kv[2] + 0 } }
    /<MAX> observation/ { mx = $NF } /<MIN> observation/ { mn = $NF }
    /percentile 50.000/ { p50 = $NF } /percentile 90.000/ { p90 = $NF }
    /percentile 99.000/ { p99 = $NF } /percentile 99.900/ { p999 = $NF }
    END { if (rt <= 0) exit 1
      printf "{\"mode\":\"rr\",\"backend\":\"sockperf ping-pong (%s)\",\"size\":%d,\"seconds\":%.3f,", cfg, size, rt
      printf "\"conns\":1,\"outstanding\":1,\"sent_msgs\":%d,\"received_msgs\":%d,\"trans_s\":%.1f,", s, n, n / rt
      printf "\"min_us\":%.2f,\"p50_us\":%.2f,\"p90_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"max_us\":%.2f,", mn, p50, p90, p99, p999, mx
      printf "\"bench\":\"rr\",\"impl\":\"sockperf\",\"round\":%d,\"idle\":\"%s\"}\n", rnd, cfg }' "$f" \
    >> "$out/results.jsonl" || log "sockperf $cfg: no result (see $f)"
}

run_floor() { # round
  local r=$1
  next_port
  "${in_s[@]}" taskset -c "$cpu_srv" "$floor_bin" server "$saddr:$port" > "$out/floor-server.log" 2>&1 &
  local spid=$!
  pids+=("$spid")
  wait_listen t "$port" "$spid" || { log "crr floor server did not start"; stop_pid "$spid"; return 0; }
  local line k0 t0 srv
  k0=$(proc_ticks "$spid"); t0=$(now_s)
  line=$("${in_c[@]}" taskset -c "$cpu_cli" "$floor_bin" client "$saddr:$port" --size "$rr_size" \
          --warmup "$warmup" --duration "$duration" 2>> "$out/floor.log") || line=
  srv=$(awk -v k0="$k0" -v k1="$(proc_ticks "$spid")" -v t0="$t0" -v t1="$(now_s)" -v hz="$hz" \
        'BEGIN { printf "%.1f", (t1 > t0) ? 100 * (k1 - k0) / hz / (t1 - t0) : 0 }')
  stop_pid "$spid"
  emit "$line" "\"bench\":\"crr\",\"impl\":\"floor\",\"round\":$r,\"cpu_server_pct\":$srv"
}

items=()
for m in $modes; do
  case "$m" in
    stream) items+=("ours stream tcp" "ours stream uring:tcp" "ours stream udp" "ours stream uring:udp"
                    "iperf3 tcp" "iperf3 udp" "iperf3 tcp128k")
            for b in $raw; do items+=("ours stream $b"); done ;;
    rr) items+=("ours rr udp" "ours rr uring:udp" "ours rr tcp" "ours rr uring:tcp" "ours rr udp,busy" "ours rr udp,block"
                "ours4x8 rr tcp" "sockperf epoll" "sockperf spin" "sockperf spin-client")
        for b in $raw; do items+=("ours rr $b"); done ;;
    crr) items+=("ours crr tcp" "ours crr uring:tcp" "floor") ;;
    *) echo "modes.sh: --modes: stream, rr, crr" >&2; exit 2 ;;
  esac
done
n=${#items[@]}
for ((r = 1; r <= repeats; r++)); do
  for ((j = 0; j < n; j++)); do
    it=${items[$(( (j + r - 1) % n ))]}
    read -r kind a b <<< "$it"
    log "[round $r/$repeats] $it"
    case "$kind" in
      ours) if [ "$a" = stream ]; then run_ours "$r" stream "$b" --size "$stream_size"
            else run_ours "$r" "$a" "$b" --size "$rr_size"; fi ;;
      ours4x8) run_ours "$r" "$a" "$b" --size "$rr_size" --conns 4 --outstanding 8 ;;
      iperf3) run_iperf3 "$r" "$a" ;;
      sockperf) run_sockperf "$r" "$a" ;;
      floor) run_floor "$r" ;;
    esac
  done
done

python3 "$(dirname "$0")/modes_report.py" "$out/results.jsonl" \
  "$where; servers CPU $cpu_srv, clients CPU $cpu_cli; ringflow-echo idle $idle; ${warmup}s+${duration}s x $repeats rounds; load1 $(cut -d' ' -f1 /proc/loadavg)" \
  | tee "$out/summary.txt"
