#!/usr/bin/env bash
# tests/ofswitch/ovs_line_test.sh: a line of Open vSwitch userspace bridge - ringflow-switch -
# Open vSwitch bridge, all three under ringflow-controller, as root (issue 14 interop).
#
#   ovs_line_test.sh SWITCH CONTROLLER
#
# Bed (tests/ofswitch/bed.sh, names carry the PID): H1 - OVS1 - RFS - OVS2 - H2. Both OVS
# bridges (datapath_type=netdev: the userspace datapath, no kernel module) belong to one
# private ovsdb-server + ovs-vswitchd running in namespace O (own database, run directory,
# pidfiles and sockets under the run's directory; stopped by their PIDs), their ports veths
# (OpenFlow port 1 towards H1, 2 towards H2); ringflow-switch runs in namespace S on `packet`
# ports, and the controller (learning,topology, REST on its loopback) in namespace C, reached
# from O and S over control veths. Cases: ping H1 -> H2 and back across the three switches;
# LLDP discovery reports exactly the two links OVS1 - RFS and RFS - OVS2 (dpids 1, 2, 3),
# both ways; the learned flows for both hosts in the flow stats of all three (ovs-ofctl); the
# bridges on the userspace datapath (dpif/show); no tap left after the daemons stop.
# Exit 77 when not root or Open vSwitch is not installed.
. "$(dirname "$0")/bed.sh"
SWITCH=$1 CONTROLLER=$2
bed_need_root
bed_need ip ping ethtool curl ovs-ofctl

H1=rfh1$P H2=rfh2$P C=rfc$P O=rfo$P S=rfs$P
bed_ns $H1 $H2 $C $O $S
bed_link $H1 h$P $O o1h$P # OVS1 port 1
bed_link $O o1s$P $S a$P  # OVS1 port 2 - RFS port 1
bed_link $S b$P $O o2s$P  # RFS port 2 - OVS2 port 1
bed_link $O o2h$P $H2 h$P # OVS2 port 2
bed_host $H1 h$P $BED_NET.1/24
bed_host $H2 h$P $BED_NET.2/24

OFPORT=6653 REST=8080 LPORT=6654 # inside our namespaces: private, so fixed
bed_bg $C "$BED_TMP/ctl.log" "$CONTROLLER" --listen 0.0.0.0:$OFPORT --app learning,topology \
	--rest 127.0.0.1:$REST --idle adaptive
CP=$BED_PID
bed_wait_tcp $C 127.0.0.1 $OFPORT 5 || { fail "controller did not listen"; cat "$BED_TMP/ctl.log"; exit 1; }
bed_mgmt $C $O m$P 1
bed_mgmt $C $S m$P 2

bed_ovs_start $O
t0=$SECONDS
ctl=tcp:$BED_MGMT_NET.5:$OFPORT
cfg=()
for b in 1 2; do
	br=ob$b$P
	cfg+=(-- add-br "$br" -- set bridge "$br" datapath_type=netdev protocols=OpenFlow13 fail_mode=secure
		"other-config:datapath-id=$(printf '%016x' $((2 * b - 1)))" other-config:disable-in-band=true
		-- add-port "$br" "o${b}h$P" -- add-port "$br" "o${b}s$P"
		-- "--id=@c$b" create controller target="\"$ctl\"" max_backoff=1000
		-- set bridge "$br" "controller=@c$b")
done
cfg+=(-- set interface "o1h$P" ofport_request=1 -- set interface "o1s$P" ofport_request=2
	-- set interface "o2s$P" ofport_request=1 -- set interface "o2h$P" ofport_request=2)
bed_ovs_vsctl "${cfg[@]}" >/dev/null 2>"$BED_TMP/vsctl.err" ||
	{ fail "ovs-vsctl: $(cat "$BED_TMP/vsctl.err")"; tail -5 "$BED_TMP/ovs/ovs-vswitchd.log"; exit 1; }
dp=$(ovs-appctl --timeout=10 dpif/show 2>&1)
echo "$dp" | grep -q '^netdev@ovs-netdev:' && ! echo "$dp" | grep -q '^system@' &&
	pass "OVS: two bridges on the userspace datapath (netdev@ovs-netdev) up in $((SECONDS - t0)) s" ||
	fail "OVS datapath: $dp"
bed_switch $S "$BED_TMP/sw.log" 2 $LPORT tcp:$BED_MGMT_NET.9:$OFPORT a$P b$P
SP=$BED_PID

bed_reach $H1 $BED_NET.2 20 "ping H1 -> H2 across OVS1 - ringflow-switch - OVS2" || {
	sed 's/^/  sw: /' "$BED_TMP/sw.log" | tail -5
	grep -iE 'warn|err' "$BED_TMP/ovs/ovs-vswitchd.log" | tail -10 | sed 's/^/  ovs: /'
}
bed_ping $H2 $BED_NET.1 3 && pass "ping H2 -> H1" || fail "ping H2 -> H1"

bed_lldp_links $C $REST '1:2-2:1 2:1-1:2 2:2-3:1 3:1-2:2' "exactly OVS1 - RFS and RFS - OVS2"

# The learned flows (in_port + eth_dst, both hosts, counters moved) in all three switches.
bed_ping $H1 $BED_NET.2 3
m1=$(bed_mac_of $H1 h$P) m2=$(bed_mac_of $H2 h$P)
bed_learned_flows OVS1 $S ob1$P "$m1" "$m2"
bed_learned_flows RFS $S tcp:127.0.0.1:$LPORT "$m1" "$m2"
bed_learned_flows OVS2 $S ob2$P "$m1" "$m2"

bed_stop $SP
rc=$?
[ $rc = 0 ] || fail "switch exit status $rc"
grep -q 'Sanitizer\|runtime error' "$BED_TMP/sw.log" && fail "sanitizer report in the switch's log"
bed_ovs_stop
taps=$(ip -n $O -o link show type tun)
[ -z "$taps" ] && pass "OVS stopped by its PIDs, its taps removed" || fail "taps left in $O: $taps"
bed_stop $CP
grep -q 'Sanitizer\|runtime error' "$BED_TMP/ctl.log" && fail "sanitizer report in the controller's log"
bed_done
