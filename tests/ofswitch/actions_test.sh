#!/usr/bin/env bash
# tests/ofswitch/actions_test.sh: ringflow-switch's OpenFlow actions end to end, as root.
#
#   actions_test.sh SWITCH
#
# Bed (made for this run, names carry the PID):  H1 --veth-- SW --veth-- H2. ringflow-switch
# runs in SW with `packet` ports on the two veth ends (port 1: H1's side, 2: H2's) and only
# --listen on SW's own loopback: no controller, so only the flows ovs-ofctl adds forward.
# ovs-ofctl (run in SW) adds flows with mod_dl_src/mod_nw_dst/mod_tp_dst, mod_nw_src/
# mod_tp_src/dec_ttl, push_vlan + vlan_vid, pop_vlan, and output/rewrite/output; flows the
# switch must refuse get their OpenFlow ERROR (BAD_SET_TYPE, BAD_OUT_PORT); H1 sends raw
# frames (actions_frames.py) and ovs-ofctl a PACKET_OUT with mod_dl_dst/mod_nw_dst/dec_ttl,
# H2 captures them and they must arrive byte-exact against
# frames built from scratch with the new fields, checksums recomputed and valid; dump-flows
# shows the actions back. Exit 77 (skip) when not root or a tool is missing. Bounded: every
# wait has a deadline; a watchdog in its own session removes the namespaces if we are killed.
set -u
SWITCH=$1
HERE=$(cd "$(dirname "$0")" && pwd)
FRAMES="$HERE/actions_frames.py"

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, AF_PACKET)"
	exit 77
fi
for t in ip ethtool python3 ovs-ofctl timeout; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/deps.sh)"; exit 77; }
done

P=$$
H1=rfaa$P SW=rfaw$P H2=rfab$P
I1=ah1$P SA=asa$P SB=asb$P I2=ah2$P
A=$((P % 200 + 20)) B=$(((P / 200) % 250))
export IP1=10.$A.$B.1 IP2=10.$A.$B.2 IP_NEW_DST=10.$A.$B.99 IP_NEW_SRC=10.$A.$B.77
LPORT=$((40000 + P % 20000)) # on the loopback of our own namespace
TAG=rfact$P
TMP=$(mktemp -d /tmp/rfactions.XXXXXX)
PIDS=$TMP/pids
FAILS=0

