# bench/echo/bed.sh: the test bed of the echo benchmarks, sourced by run.sh and modes.sh.
# As root: two network namespaces joined by a veth pair, names carrying the PID, a private
# 10.x.y.0/24; otherwise loopback. bed_up creates it; bed_down (the caller's EXIT trap) stops
# every PID in pids[] and deletes the namespaces, also after a failure or Ctrl-C.
# Expects: loopback (0/1). Sets: tag ns_s ns_c saddr caddr sdev in_s in_c where. Also the
# config strings of each backend word (server_spec, client_spec) and wait_raw_open.
tag=$$
ns_s=rfes$tag ns_c=rfec$tag
pids=()
bed_down() {
  for p in "${pids[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
  done
  if [ "$loopback" = 0 ]; then
    ip netns del "$ns_s" 2>/dev/null || true
    ip netns del "$ns_c" 2>/dev/null || true
  fi
}
bed_up() {
  if [ "$loopback" = 0 ] && [ "$(id -u)" -ne 0 ]; then
    echo "bed: not root: using loopback instead of a veth pair between namespaces" >&2
    loopback=1
  fi
  if [ "$loopback" = 0 ]; then
    local net=10.$(( 100 + tag % 100 )).$(( (tag / 100) % 250 ))
    saddr=$net.2 caddr=$net.1
    ip netns add "$ns_s"
    ip netns add "$ns_c"
    ip link add "rfe${tag}s" type veth peer name "rfe${tag}c"
    ip link set "rfe${tag}s" netns "$ns_s"
    ip link set "rfe${tag}c" netns "$ns_c"
    ip -n "$ns_s" addr add "$saddr/24" dev "rfe${tag}s"
    ip -n "$ns_c" addr add "$caddr/24" dev "rfe${tag}c"
    for n in "$ns_s" "$ns_c"; do ip -n "$n" link set lo up; done
    ip -n "$ns_s" link set "rfe${tag}s" up
    ip -n "$ns_c" link set "rfe${tag}c" up
    in_s=(ip netns exec "$ns_s")
    in_c=(ip netns exec "$ns_c")
    where="veth between namespaces $ns_s ($saddr) and $ns_c ($caddr)"
    sdev=rfe${tag}s # bypass: the server's veth, for the raw drivers
  else
    saddr=127.0.0.1
    caddr=127.0.0.1
    in_s=()
    in_c=()
    where="loopback"
  fi
}

# Waits (bounded, 3 s) until something listens on port in the server namespace.
wait_listen() { # proto(u|t) port pid
  for _ in $(seq 60); do
    kill -0 "$3" 2>/dev/null || return 1
    "${in_s[@]}" ss -ln"$1" 2>/dev/null | grep -q ":$2 " && return 0
    sleep 0.05
  done
  return 1
}

# /proc/stat: "total busy steal" of the machine and "total busy" of each CPU, one line.
# cpu_sample, cpu_json (with load): the bench library's (bench/lib/stat.sh)
# shellcheck source=bench/lib/stat.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/stat.sh"

# ---- config strings per backend (the bypass drivers add their cases here) ----
# A backend word is a driver prefix, optionally with extra keys after a comma, e.g.
# "uring:udp,taskrun=signal" -> uring:udp:listen=ADDR:PORT,taskrun=signal (label: the word).
server_spec() { # backend port
  local base=${1%%,*} extra=
  [ "$base" != "$1" ] && extra=,${1#*,}
  case "$base" in
    # bypass: the raw drivers own saddr on the server's veth (ARP answered by ringflow)
    xdp:skb|xdp:native) echo "xdp:dev=$sdev,ip=$saddr,port=$2,mode=${base#xdp:}$extra" ;;
    dpdk:af_packet) echo "dpdk:vdev=net_af_packet0,iface=$sdev,ip=$saddr,port=$2$extra" ;;
    dpdk:af_xdp) echo "dpdk:vdev=net_af_xdp0,iface=$sdev,ip=$saddr,port=$2$extra" ;;
    *) echo "$base:listen=$saddr:$2$extra" ;;
  esac
}
client_spec() {
  local base=${1%%,*} extra=
  [ "$base" != "$1" ] && extra=,${1#*,}
  case "$base" in
    xdp:*|dpdk:*) echo "udp:connect=$saddr:$2" ;; # bypass: the client is plain UDP sockets
    *) echo "$base:connect=$saddr:$2$extra" ;;
  esac
}

# bypass: raw drivers open no socket; they print one line when open ("xdp: ... mode" /
# "dpdk: ... driver net_..."). Waits (bounded, 10 s: EAL start) for it.
wait_raw_open() { # log pid
  for _ in $(seq 200); do
    kill -0 "$2" 2>/dev/null || return 1
    grep -qE '^xdp: .* mode|^dpdk: .*driver net_' "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
