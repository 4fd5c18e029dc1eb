#!/usr/bin/env bash
# tests/ofswitch/churn_test.sh: ringflow-switch keeps forwarding through a flood of FLOW_MODs.
#
#   churn_test.sh SWITCH OFCHURN [N]
#
# Bed (made for this run, names carry the PID): H1 --veth-- SW --veth-- H2, ringflow-switch
# in SW with `packet` ports on the two veth ends and only an OpenFlow listener on SW's own
# loopback (no controller: fail-mode secure, forwarding only by installed flows). OFCHURN
# connects to it, installs in_port 1 <-> 2 forwarding, and sends N (default 100000) FLOW_MOD
# ADDs over 10 wildcard masks, each a new highest-priority flow of its masked key (each add
# visible to lookups at once and checked against the pollers' caches), then keeps churning
# (DELETE_STRICT + ADD) for as long as a bounded ping runs: 200 pings H1 -> H2, 10 ms apart, started with the flood. Checked: every
# ping sent during the flood is answered (each within 5 s: liveness, not a timing figure), no
# ERROR, and the table ends with exactly N flood flows (FLOW stats), the 2 forwarding flows
# kept, and 0 after DELETE by cookie. Exit 77 (skip) when not root. Every wait is bounded; a
# watchdog in its own session removes the namespaces if the script is killed.
set -u
SWITCH=$1 CHURN=$2 N=${3:-100000}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, AF_PACKET)"
	exit 77
fi
if [ -n "${SW_CORES:-}" ] && [ "$(nproc)" -lt 2 ]; then
	echo "SKIP: SW_CORES=$SW_CORES needs 2 CPUs, $(nproc) here"
	exit 77
fi
for t in ip ping ethtool; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/deps.sh)"; exit 77; }
done

P=$$
H1=rfca$P SW=rfcw$P H2=rfcb$P
I1=ch1$P SA=csa$P SB=csb$P I2=ch2$P
A=$((P % 200 + 20)) B=$(((P / 200) % 250))
IP1=10.$A.$B.1 IP2=10.$A.$B.2
LPORT=$((40000 + P % 20000)) # loopback of our own namespace
TMP=$(mktemp -d /tmp/rfchurn.XXXXXX)
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
ip -n $H1 addr add $IP1/24 dev $I1 && ip -n $H2 addr add $IP2/24 dev $I2 || exit 1
for n in $H1 $SW $H2; do ip -n $n link set lo up; done
ip -n $H1 link set $I1 up && ip -n $H2 link set $I2 up || exit 1
ip -n $SW link set $SA up && ip -n $SW link set $SB up || exit 1
for x in "$H1 $I1" "$H2 $I2"; do
	set -- $x
	ip netns exec $1 ethtool -K $2 tx off tso off gso off >/dev/null 2>&1
done

ip netns exec $SW "$SWITCH" --port packet:dev=$SA,frames=1 --port packet:dev=$SB,frames=1 \
	--cores "${SW_CORES:-0}" --listen tcp:127.0.0.1:$LPORT --dpid 0x$P >"$TMP/sw.log" 2>&1 &
SP=$!
echo $SP >>"$PIDS"

# The ping that must go through while the flood is applied: bounded in count (200) and
# time (-w 60); each reply may take up to 5 s (-W 5). It passes when all 200 come back.
PING="ip netns exec $H1 ping -q -c 200 -i 0.01 -W 5 -w 60 $IP2 >$TMP/ping.log 2>&1;
grep -q ' 200 received' $TMP/ping.log"
# ofchurn's own checks print as ok:/FAIL: lines; it runs inside SW (the listener's loopback).
out=$(ip netns exec $SW timeout 150 "$CHURN" 127.0.0.1:$LPORT "$N" "$PING" 2>&1)
rc=$?
echo "$out" | sed 's/^/  churn: /'
sed 's/^/  ping: /' "$TMP/ping.log" 2>/dev/null | grep -E "transmitted|rtt" || true
[ $rc = 0 ] && pass "$N FLOW_MODs while 200 pings crossed: all answered, table as expected" ||
	fail "ofchurn exit $rc"
# and forwarding still works afterwards
ip netns exec $H1 ping -q -c 3 -i 0.2 -w 10 $IP2 >/dev/null 2>&1 && pass "ping after the flood" ||
	fail "ping after the flood"
kill -TERM $SP 2>/dev/null
for _ in $(seq 50); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done
if kill -0 $SP 2>/dev/null; then fail "switch still running 5 s after SIGTERM"
else wait $SP; r=$?; [ $r = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit $r"; fi
[ $FAILS = 0 ] || sed 's/^/  sw: /' "$TMP/sw.log"
echo "$FAILS failure(s)"
[ $FAILS = 0 ]
