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
SWITCH=$1 CHURN=$2 N=${3:-100000}
. "$(dirname "$0")/bed.sh" # the namespaces, cleanup trap and watchdog (shared with the other switch tests)
bed_need_root
bed_need_cores
bed_need ip ping ethtool

H1=rfca$P SW=rfcw$P H2=rfcb$P
I1=ch1$P SA=csa$P SB=csb$P I2=ch2$P
IP1=$BED_NET.1 IP2=$BED_NET.2
LPORT=$((40000 + P % 20000)) # loopback of our own namespace
TMP=$BED_TMP

bed_ns $H1 $SW $H2
bed_link $H1 $I1 $SW $SA
bed_link $SW $SB $H2 $I2
bed_host $H1 $I1 $IP1/24
bed_host $H2 $I2 $IP2/24

bed_switch $SW "$TMP/sw.log" 0x$P $LPORT "" $SA $SB # no controller: forwarding by flows only
SP=$BED_PID

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
bed_ping $H1 $IP2 3 && pass "ping after the flood" || fail "ping after the flood"
bed_stop $SP
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc (SIGKILLed: 137)"
[ $FAILS = 0 ] || sed 's/^/  sw: /' "$TMP/sw.log"
bed_done
