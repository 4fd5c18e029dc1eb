#!/usr/bin/env bash
# tests/ofswitch/line_test.sh: three ringflow-switches in a line under ringflow-controller,
# as root (interop of our two halves, issue 14).
#
#   line_test.sh SWITCH CONTROLLER
#
# Bed (tests/ofswitch/bed.sh, names carry the PID): H1 - S1 - S2 - S3 - H2, each a namespace,
# veth pairs between them, the switches on `packet` ports (port 1 towards H1, port 2 towards
# H2). The controller (learning,topology, REST on its own loopback) lives in namespace C; each
# switch namespace reaches it over its own control veth (a /30 each), as an out-of-band
# control network. Cases: ping H1 -> H2 and back across the three switches; the controller's
# LLDP discovery (GET /api/links) reports exactly the two inter-switch links, in both
# directions, with the right dpids and ports; the flows the controller learned show in every
# switch's flow stats (ovs-ofctl -O OpenFlow13 dump-flows against its --listen) as
# in_port + eth_dst flows for both hosts with counters that moved. Exit 77 when not root or a
# tool is missing.
. "$(dirname "$0")/bed.sh"
SWITCH=$1 CONTROLLER=$2
bed_need_root
bed_need ip ping ethtool curl ovs-ofctl

H1=rfh1$P H2=rfh2$P C=rfc$P
bed_ns $H1 $H2 $C rfs1$P rfs2$P rfs3$P
bed_link $H1 h$P rfs1$P a$P      # H1 - S1
bed_link rfs1$P b$P rfs2$P a$P   # S1 - S2
bed_link rfs2$P b$P rfs3$P a$P   # S2 - S3
bed_link rfs3$P b$P $H2 h$P      # S3 - H2
bed_host $H1 h$P $BED_NET.1/24
bed_host $H2 h$P $BED_NET.2/24

OFPORT=6653 REST=8080 LPORT=6654 # inside our namespaces: private, so fixed
SPS=()
bed_bg $C "$BED_TMP/ctl.log" "$CONTROLLER" --listen 0.0.0.0:$OFPORT --app learning,topology \
	--rest 127.0.0.1:$REST --idle adaptive
CP=$BED_PID
bed_wait_tcp $C 127.0.0.1 $OFPORT 5 || { fail "controller did not listen"; cat "$BED_TMP/ctl.log"; exit 1; }
for i in 1 2 3; do
	bed_mgmt $C rfs$i$P m$P $i
	bed_switch rfs$i$P "$BED_TMP/sw$i.log" $i $LPORT tcp:$BED_MGMT_NET.$((4 * i + 1)):$OFPORT a$P b$P
	SPS[$i]=$BED_PID
done

bed_reach $H1 $BED_NET.2 20 "ping H1 -> H2 across three ringflow-switches" ||
	for i in 1 2 3; do sed "s/^/  sw$i: /" "$BED_TMP/sw$i.log" | tail -5; done
bed_ping $H2 $BED_NET.1 3 && pass "ping H2 -> H1" || fail "ping H2 -> H1"

# LLDP: one entry per direction; 2 links = 4 entries, polled (the controller sends LLDP on
# switch up and every second) for at most 10 s.
bed_lldp_links $C $REST '1:2-2:1 2:1-1:2 2:2-3:1 3:1-2:2' "exactly the two inter-switch links"

# The learned flows in each switch's flow stats, over OpenFlow from ovs-ofctl (a client
# nobody here wrote): in_port + eth_dst for both hosts, counters moved by the pings above.
bed_ping $H1 $BED_NET.2 3
m1=$(bed_mac_of $H1 h$P) m2=$(bed_mac_of $H2 h$P)
for i in 1 2 3; do bed_learned_flows S$i rfs$i$P tcp:127.0.0.1:$LPORT "$m1" "$m2"; done

for i in 1 2 3; do
	bed_stop "${SPS[$i]}"
	rc=$?
	[ $rc = 0 ] || fail "switch S$i exit status $rc"
	grep -q 'Sanitizer\|runtime error' "$BED_TMP/sw$i.log" && fail "sanitizer report in S$i's log"
done
bed_stop $CP
grep -q 'Sanitizer\|runtime error' "$BED_TMP/ctl.log" && fail "sanitizer report in the controller's log"
bed_done
