#!/usr/bin/env bash
# check_caps.sh PROBE: what a plain user (uid 65534, nobody) can open. udp, tcp and uring as is;
# xdp and dpdk not without capabilities (a one-line reason naming the setcap to run), and yes
# once the binary carries them (`setcap ...+ep`, docs/non-root.md). Needs root to set up: a
# network namespace of its own with a veth pair inside (nothing in the root namespace), a copy
# of the probe with file capabilities. Exit 77 (skipped) with a reason when not root.
set -uo pipefail
probe=$1
if [ "$(id -u)" -ne 0 ]; then echo "check_caps: skipped: needs root to make the netns and setcap"; exit 77; fi
command -v setcap >/dev/null || { echo "check_caps: skipped: no setcap (Debian package libcap2-bin)"; exit 77; }
ns=rfcap$$ work=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
ip netns add "$ns" && ip -n "$ns" link add rfa$$ type veth peer name rfb$$ &&
  ip -n "$ns" addr add 10.201.0.1/24 dev rfa$$ && ip -n "$ns" link set rfa$$ up &&
  ip -n "$ns" link set rfb$$ up && ip -n "$ns" link set lo up || { echo "check_caps: cannot make the netns"; exit 1; }
cp "$probe" "$work/probe" && chmod 755 "$work" "$work/probe"
user() { ip netns exec "$ns" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
fails=0
expect() { # expect opened|refused SPEC
  out=$(user "$work/probe" "$2" 2>/dev/null | tail -n1); rc=$?
  echo "  as nobody$caps: $out"
  case $1 in
    opened) [[ $out == *": opened" ]] || { echo "check_caps: FAIL: $2 should open"; fails=1; } ;;
    refused) [[ $out != *": opened" && $out == *setcap* ]] ||
      { echo "check_caps: FAIL: $2 should be refused with the setcap to run"; fails=1; } ;;
  esac
}
xdp="xdp:dev=rfa$$,ip=10.201.0.1,port=9000,mode=skb"
dpdk="dpdk:vdev=net_af_packet0,iface=rfa$$,ip=10.201.0.1,port=9000"
caps=""
expect opened "udp:listen=127.0.0.1:9000"
expect opened "tcp:listen=127.0.0.1:9000"
if "$work/probe" "uring:udp:listen=127.0.0.1:0" >/dev/null 2>&1; then
  expect opened "uring:tcp:listen=127.0.0.1:9000"
else
  echo "  uring absent here: not checked"
fi
absent() { [[ $("$work/probe" "$1" 2>&1) == *"built without"* ]]; } # as root, no pipe (pipefail)
if absent "$xdp"; then
  echo "  xdp built without libxdp: not checked"
else
  expect refused "$xdp"
  setcap cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,cap_ipc_lock+ep "$work/probe"
  caps=" (cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,cap_ipc_lock+ep)"
  expect opened "$xdp"
  setcap -r "$work/probe"
fi
caps=""
if absent "$dpdk"; then
  echo "  dpdk built without DPDK: not checked"
else
  expect refused "$dpdk"
  setcap cap_net_raw,cap_net_admin,cap_ipc_lock+ep "$work/probe"
  caps=" (cap_net_raw,cap_net_admin,cap_ipc_lock+ep)"
  expect opened "$dpdk"
fi
[ $fails -eq 0 ] && echo "check_caps: a plain user opens udp, tcp, uring; xdp and dpdk with file capabilities"
exit $fails