cleanup() {
	[ -f "$PIDS" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done <"$PIDS"
	for n in $H1 $SW $H2; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
setsid bash -c "while kill -0 $P 2>/dev/null; do sleep 1; done
	[ -f $PIDS ] && while read -r p; do kill -9 \$p 2>/dev/null; done <$PIDS
	for n in $H1 $SW $H2; do ip netns del \$n 2>/dev/null; done; rm -rf $TMP" </dev/null >/dev/null 2>&1 &

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

ip netns add $H1 && ip netns add $SW && ip netns add $H2 || { echo "FAIL: netns"; exit 1; }
ip link add $I1 netns $H1 type veth peer name $SA netns $SW || exit 1
ip link add $SB netns $SW type veth peer name $I2 netns $H2 || exit 1
ip -n $H1 link set $I1 address 02:00:00:00:0a:01 && ip -n $H2 link set $I2 address 02:00:00:00:0b:02 || exit 1
ip -n $H1 addr add $IP1/24 dev $I1 && ip -n $H2 addr add $IP2/24 dev $I2 || exit 1
for n in $H1 $SW $H2; do ip -n $n link set lo up; done
ip -n $H1 link set $I1 up && ip -n $H2 link set $I2 up || exit 1
ip -n $SW link set $SA up && ip -n $SW link set $SB up || exit 1
for x in "$H1 $I1" "$H2 $I2"; do
	set -- $x
	ip netns exec $1 ethtool -K $2 tx off tso off gso off >/dev/null 2>&1
done

ip netns exec $SW "$SWITCH" --port packet:dev=$SA,frames=1 --port packet:dev=$SB,frames=1 \
	--cores 0 --listen tcp:127.0.0.1:$LPORT --dpid 0x$P >"$TMP/sw.log" 2>&1 &
SP=$!
echo $SP >>"$PIDS"
up=0
for _ in $(seq 50); do # up to 5 s for the listener
	ip netns exec $SW bash -c "exec 3<>/dev/tcp/127.0.0.1/$LPORT" 2>/dev/null && { up=1; break; }
	sleep 0.1
done
[ $up = 1 ] || { fail "switch did not listen on 127.0.0.1:$LPORT"; sed 's/^/  sw: /' "$TMP/sw.log"; exit 1; }

O="ip netns exec $SW timeout 10 ovs-ofctl -O OpenFlow13"
T=tcp:127.0.0.1:$LPORT
# 1. the flows, one per case of actions_frames.py
add() {
	local out
	out=$($O add-flow $T "$1" 2>&1) && [ -z "$out" ] && pass "add-flow $1" ||
		fail "add-flow $1: $out"
}
add "priority=100,tcp,in_port=1,tp_dst=7000,actions=mod_dl_src:02:00:00:00:aa:01,mod_nw_dst:$IP_NEW_DST,mod_tp_dst:8080,output:2"
add "priority=100,udp,in_port=1,tp_dst=7001,actions=mod_nw_src:$IP_NEW_SRC,mod_tp_src:5353,dec_ttl,output:2"
add "priority=100,udp,in_port=1,tp_dst=7002,actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2"
add "priority=100,in_port=1,dl_vlan=10,actions=pop_vlan,output:2"
add "priority=100,udp,in_port=1,tp_dst=7004,actions=output:2,mod_nw_dst:$IP_NEW_DST,output:2"

# 2. what the switch refuses, with the OpenFlow ERROR ovs-ofctl prints
refused() { # FLOW ERROR-NAME
	local out
	out=$($O add-flow $T "$1" 2>&1)
	echo "$out" | grep -q "$2" && pass "refused with $2: $1" || fail "$1: want $2, got: $out"
}
refused "priority=50,ipv6,actions=set_field:fe80::1->ipv6_src,output:2" OFPBAC_BAD_SET_TYPE
refused "priority=50,in_port=1,actions=output:9" OFPBAC_BAD_OUT_PORT

# 3. traffic: H2 captures, H1 sends, the frames must be the expected ones
ip netns exec $H2 timeout 20 python3 "$FRAMES" recv $I2 "$TMP/got" 10 $TAG 2>"$TMP/recv.err" &
RP=$!
echo $RP >>"$PIDS"
for _ in $(seq 50); do [ -f "$TMP/got.ready" ] && break; sleep 0.1; done
[ -f "$TMP/got.ready" ] || fail "receiver did not start: $(cat "$TMP/recv.err")"
ip netns exec $H1 timeout 10 python3 "$FRAMES" send $I1 $TAG || fail "sender"
# a PACKET_OUT runs its whole action list too (checked against its frame: IPv4/UDP)
po=$(python3 "$FRAMES" po $TAG)
for _ in 1 2 3; do
	out=$($O packet-out $T "in_port=controller packet=$po actions=mod_dl_dst:02:00:00:00:aa:01,mod_nw_dst:$IP_NEW_DST,dec_ttl,output:2" 2>&1) ||
		fail "packet-out: $out"
done
wait $RP || fail "receiver: $(cat "$TMP/recv.err")"
python3 "$FRAMES" check "$TMP/got" $TAG >"$TMP/check" 2>&1
rc=$?
cat "$TMP/check"
[ $rc = 0 ] || FAILS=$((FAILS + 1))

# 4. dump-flows reads the actions back as they were added
d=$($O dump-flows $T 2>&1)
echo "$d" | sed 's/^/  ofctl: /'
has() { # ovs-ofctl prints a set-field as set_field:V->F or as its mod_* name
	echo "$d" | grep -q -- "$1" && pass "dump-flows: $1" || fail "dump-flows lacks $1"
}
has "tp_dst=7000 actions=set_field:02:00:00:00:aa:01->eth_src,set_field:$IP_NEW_DST->ip_dst,set_field:8080->tcp_dst,output:2"
has "tp_dst=7001 actions=set_field:$IP_NEW_SRC->ip_src,set_field:5353->udp_src,dec_ttl,output:2"
has "tp_dst=7002 actions=push_vlan:0x8100,set_field:4196->vlan_vid,output:2"
has "dl_vlan=10 actions=pop_vlan,output:2"
has "tp_dst=7004 actions=output:2,set_field:$IP_NEW_DST->ip_dst,output:2"
echo "$d" | grep 'tp_dst=700[0-4]' | grep -q 'n_packets=0,' && fail "a flow's counters did not move"

kill $SP 2>/dev/null
for _ in $(seq 50); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done
kill -0 $SP 2>/dev/null && fail "switch did not stop on SIGTERM in 5 s"
wait $SP 2>/dev/null
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc"
grep -q 'Sanitizer\|runtime error' "$TMP/sw.log" && fail "sanitizer report in the switch's log"
sed 's/^/  sw: /' "$TMP/sw.log" | tail -5
[ $FAILS = 0 ] && { echo "PASS"; exit 0; }
echo "$FAILS failure(s)"
exit 1
