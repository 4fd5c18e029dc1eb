#!/usr/bin/env bash
# tests/ofswitch/osken_test.sh: ringflow-switch under a controller nobody here wrote: Debian's
# os-ken (python3-os-ken, `osken-manager`) running the OpenFlow 1.3 learning switch the
# benchmarks carry (bench/peers/osken_learning_switch.py), as root (issue 14 interop).
#
#   osken_test.sh SWITCH
#
# Bed (tests/ofswitch/bed.sh, names carry the PID): H1 and H3 on S1, S1 - S2, H2 on S2; the
# switches in their own namespaces on `packet` ports, osken-manager in namespace C reached
# over a control veth per switch. Cases: ping H1 -> H3 (through one switch) and H1 -> H2
# (through two) and back; the flows os-ken installed (priority 1, in_port + eth_dst) show in
# S1's flow stats with moving counters (ovs-ofctl dump-flows against --listen, when
# ovs-ofctl is there). Exit 77 when not root or osken-manager is missing.
. "$(dirname "$0")/bed.sh"
SWITCH=$1
APP=$(cd "$(dirname "$0")/../../bench/peers" && pwd)/osken_learning_switch.py
bed_need_root
bed_need ip ping ethtool osken-manager
[ -r "$APP" ] || { echo "FAIL: $APP missing"; exit 1; }

H1=rfh1$P H2=rfh2$P H3=rfh3$P C=rfc$P S1=rfs1$P S2=rfs2$P
bed_ns $H1 $H2 $H3 $C $S1 $S2
bed_link $H1 h$P $S1 a$P # S1 port 1
bed_link $S1 b$P $S2 a$P # S1 port 2 - S2 port 1
bed_link $S1 c$P $H3 h$P # S1 port 3
bed_link $S2 b$P $H2 h$P # S2 port 2
bed_host $H1 h$P $BED_NET.1/24
bed_host $H2 h$P $BED_NET.2/24
bed_host $H3 h$P $BED_NET.3/24

OFPORT=6653 LPORT=6654 # inside our namespaces: private, so fixed
bed_bg $C "$BED_TMP/osken.log" osken-manager --ofp-listen-host 0.0.0.0 --ofp-tcp-listen-port $OFPORT "$APP"
CP=$BED_PID
bed_wait_tcp $C 127.0.0.1 $OFPORT 20 ||
	{ fail "osken-manager did not listen in 20 s"; tail -20 "$BED_TMP/osken.log"; exit 1; }
bed_mgmt $C $S1 m$P 1
bed_switch $S1 "$BED_TMP/sw1.log" 1 $LPORT tcp:$BED_MGMT_NET.5:$OFPORT a$P b$P c$P
SP1=$BED_PID
bed_mgmt $C $S2 m$P 2
bed_switch $S2 "$BED_TMP/sw2.log" 2 $LPORT tcp:$BED_MGMT_NET.9:$OFPORT a$P b$P
SP2=$BED_PID

bed_reach $H1 $BED_NET.3 20 "ping H1 -> H3 through one ringflow-switch under os-ken" || {
	tail -20 "$BED_TMP/osken.log" | sed 's/^/  os-ken: /'
	sed 's/^/  sw1: /' "$BED_TMP/sw1.log" | tail -5
}
bed_reach $H1 $BED_NET.2 10 "ping H1 -> H2 through two ringflow-switches under os-ken"
bed_ping $H2 $BED_NET.1 3 && pass "ping H2 -> H1" || fail "ping H2 -> H1"
bed_ping $H3 $BED_NET.2 3 && pass "ping H3 -> H2" || fail "ping H3 -> H2"

if command -v ovs-ofctl >/dev/null; then
	m3=$(bed_mac_of $H3 h$P)
	d=$(ip netns exec $S1 timeout 10 ovs-ofctl -O OpenFlow13 dump-flows tcp:127.0.0.1:$LPORT 2>&1)
	echo "$d" | grep -E "n_packets=[1-9].*priority=1,in_port=1,dl_dst=$m3 actions=output:3" >/dev/null &&
		echo "$d" | grep -q 'priority=0 actions=CONTROLLER:65535' &&
		pass "S1 flow stats: os-ken's learned flow H1 -> H3 (counters moved) and its table-miss flow" ||
		{ fail "S1 flow stats"; echo "$d" | sed 's/^/  S1: /'; }
else
	echo "skip: ovs-ofctl not installed (openvswitch-common): the flow stats case"
fi

for x in "1 $SP1" "2 $SP2"; do
	set -- $x
	bed_stop $2
	rc=$?
	[ $rc = 0 ] || fail "switch S$1 exit status $rc"
	grep -q 'Sanitizer\|runtime error' "$BED_TMP/sw$1.log" && fail "sanitizer report in S$1's log"
done
bed_stop $CP
grep -q 'Traceback' "$BED_TMP/osken.log" && { fail "os-ken raised"; grep -A8 Traceback "$BED_TMP/osken.log" | head -20; }
bed_done
