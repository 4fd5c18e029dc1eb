#!/usr/bin/env bash
# tests/ofswitch/roles_test.sh: ringflow-switch with two controllers at once, as root.
#
#   roles_test.sh SWITCH OFROLES
#
# Bed (bed.sh; names carry the PID): H1 --veth-- SW --veth-- H2, ringflow-switch in SW on
# `packet` ports, two --controller on SW's own loopback, both served by OFROLES (ofroles.c,
# two small controllers in one process): roles and generation ids (stale ones refused, a new
# master demotes the old one, a slave's FLOW_MOD/PACKET_OUT refused IS_SLAVE), PACKET_IN
# only to master/equal (or a slave that asked by SET_ASYNC), AGGREGATE and TABLE counts
# after pings through the ICMP flows, bad requests answered with their ERRORs, PORT_STATUS
# to both, ECHO from the switch, a dead controller dropped and reconnected, a restarted one
# reconnected. Then ovs-ofctl -O OpenFlow13 dump-desc / dump-aggregate / dump-tables against
# --listen. Exit 77 (skip) when not root. Every wait has a deadline; the bed's trap and
# watchdog remove the namespaces on any exit.
set -u
SWITCH=$1 ROLES=$2
D=$(dirname "$0")
if [ ! -r "$D/bed.sh" ]; then
	echo "SKIP: $D/bed.sh (the shared namespace bed of the interop tests) is not in this tree"
	exit 77
fi
# shellcheck source=bed.sh
. "$D/bed.sh"
bed_need_root
bed_need ip ping ethtool timeout

H1=rra$P SW=rrs$P H2=rrb$P
SA=sa$P SB=sb$P
IP2=$BED_NET.2
PA=6653 PB=6654 LP=6640 # on SW's own loopback: no other run sees them
NPING=5

bed_ns "$H1" "$SW" "$H2"
bed_link "$H1" "h1$P" "$SW" "$SA"
bed_link "$SW" "$SB" "$H2" "h2$P"
bed_host "$H1" "h1$P" "$BED_NET.1/24"
bed_host "$H2" "h2$P" "$IP2/24"
for n in "$H1" "$H2"; do # no IPv6 ND/MLD frames: the PACKET_IN counts are the test's own
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done

bed_bg "$SW" "$BED_TMP/sw.log" "$SWITCH" --port "packet:dev=$SA,frames=1" \
	--port "packet:dev=$SB,frames=1" --cores "${SW_CORES:-0}" \
	--controller "tcp:127.0.0.1:$PA" --controller "tcp:127.0.0.1:$PB" \
	--listen "tcp:127.0.0.1:$LP" --dpid "0x$P" --echo-interval 1
SWP=$BED_PID

# 1. the two controllers (OFROLES prints one line per check)
UDP="ip netns exec $H1 bash -c 'echo x >/dev/udp/$IP2/9'"
PING="ip netns exec $H1 ping -q -c $NPING -i 0.2 -w 10 $IP2 >/dev/null"
out=$(ip netns exec "$SW" timeout 90 "$ROLES" $PA $PB "$UDP" "$PING" $NPING "ip link set $SB down" 2>&1)
rc=$?
echo "$out" | sed 's/^/  roles: /'
[ $rc = 0 ] && pass "two controllers: roles, IS_SLAVE, PACKET_IN by role, counts, errors, echo, reconnect" ||
	fail "ofroles exit $rc"
ip -n "$SW" link set "$SB" up

# 2. ovs-ofctl against --listen: the flows ofroles left (table-miss, ICMP and ARP both ways)
if command -v ovs-ofctl >/dev/null; then
	O="ip netns exec $SW timeout 10 ovs-ofctl -O OpenFlow13"
	T=tcp:127.0.0.1:$LP
	d=$($O dump-desc $T 2>&1)
	echo "$d" | sed 's/^/  ofctl: /'
	echo "$d" | grep -q 'Manufacturer: ringflow' && echo "$d" | grep -q "DP Description: dpid 0x0*$P," &&
		pass "ovs-ofctl dump-desc" || fail "ovs-ofctl dump-desc"
	bed_wait_ping "$H1" "$IP2" 10 # the link is up again
	d=$($O dump-aggregate $T icmp 2>&1)
	echo "$d" | sed 's/^/  ofctl: /'
	p0=$(echo "$d" | sed -n 's/.*packet_count=\([0-9]*\).*/\1/p')
	echo "$d" | grep -q 'flow_count=2' && [ -n "$p0" ] && pass "ovs-ofctl dump-aggregate icmp: 2 flows" ||
		fail "ovs-ofctl dump-aggregate"
	bed_ping "$H1" "$IP2" 3
	d=$($O dump-aggregate $T icmp 2>&1)
	p1=$(echo "$d" | sed -n 's/.*packet_count=\([0-9]*\).*/\1/p')
	b1=$(echo "$d" | sed -n 's/.*byte_count=\([0-9]*\).*/\1/p')
	[ -n "$p1" ] && [ -n "$p0" ] && [ "$p1" = $((p0 + 6)) ] && [ "$b1" = $((p1 * 98)) ] &&
		pass "ovs-ofctl dump-aggregate after 3 pings: packet_count $p0 -> $p1, byte_count $b1" ||
		fail "ovs-ofctl dump-aggregate after 3 pings: $d (before: $p0)"
	d=$($O dump-tables $T 2>&1)
	echo "$d" | sed 's/^/  ofctl: /'
	echo "$d" | grep -q 'active=5' && pass "ovs-ofctl dump-tables: 5 active flows" ||
		fail "ovs-ofctl dump-tables"
else
	echo "skip: ovs-ofctl not installed (openvswitch-common): the --listen cases"
fi

bed_stop "$SWP"
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc"
grep -q 'Sanitizer\|runtime error' "$BED_TMP/sw.log" && fail "sanitizer report in the switch's log"
sed 's/^/  sw: /' "$BED_TMP/sw.log" | tail -12
bed_done
