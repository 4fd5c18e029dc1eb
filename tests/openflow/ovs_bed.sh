#!/usr/bin/env bash
# tests/openflow/ovs_bed.sh: a throw-away Open vSwitch test bed, for the OpenFlow interop tests
# and for trying the controller by hand. It starts its OWN ovsdb-server and ovs-vswitchd in a
# private run directory (never the system service), makes N userspace bridges
# (datapath_type=netdev: no kernel module needed) linked in a line by veth pairs, gives each
# bridge H hosts (a veth port whose peer lives in its own network namespace, addresses in a
# private 10.x.y.0/24), and points every bridge at a controller in fail-mode secure (so only the
# controller forwards). Every name carries this script's PID, so beds can run in parallel.
#
#   ovs_bed.sh [options] -- CMD...   bring the bed up, run CMD with BED_* exported, tear down
#   ovs_bed.sh [options]             bring it up, print BED_* lines and READY, hold until
#                                    stdin closes (a test keeps a pipe open), tear down
# Options: -c|--controller tcp:IP:PORT (default tcp:127.0.0.1:6653)
#          -O|--protocol OpenFlow13|OpenFlow10 (default OpenFlow13)
#          -b|--bridges N (default 1)   -H|--hosts H per bridge (default 2)
# Exported: OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR (so ovs-vsctl, ovs-ofctl, ovs-appctl just work),
# BED_DIR, BED_BRIDGES (space separated), BED_BRIDGE_<b>, BED_NS_<b>_<h>, BED_IP_<b>_<h>,
# BED_MAC_<b>_<h>, BED_DPID_<b> (16 hex digits), BED_LINK_<b>_A / _B (the OpenFlow port numbers
# of the veth link between bridge b-1 (A) and bridge b (B)).
# Teardown (trap on exit and signals): kills only the two daemons it started (their pidfiles),
# deletes its namespaces and links, removes the run directory. Needs root. Beds run one at a
# time (a lock): all userspace datapaths of a host share the tap "ovs-netdev".
set -euo pipefail

controller=tcp:127.0.0.1:6653
protocol=OpenFlow13
nbridges=1
nhosts=2
while [ $# -gt 0 ]; do
  case "$1" in
    -c|--controller) controller=$2; shift 2 ;;
    -O|--protocol) protocol=$2; shift 2 ;;
    -b|--bridges) nbridges=$2; shift 2 ;;
    -H|--hosts) nhosts=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "ovs_bed.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
  esac
done

die() { echo "ovs_bed.sh: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces, veth, ovs-vswitchd)"
for tool in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ip; do
  command -v "$tool" >/dev/null || die "$tool not found; install it with scripts/deps.sh (openvswitch-switch, iproute2)"
done
schema=/usr/share/openvswitch/vswitch.ovsschema
[ -r "$schema" ] || die "$schema missing; install openvswitch-common"
case "$nbridges$nhosts" in *[!0-9]*) die "--bridges and --hosts take numbers" ;; esac
[ "$nbridges" -ge 1 ] && [ "$nbridges" -le 999 ] || die "--bridges must be 1..999"
[ "$nhosts" -le 9 ] && [ $((nbridges * nhosts)) -le 254 ] || die "--hosts must be 0..9, 254 hosts at most"

