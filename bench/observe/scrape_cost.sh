#!/usr/bin/env bash
# bench/observe/scrape_cost.sh BUILD [PAIRS] [CASES]: what scraping every 100 ms costs the
# dataplane, with vs without, in the same run (bench/observe/scrape_slots.py: 1 s slots in
# pairs, scraping in one slot of each pair, order alternating; median, quartiles and range of
# the per-pair ratios; JSON lines and a table per case, then one summary table).
# CASES, comma-separated (default echo:100k,echo:max,l2fwd):
#   echo:RATE  ringflow-echo (udp on 127.0.0.1, busy poller on CPU 0, --metrics) driven by
#              ringflow-loadgen (CPU 1) at RATE msg/s; its figure is echo's tx counter.
#              echo:max offers 4M msg/s, far more than echo can answer here, so echo runs at
#              its maximum (the loadgen's own tx rate is printed beside, as "offered").
#   l2fwd      ringflow-l2fwd (packet driver, frames=1, busy poller on CPU 1, --metrics on the
#              namespace's loopback) on the forwarding bed's three namespaces (bench/fwd:
#              trafgen on CPU 0 at full speed into GEN -> FWD -> SINK, an XDP drop at SINK);
#              its figure is the forwarded frames (port1 tx). Needs root and trafgen
#              (netsniff-ng) and the bed's build outputs; skipped with the reason otherwise.
# Loopback and the run's own namespaces only (names carry this PID; bench/lib/teardown.sh
# removes them on any exit); every load is bounded in time (PAIRS * 2 s + a few).
set -euo pipefail
B=${1:?usage: scrape_cost.sh BUILD [PAIRS] [CASES]}
PAIRS=${2:-20} CASES=${3:-echo:100k,echo:max,l2fwd}
B=$(cd "$B" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib/bed.sh
source "$here/../lib/bed.sh" # bed_trafgen_frame (the bench library; functions only)
ECHO=$B/apps/echo/ringflow-echo LG=$B/apps/echo/ringflow-loadgen L2F=$B/apps/l2fwd/ringflow-l2fwd
CTL=$B/apps/ctl/ringflow-ctl
[[ "$PAIRS" =~ ^[0-9]+$ ]] && [ "$PAIRS" -ge 2 ] && [ "$PAIRS" -le 100 ] ||
  { echo "scrape_cost.sh: PAIRS must be 2..100" >&2; exit 2; }
tmp=$(mktemp -d /tmp/rf-scrape.$$.XXXX)
export XDG_RUNTIME_DIR=$tmp/xdg
mkdir -m 700 "$XDG_RUNTIME_DIR"
pids=() bed=0 tag=$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ "$bed" = 1 ] && bash "$here/../lib/teardown.sh" "$tag" "${state:-}"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_sock() { for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done; return 1; }
steal() { awk '/^cpu / { print $9, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
summary=$tmp/summary.jsonl
: >"$summary"

run_echo() { # RATE
  local rate=$1 offer=$1 udp metrics
  [ "$rate" = max ] && offer=4M
  udp=$(free_port) metrics=$(free_port)
  "$ECHO" --backend "udp:listen=127.0.0.1:$udp" --cores 0 --idle busy \
    --metrics "127.0.0.1:$metrics" >"$tmp/echo.out" 2>"$tmp/echo.err" &
  local echo_pid=$!; pids+=($echo_pid)
  wait_sock "$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock" || { cat "$tmp/echo.err" >&2; exit 1; }
  "$LG" --backend "udp:connect=127.0.0.1:$udp" --rates "$offer" --warmup 1 \
    --duration $((PAIRS * 2 + 8)) --cores 1 >/dev/null 2>"$tmp/lg.err" &
  local lg_pid=$!; pids+=($lg_pid)
  wait_sock "$XDG_RUNTIME_DIR/ringflow/loadgen.$lg_pid.sock" || { cat "$tmp/lg.err" >&2; exit 1; }
  sleep 1.5
  echo "echo:$rate: load average before $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  local s0 s1; s0=$(steal)
  python3 "$here/scrape_slots.py" "$XDG_RUNTIME_DIR/ringflow/echo.$echo_pid.sock" "$metrics" \
    "$PAIRS" "$echo_pid" ports/echo0/tx_pkts ringflow-echo "echo_$rate" \
    "$XDG_RUNTIME_DIR/ringflow/loadgen.$lg_pid.sock" ports/loadgen0/tx_pkts | tee "$tmp/out.txt"
  s1=$(steal)
  note_steal "$s0" "$s1"
  grep '_ratio_scrape_vs_none"' "$tmp/out.txt" >>"$summary"
  kill "$lg_pid" "$echo_pid" 2>/dev/null || true
  wait "$lg_pid" "$echo_pid" 2>/dev/null || true
}

note_steal() {
  read -r a ta <<<"$1"; read -r b tb <<<"$2"
  awk -v a="$a" -v b="$b" -v ta="$ta" -v tb="$tb" -v l="$(cut -d' ' -f1-3 /proc/loadavg)" \
    'BEGIN { printf "steal %.1f %% of all CPU time over the case; load average after %s\n", ((tb > ta) ? 100 * (b - a) / (tb - ta) : 0), l }' >&2
}

run_l2fwd() {
  local why=
  [ "$(id -u)" -eq 0 ] || why="needs root (network namespaces)"
  command -v trafgen >/dev/null || why="${why:-trafgen not found (netsniff-ng, scripts/deps.sh)}"
  local shim=$B/bench/fwd/librf_sndbuf_shim.so xdp_obj=$B/bench/fwd/xdp_sink.bpf.o
  for f in "$shim" "$xdp_obj" "$L2F"; do [ -e "$f" ] || why="${why:-$f not built}"; done
  if [ -n "$why" ]; then
    echo "{\"bench\":\"observe\",\"impl\":\"ringflow-l2fwd\",\"case\":\"l2fwd\",\"skipped\":\"$why\"}"
    return 0
  fi
  G=rffg$tag F=rfff$tag S=rffs$tag gdev=fg$tag fa=fa$tag fb=fb$tag sdev=fs$tag
  state=$(mktemp -d "/tmp/ringflow-fwd-$tag.XXXXXX")
  bed=1
  for ns in "$G" "$F" "$S"; do
    ip netns add "$ns"
    ip netns exec "$ns" sh -c 'sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1' || true
    ip -n "$ns" link set lo up
  done
  ip link add "$gdev" netns "$G" type veth peer name "$fa" netns "$F"
  ip link add "$fb" netns "$F" type veth peer name "$sdev" netns "$S"
  for l in "$G $gdev" "$F $fa" "$F $fb" "$S $sdev"; do set -- $l; ip -n "$1" link set "$2" up; done
  ip -n "$S" link set dev "$sdev" xdpdrv obj "$xdp_obj" sec xdp
  local gmac smac
  gmac=$(ip -n "$G" -br link show dev "$gdev" | awk '{print $3}')
  smac=$(ip -n "$S" -br link show dev "$sdev" | awk '{print $3}')
  bed_trafgen_frame "$state/frame.cfg" "$smac" "$gmac"
  local metrics=9100
  ip netns exec "$F" "$L2F" --port "packet:dev=$fa,frames=1" --port "packet:dev=$fb,frames=1" \
    --cores 1 --idle busy --metrics "127.0.0.1:$metrics" </dev/null >"$tmp/l2fwd.out" 2>"$tmp/l2fwd.err" &
  local l_pid=$!; pids+=($l_pid)
  local sock=$XDG_RUNTIME_DIR/ringflow/l2fwd.$l_pid.sock
  wait_sock "$sock" || { cat "$tmp/l2fwd.err" >&2; exit 1; }
  # trafgen at full speed, bounded by timeout; in its own session so its fork goes with it
  ip netns exec "$G" env LD_PRELOAD="$shim" timeout $((PAIRS * 2 + 6)) taskset -c 0 trafgen \
    --no-sock-mem --cpus 1 --no-cpu-stats --dev "$gdev" --conf "$state/frame.cfg" \
    </dev/null >"$tmp/trafgen.log" 2>&1 &
  pids+=($!)
  sleep 2
  echo "l2fwd: load average before $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  local s0 s1; s0=$(steal)
  ip netns exec "$F" python3 "$here/scrape_slots.py" "$sock" "$metrics" "$PAIRS" "$l_pid" \
    ports/port1/tx_pkts ringflow-l2fwd l2fwd_packet | tee "$tmp/out.txt"
  s1=$(steal)
  note_steal "$s0" "$s1"
  echo "l2fwd port0 (receiving) drops over the run: $("$CTL" -s "$sock" --json stats ports/port0/rx_drops) rx_drops" >&2
  grep '_ratio_scrape_vs_none"' "$tmp/out.txt" >>"$summary"
}

IFS=, read -ra cases <<<"$CASES"
for c in "${cases[@]}"; do
  case "$c" in
    echo:*) run_echo "${c#echo:}" ;;
    l2fwd) run_l2fwd ;;
    *) echo "scrape_cost.sh: unknown case '$c' (echo:RATE, echo:max, l2fwd)" >&2; exit 2 ;;
  esac
done
echo
python3 - "$summary" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'case':<28}{'no scrape':>12}{'scrape 100ms':>14}{'ratio':>8}{'pair ratios: median [q1..q3] (min..max)':>46}")
for r in rows:
    case = r["case"].replace("_ratio_scrape_vs_none", "")
    print(f"{r['impl'] + ' ' + case:<28}{r['median_no_scrape']:>12.0f}{r['median_scrape_100ms']:>14.0f}"
          f"{r['value']:>8.4f}    {r['pair_ratio_median']:.4f} [{r['pair_ratio_q1']:.4f}..{r['pair_ratio_q3']:.4f}]"
          f" ({r['pair_ratio_min']:.4f}..{r['pair_ratio_max']:.4f})")
PY
