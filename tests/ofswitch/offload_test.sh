#!/usr/bin/env bash
# tests/ofswitch/offload_test.sh: ringflow-switch --offload end to end, as root (issue 24).
#
#   offload_test.sh SWITCH OFOFFLOAD RINGFLOW_CTL
#
# One namespace of the run (bed.sh: names carry the PID, removed on any exit), IPv6 off, two
# veth pairs in it: a0==a1 and b0==b1. ringflow-switch --offload runs there on xdp ports a1
# (OpenFlow port 1) and b1 (port 2), native mode, with only --listen on the namespace's
# loopback; ofoffload (ofoffload.c: the phases and what each checks) injects on a0, captures
# on b0 and programs the switch. Then the switch's exit line must show entries installed and
# removed, and a switch started with --offload on a packet port must say in one line that
# the port has no fast path and run without it. Exit 77 (skip) when not root or a tool is
# missing, or when this kernel cannot attach XDP to a veth.
SWITCH=$1 TOOL=$2 CTL=$3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/bed.sh"
bed_need_root
bed_need ip ethtool timeout

NS=rfof$P
A0=oa0$P A1=oa1$P B0=ob0$P B1=ob1$P
LPORT=$((40000 + P % 20000))
TMP=$BED_TMP
bed_ns $NS
ip netns exec $NS sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
ip -n $NS link add $A0 type veth peer name $A1 && ip -n $NS link add $B0 type veth peer name $B1 ||
	{ fail "veth pairs"; exit 1; }
for d in $A0 $A1 $B0 $B1; do ip -n $NS link set $d up; done
# frames the kernel redirects into a veth reach its peer only through the peer's NAPI (GRO)
ip netns exec $NS ethtool -K $B0 gro on >/dev/null 2>&1
ip netns exec $NS ethtool -K $A0 gro on >/dev/null 2>&1
for _ in $(seq 50); do
	ip -n $NS -o link show | grep -c 'state UP' | grep -q '^4$' && break
	sleep 0.1
done

bed_bg $NS "$TMP/sw.log" "$SWITCH" --port "xdp:dev=$A1,mode=native,frames=1" \
	--port "xdp:dev=$B1,mode=native,frames=1" --cores 0 --listen "tcp:127.0.0.1:$LPORT" --offload
SP=$BED_PID
if ! bed_wait_tcp $NS 127.0.0.1 $LPORT 10; then
	if grep -qi "xdp" "$TMP/sw.log" && ! kill -0 $SP 2>/dev/null; then
		bed_skip "ringflow-switch could not open xdp ports here: $(head -c 300 "$TMP/sw.log")"
	fi
	fail "switch did not listen"; sed 's/^/  sw: /' "$TMP/sw.log"; exit 1
fi
grep -q "offload:" "$TMP/sw.log" && fail "a port refused offload: $(grep offload: "$TMP/sw.log")"
ip netns exec $NS timeout 90 "$TOOL" $LPORT $A0 $A1 $B0 $B1 "$CTL" $SP >"$TMP/tool.log" 2>&1
rc=$?
sed 's/^/  ofoffload: /' "$TMP/tool.log"
[ $rc -eq 0 ] && pass "ofoffload: every phase" || fail "ofoffload exited $rc"
bed_stop $SP
st=$?
[ $st -eq 0 ] && pass "switch exited 0" || fail "switch exit status $st"
line=$(grep "ringflow-switch: offload: requests" "$TMP/sw.log")
echo "  sw: $line"
echo "$line" | grep -Eq "installed [1-9][0-9]*, removed [1-9]" &&
	pass "exit line: entries installed and removed" || fail "exit line: $line"
# phase 6 filled the table: from then on the pollers asked nothing for that port
echo "$line" | grep -Eq "not made while the table was full [1-9]" &&
	pass "exit line: no requests while the table was full" || fail "exit line: $line"
grep -Eq "ERROR: (Address|Leak|Thread)Sanitizer|runtime error:" "$TMP/sw.log" &&
	{ fail "sanitizer report"; sed 's/^/  sw: /' "$TMP/sw.log" | head -60; }

# A port without a fast path: one line, the switch runs without offload.
bed_bg $NS "$TMP/sw2.log" "$SWITCH" --port "packet:dev=$A1,frames=1" --cores 0 \
	--listen "tcp:127.0.0.1:$((LPORT + 1))" --offload
SP2=$BED_PID
bed_wait_tcp $NS 127.0.0.1 $((LPORT + 1)) 10 && kill -0 $SP2 2>/dev/null &&
	grep -q "port 1: offload: .*this port stays in userspace" "$TMP/sw2.log" &&
	grep -q "running without offload" "$TMP/sw2.log" &&
	pass "--offload on a packet port: said in one line, runs without it" ||
	{ fail "--offload on a packet port"; sed 's/^/  sw2: /' "$TMP/sw2.log"; }
bed_stop $SP2 >/dev/null
bed_done