# One userspace datapath per host: every netdev-type ovs-vswitchd opens the same persistent
# tap "ovs-netdev", so a second one fails ("failed to open datapath ... No such device").
# Beds take turns on a lock (at most 60 s of waiting) and refuse a foreign holder of the tap.
exec 9>/tmp/ringflow-ovs-bed.lock
flock -w 60 9 || die "another OVS bed held /tmp/ringflow-ovs-bed.lock for 60 s"
if holder=$(grep -l '^iff:[[:space:]]*ovs-netdev$' /proc/[0-9]*/fdinfo/* 2>/dev/null | head -1) &&
   [ -n "$holder" ]; then
  pid=${holder#/proc/}; pid=${pid%%/*}
  die "tap ovs-netdev is held by PID $pid ($(cat "/proc/$pid/comm" 2>/dev/null)): a userspace ovs-vswitchd is running; stop it first"
fi

tag=$$                                  # unique per run; names stay under IFNAMSIZ (15)
dir=$(mktemp -d "/tmp/ringflow-ovs-$tag.XXXXXX")
netns=()
links=()
bridges=""

teardown() {
  set +e
  trap - EXIT INT TERM HUP PIPE
  local pf pid i
  for pf in "$dir/ovs-vswitchd.pid" "$dir/ovsdb-server.pid"; do
    [ -r "$pf" ] || continue
    pid=$(cat "$pf")
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || continue
    for i in $(seq 51); do          # gone or a zombie (detached: PID 1 reaps it)
      case "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" in ""|Z) break ;; esac
      [ "$i" -le 50 ] && sleep 0.05 || kill -9 "$pid" 2>/dev/null
    done
  done
  # in one batch each; the links include the bridges: a netdev bridge's internal port is a
  # persistent tap that outlives ovs-vswitchd
  [ ${#netns[@]} -eq 0 ] || printf 'netns del %s\n' "${netns[@]}" | ip -force -batch - 2>/dev/null
  [ ${#links[@]} -eq 0 ] || printf 'link del %s\n' "${links[@]}" | ip -force -batch - 2>/dev/null
  ip link del ovs-netdev 2>/dev/null    # the datapath's persistent tap (ours: we hold the lock)
  rm -rf "$dir"
}
trap teardown EXIT
trap 'exit 130' INT TERM HUP PIPE

export OVS_RUNDIR=$dir OVS_DBDIR=$dir OVS_LOGDIR=$dir OVS_SYSCONFDIR=$dir
ovsdb-tool create "$dir/conf.db" "$schema"
ovsdb-server "$dir/conf.db" --remote="punix:$dir/db.sock" --pidfile="$dir/ovsdb-server.pid" \
  --log-file="$dir/ovsdb-server.log" --unixctl="$dir/ovsdb-server.ctl" --detach --no-chdir -vconsole:off 2>>"$dir/start.log" 9>&- \
  || die "ovsdb-server did not start; see $dir/ovsdb-server.log"
vsctl() { ovs-vsctl --db="unix:$dir/db.sock" --timeout=10 "$@"; }
vsctl --no-wait init >/dev/null
ovs-vswitchd "unix:$dir/db.sock" --pidfile="$dir/ovs-vswitchd.pid" \
  --log-file="$dir/ovs-vswitchd.log" --detach --no-chdir -vconsole:off 2>>"$dir/start.log" 9>&- \
  || die "ovs-vswitchd did not start; see $dir/ovs-vswitchd.log"

# A veth pair: $1 stays in the root namespace (an OVS port), $2 is the peer.
veth() {
  ip link add "$1" type veth peer name "$2"
  links+=("$1")
  ip link set "$1" up
}

subnet="10.$((200 + tag % 50)).$((tag / 50 % 256))"
cfg=()                                    # one ovs-vsctl transaction for all bridges and ports
for b in $(seq "$nbridges"); do
  br="rf${tag}b$b"
  dpid=$(( (tag << 12) + b ))
  export "BED_DPID_$b=$(printf '%016x' "$dpid")"
  cfg+=(-- add-br "$br" -- set bridge "$br" datapath_type=netdev protocols="$protocol"
       fail_mode=secure other-config:datapath-id="$(printf '%016x' "$dpid")"
       other-config:disable-in-band=true)
  bridges="$bridges $br"
  links+=("$br")
  export "BED_BRIDGE_$b=$br"
  for h in $(seq "$nhosts"); do
    ns="rf${tag}n${b}_$h"
    port="rf${tag}h$b$h"
    ip netns add "$ns"
    netns+=("$ns")
    veth "$port" "${port}p"
    ip link set "${port}p" netns "$ns"
    ip=$subnet.$(( (b - 1) * nhosts + h ))
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$ip/24" dev "${port}p"
    ip -n "$ns" link set "${port}p" up
    cfg+=(-- add-port "$br" "$port")
    mac=$(ip -n "$ns" -br link show dev "${port}p" | awk '{print $3}')
    export "BED_NS_${b}_$h=$ns" "BED_IP_${b}_$h=$ip" "BED_MAC_${b}_$h=$mac"
  done
  if [ "$b" -gt 1 ]; then                 # link bridge b-1 and b
    veth "rf${tag}l${b}a" "rf${tag}l${b}b"
    ip link set "rf${tag}l${b}b" up
    cfg+=(-- add-port "rf${tag}b$((b - 1))" "rf${tag}l${b}a" -- add-port "$br" "rf${tag}l${b}b")
  fi
done
vsctl --no-wait "${cfg[@]}"
# All bridges get their controller in one transaction (they connect together); reconnect
# every second at most, not OVS's 8 s.
ctl=()
for br in $bridges; do
  ctl+=(-- --id=@c$br create controller target="\"$controller\"" max_backoff=1000
        -- set bridge "$br" controller=@c$br)
done
vsctl --no-wait "${ctl[@]}" >/dev/null
vsctl set Open_vSwitch . other_config:ringflow-bed="$tag" # waits until ovs-vswitchd applied all
# OpenFlow port numbers of the link b-1 -- b: BED_LINK_<b>_A (on b-1) and _B (on b)
for i in $(seq 50); do                    # ovs-vswitchd writes ofport a moment after cur_cfg
  ports=$(vsctl -f csv --no-headings --columns=name,ofport list Interface)
  grep -q ',\[\]$' <<<"$ports" || break
  sleep 0.1
done
for b in $(seq 2 "$nbridges"); do
  a=$(grep "^rf${tag}l${b}a," <<<"$ports" | cut -d, -f2)
  z=$(grep "^rf${tag}l${b}b," <<<"$ports" | cut -d, -f2)
  export "BED_LINK_${b}_A=$a" "BED_LINK_${b}_B=$z"
done
export BED_DIR=$dir BED_BRIDGES="${bridges# }"

if [ $# -gt 0 ]; then
  set +e
  "$@"
  rc=$?
  exit $rc
fi
env | grep -E '^(BED_|OVS_(RUN|DB|LOG)DIR=)' | sort
echo READY
while read -r _; do :; done             # hold until the caller closes our stdin
