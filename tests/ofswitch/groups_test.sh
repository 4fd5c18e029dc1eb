#!/usr/bin/env bash
# tests/ofswitch/groups_test.sh: ringflow-switch's groups end to end through ovs-ofctl, as
# root (issue 25).
#
#   groups_test.sh SWITCH
#
# Bed (made for this run, names carry the PID): H1 --veth-- SW --veth-- H2, ringflow-switch
# in SW with `packet` ports on the veth ends and only --listen on SW's loopback (as
# actions_test.sh). ovs-ofctl adds groups of each type and a flow through one; the errors a
# GROUP_MOD or a flow must get (GROUP_EXISTS, UNKNOWN_GROUP, BAD_WATCH, CHAINED_GROUP,
# BAD_OUT_GROUP); dump-groups, dump-group-stats (ref_count) and dump-group-features read them
# back; deleting the group removes the flow that forwarded to it (spec 6.5). Frames through
# groups are the unit tests' (test_sw_group.c) and the conformance suite's. Exit 77 (skip)
# when not root or a tool is missing. Bounded: every wait has a deadline.
SWITCH=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bed.sh" # the namespaces, cleanup trap and watchdog (shared with the other switch tests)
bed_need_root
bed_need ip ethtool ovs-ofctl timeout

H1=rfga$P SW=rfgw$P H2=rfgb$P
I1=gh1$P SA=gsa$P SB=gsb$P I2=gh2$P
LPORT=$((40000 + P % 20000)) # on the loopback of our own namespace
TMP=$BED_TMP

bed_ns $H1 $SW $H2
bed_link $H1 $I1 $SW $SA
bed_link $SW $SB $H2 $I2

bed_switch $SW "$TMP/sw.log" 0x$P $LPORT "" $SA $SB # no controller
SP=$BED_PID
bed_wait_tcp $SW 127.0.0.1 $LPORT 5 ||
	{ fail "switch did not listen on 127.0.0.1:$LPORT"; sed 's/^/  sw: /' "$TMP/sw.log"; exit 1; }

O="ip netns exec $SW timeout 10 ovs-ofctl -O OpenFlow13"
T=tcp:127.0.0.1:$LPORT
ok() { # CMD ARG
	local out
	out=$($O "$1" $T "$2" 2>&1) && [ -z "$out" ] && pass "$1 $2" || fail "$1 $2: $out"
}
refused() { # CMD ARG ERROR-NAME
	local out
	out=$($O "$1" $T "$2" 2>&1)
	echo "$out" | grep -q "$3" && pass "refused with $3: $1 $2" || fail "$1 $2: want $3, got: $out"
}
ok add-group "group_id=1,type=all,bucket=output:2,bucket=output:1"
ok add-group "group_id=2,type=select,bucket=weight:1,output:1,bucket=weight:2,output:2"
ok add-group "group_id=3,type=indirect,bucket=output:2"
ok add-group "group_id=4,type=ff,bucket=watch_port:2,output:2,bucket=watch_port:1,output:1"
ok add-group "group_id=5,type=indirect,bucket=group:3"
ok add-flow "priority=10,in_port=1,actions=group:1"
ok add-flow "priority=10,in_port=2,actions=group:5"
refused add-group "group_id=1,type=all,bucket=output:2" OFPGMFC_GROUP_EXISTS
refused mod-group "group_id=7,type=all,bucket=output:1" OFPGMFC_UNKNOWN_GROUP
refused add-group "group_id=6,type=ff,bucket=watch_port:9,output:1" OFPGMFC_BAD_WATCH
refused add-flow "priority=20,in_port=1,actions=group:99" OFPBAC_BAD_OUT_GROUP
refused del-groups "group_id=3" OFPGMFC_CHAINED_GROUP

d=$($O dump-groups $T 2>&1)
echo "$d" | sed 's/^/  ofctl: /'
for g in "group_id=1,type=all" "group_id=2,type=select" "group_id=3,type=indirect" \
	"group_id=4,type=ff" "watch_port:2" "weight:2" "group:3"; do
	echo "$d" | grep -q -- "$g" && pass "dump-groups: $g" || fail "dump-groups lacks $g"
done
s=$($O dump-group-stats $T 2>&1)
echo "$s" | grep -q "group_id=1,.*ref_count=1" && pass "group 1: ref_count=1" ||
	fail "group stats: $s"
echo "$s" | grep -q "group_id=3,.*ref_count=1" && pass "group 3: ref_count=1 (group 5)" ||
	fail "group stats: $s"
f=$($O dump-group-features $T 2>&1)
echo "$f" | grep -q "Types:  0xf" && echo "$f" | grep -q "Capabilities:  0xf" && pass "group features" ||
	fail "group features: $f"

# FLOW stats filtered by out_group
fo=$($O dump-flows $T out_group=1 2>&1)
echo "$fo" | grep -q "group:1" && ! echo "$fo" | grep -q "group:5" &&
	pass "dump-flows out_group=1: the flow through group 1 only" || fail "out_group=1: $fo"

# deleting group 1 takes the flow through it along; the other flow stays
ok del-groups "group_id=1"
fl=$($O dump-flows $T 2>&1)
echo "$fl" | grep -q "group:1" && fail "the flow through group 1 survived: $fl" ||
	pass "the flow through group 1 went with it"
echo "$fl" | grep -q "group:5" && pass "the flow through group 5 stayed" || fail "dump-flows: $fl"
ok del-groups ""
fl=$($O dump-flows $T 2>&1)
echo "$fl" | grep -q "group:" && fail "flows through deleted groups survived: $fl" ||
	pass "OFPG_ALL: every group and the flows through them gone"

bed_stop $SP
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc (SIGKILLed: 137)"
grep -q 'Sanitizer\|runtime error' "$TMP/sw.log" && fail "sanitizer report in the switch's log"
bed_done
