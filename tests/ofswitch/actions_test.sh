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
# switch must refuse get their OpenFlow ERROR (BAD_SET_TYPE, BAD_OUT_PORT); flows with the
# newer matches and actions (MPLS, ECN, ARP sha/tha, SCTP, flow label, ICMPv6, IPv6 address,
# set_queue, tunnel_id, ND target/sll) come back in dump-flows as added; H1 sends raw
# frames (actions_frames.py) and ovs-ofctl a PACKET_OUT with mod_dl_dst/mod_nw_dst/dec_ttl,
# H2 captures them and they must arrive byte-exact against
# frames built from scratch with the new fields, checksums recomputed and valid; dump-flows
# shows the actions back. Exit 77 (skip) when not root or a tool is missing. Bounded: every
# wait has a deadline; a watchdog in its own session removes the namespaces if we are killed.
SWITCH=$1
HERE=$(cd "$(dirname "$0")" && pwd)
FRAMES="$HERE/actions_frames.py"
. "$HERE/bed.sh" # the namespaces, cleanup trap and watchdog (shared with the other switch tests)
bed_need_root
bed_need ip ethtool python3 ovs-ofctl timeout

H1=rfaa$P SW=rfaw$P H2=rfab$P
I1=ah1$P SA=asa$P SB=asb$P I2=ah2$P
export IP1=$BED_NET.1 IP2=$BED_NET.2 IP_NEW_DST=$BED_NET.99 IP_NEW_SRC=$BED_NET.77
LPORT=$((40000 + P % 20000)) # on the loopback of our own namespace
TAG=rfact$P
TMP=$BED_TMP

bed_ns $H1 $SW $H2
bed_link $H1 $I1 $SW $SA
bed_link $SW $SB $H2 $I2
bed_mac $H1 $I1 02:00:00:00:0a:01
bed_mac $H2 $I2 02:00:00:00:0b:02
bed_host $H1 $I1 $IP1/24
bed_host $H2 $I2 $IP2/24

bed_switch $SW "$TMP/sw.log" 0x$P $LPORT "" $SA $SB # no controller: only the flows added here
SP=$BED_PID
bed_wait_tcp $SW 127.0.0.1 $LPORT 5 || # up to 5 s for the listener
	{ fail "switch did not listen on 127.0.0.1:$LPORT"; sed 's/^/  sw: /' "$TMP/sw.log"; exit 1; }

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
# the newer matches and actions, from port 2 (no test frame comes from there): the switch
# takes them and gives them back in dump-flows (section 4) as ovs-ofctl decodes them
add "priority=60,in_port=2,mpls,mpls_label=100,mpls_tc=3,mpls_bos=1,actions=dec_mpls_ttl,set_mpls_ttl:9,pop_mpls:0x0800,output:1"
add "priority=60,in_port=2,ip,nw_ecn=1,actions=push_mpls:0x8847,set_field:5->mpls_label,set_queue:3,output:1"
add "priority=60,in_port=2,arp,arp_sha=02:00:00:00:0b:02,actions=set_field:1->arp_op,set_field:02:00:00:00:0b:09->arp_tha,output:1"
add "priority=60,in_port=2,sctp6,tp_dst=9,ipv6_label=0x12345,actions=set_field:7->sctp_dst,set_field:2001:db8::1->ipv6_dst,output:1"
add "priority=60,in_port=2,icmp6,icmp_type=128,icmp_code=0,actions=set_field:129->icmpv6_type,output:1"
# the fields outside the flow key (issue 25): tunnel_id (masked) and set to, ND target and sll
add "priority=61,in_port=2,tun_id=0x5/0xff,actions=set_field:0x1234->tun_id,output:1"
add "priority=61,in_port=2,icmp6,icmp_type=135,nd_target=fe80::1,nd_sll=02:00:00:00:0b:01,actions=output:1"

# 2. what the switch refuses, with the OpenFlow ERROR ovs-ofctl prints
refused() { # FLOW ERROR-NAME
	local out
	out=$($O add-flow $T "$1" 2>&1)
	echo "$out" | grep -q "$2" && pass "refused with $2: $1" || fail "$1: want $2, got: $out"
}
refused "priority=50,actions=set_field:5->reg0,output:2" OFPBAC_BAD_SET_TYPE # an NXM field
refused "priority=50,in_port=1,actions=output:9" OFPBAC_BAD_OUT_PORT

# 3. traffic: H2 captures, H1 sends, the frames must be the expected ones
bed_bg $H2 "$TMP/recv.err" timeout 20 python3 "$FRAMES" recv $I2 "$TMP/got" 10 $TAG
RP=$BED_PID
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
has "mpls,in_port=2,mpls_label=100,mpls_tc=3,mpls_bos=1 actions=dec_mpls_ttl,set_mpls_ttl(9),pop_mpls:0x0800,output:1"
has "ip,in_port=2,nw_ecn=1 actions=push_mpls:0x8847,set_field:5->mpls_label,set_queue:3,output:1"
has "arp,in_port=2,arp_sha=02:00:00:00:0b:02 actions=set_field:1->arp_op,set_field:02:00:00:00:0b:09->arp_tha,output:1"
has "sctp6,in_port=2,ipv6_label=0x12345,tp_dst=9 actions=set_field:7->sctp_dst,set_field:2001:db8::1->ipv6_dst,output:1"
has "icmp6,in_port=2,icmp_type=128,icmp_code=0 actions=set_field:129->icmpv6_type,output:1"
has "tun_id=0x5/0xff,in_port=2 actions=set_field:0x1234->tun_id,output:1"
has "icmp6,in_port=2,icmp_type=135,nd_target=fe80::1,nd_sll=02:00:00:00:0b:01 actions=output:1"
echo "$d" | grep 'tp_dst=700[0-4]' | grep -q 'n_packets=0,' && fail "a flow's counters did not move"

bed_stop $SP
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc (SIGKILLed: 137)"
grep -q 'Sanitizer\|runtime error' "$TMP/sw.log" && fail "sanitizer report in the switch's log"
sed 's/^/  sw: /' "$TMP/sw.log" | tail -5
bed_done
