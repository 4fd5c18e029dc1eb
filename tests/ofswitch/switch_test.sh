#!/usr/bin/env bash
# tests/ofswitch/switch_test.sh: ringflow-switch end to end, as root, under ringflow-controller.
#
#   switch_test.sh SWITCH CONTROLLER OFPROBE
#
# Bed (made for this run, names carry the PID):  H1 --veth-- SW --veth-- H2. ringflow-switch
# runs in SW with `packet` ports on the two veth ends; ringflow-controller (learning app)
# listens on SW's own loopback, so nothing touches the root namespace. Cases: ping H1 -> H2
# and back through the switch; the flows the controller learned show up in the switch's
# FLOW stats (asked over OpenFlow by OFPROBE, a small client) with in_port/eth_dst matches
# and packet counters that moved; a malformed message and an unsupported match get their
# OpenFlow ERRORs and the connection stays up, CHECK_OVERLAP, FLOW_REMOVED, PORT_STATUS
# (OFPROBE checks); the switch reconnects after the controller restarts and ping works again;
# ovs-ofctl add-flow/dump-flows/del-flows/dump-ports against --listen; fail modes without a
# controller (secure: nothing without flows; standalone: MAC learning). Exit 77 (skip) when not root. Bounded: every
# wait has a deadline; the whole script is killed by ctest's TIMEOUT at worst, and a
# watchdog in its own session removes the namespaces then.
SWITCH=$1 CONTROLLER=$2 PROBE=$3
. "$(dirname "$0")/bed.sh" # the namespaces, cleanup trap and watchdog (shared with the interop tests)
bed_need_root
if [ -n "${SW_CORES:-}" ] && [ "$(nproc)" -lt 2 ]; then
	bed_skip "SW_CORES=$SW_CORES needs 2 CPUs, $(nproc) here"
fi
bed_need ip ping ethtool

H1=rfsa$P SW=rfsw$P H2=rfsb$P
I1=h1$P SA=sa$P SB=sb$P I2=h2$P
IP1=$BED_NET.1 IP2=$BED_NET.2
OFPORT=$((20000 + P % 20000)) LPORT=$((40000 + P % 20000)) # loopback of our own namespace
TMP=$BED_TMP
PIDS=$BED_TMP/pids

bed_ns $H1 $SW $H2
bed_link $H1 $I1 $SW $SA
bed_link $SW $SB $H2 $I2
bed_host $H1 $I1 $IP1/24
bed_host $H2 $I2 $IP2/24

start_controller() {
	bed_bg $SW "$TMP/ctl.log" "$CONTROLLER" --listen 127.0.0.1:$OFPORT --idle adaptive
	CP=$BED_PID
	bed_wait_tcp $SW 127.0.0.1 $OFPORT 5 # up to 5 s for the listener
}

# ping_ok COUNT: H1 -> H2 within a deadline
ping_ok() { bed_ping $H1 $IP2 "$1"; }

start_controller || { fail "controller did not listen on 127.0.0.1:$OFPORT in $SW"; exit 1; }
# a bad --buffers is one line and exit 2, before any port opens
rc=0
ip netns exec $SW "$SWITCH" --port packet:dev=$SA,frames=1 --controller tcp:127.0.0.1:$OFPORT \
	--buffers 100 >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
if [ "$rc" = 2 ] && [ "$(cat "$TMP/bad.err")" = "ringflow-switch: --buffers 100: not in 256..4194304" ]; then
	pass "--buffers 100 refused in one line (exit 2)"
else
	fail "--buffers 100: exit $rc, stderr: $(head -c 300 "$TMP/bad.err")"
fi
# --buffers: a pool smaller than the default still serves both ports
ip netns exec $SW "$SWITCH" --port packet:dev=$SA,frames=1 --port packet:dev=$SB,frames=1 --cores "${SW_CORES:-0}" \
	--controller tcp:127.0.0.1:$OFPORT --listen tcp:127.0.0.1:$LPORT --dpid 0x$P \
	--metrics 127.0.0.1:9464 --buffers 4096 >"$TMP/sw.log" 2>&1 &
SP=$!
echo $SP >>"$PIDS"

# 1. ping through the switch (the first frames go PACKET_IN -> FLOW_MOD/PACKET_OUT)
ok=0
for _ in $(seq 10); do # up to ~10 s for connect + handshake + table-miss flow
	if ping_ok 1; then ok=1; break; fi
	sleep 0.5
done
if [ $ok = 1 ] && ping_ok 5; then pass "ping $IP1 -> $IP2 through ringflow-switch"
else fail "ping through ringflow-switch"; sed 's/^/  sw: /' "$TMP/sw.log"; fi
ip netns exec $H2 ping -q -c 3 -i 0.2 -w 10 $IP1 >/dev/null 2>&1 && pass "ping $IP2 -> $IP1" ||
	fail "ping back"
# Observing it (docs/observing.md): the ports' counters over --metrics (the switch namespace's
# own loopback) and the control socket.
m=$(ip netns exec $SW curl -s --max-time 5 http://127.0.0.1:9464/metrics)
echo "$m" | grep -E "^ringflow_port_rx_packets_total\{[^}]*port=\"$SA\"[^}]*\} [1-9]" >/dev/null &&
	pass "--metrics: the ports' frame counters moved" || fail "--metrics: $(echo "$m" | grep port_rx | head -3)"
if [ -n "${RF_CTL:-}" ]; then
	"$RF_CTL" --json -p $SP stats ports/$SB >"$TMP/ctl" 2>&1 && grep -q tx_pkts "$TMP/ctl" &&
		pass "ringflow-ctl stats ports/$SB" || fail "ringflow-ctl: $(head -c 300 "$TMP/ctl")"
	# The switch's own commands: `ports` (frames counted on both ports) and `flows` (the
	# learned flows, asked of the agent: eth_dst matches whose counters moved, and the
	# table-miss flow with an empty match).
	"$RF_CTL" --json -p $SP ports >"$TMP/ports" 2>&1 && python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert [x["port"] for x in p] == [1, 2], p
assert all(x["rx_packets"] > 0 and x["tx_packets"] > 0 and x["link_up"] for x in p), p' "$TMP/ports" &&
		pass "ringflow-ctl ports: both ports up, frames both ways" ||
		fail "ringflow-ctl ports: $(head -c 300 "$TMP/ports")"
	"$RF_CTL" --json -p $SP flows limit=1000 >"$TMP/flows" 2>&1 && python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))
assert f["count"] == len(f["flows"]) == f["shown"] >= 3, f
assert any(x["priority"] == 0 and x["match"] == "" for x in f["flows"]), f
assert sum(1 for x in f["flows"] if "eth_dst=" in x["match"] and x["packets"] > 0) >= 2, f' "$TMP/flows" &&
		pass "ringflow-ctl flows: the learned flows with moving counters, the table-miss flow" ||
		fail "ringflow-ctl flows: $(head -c 400 "$TMP/flows")"
fi

# 2. the learned flows in the switch's FLOW stats, over OpenFlow (the probe is a second
# controller connection: ringflow-switch takes one controller, so the probe listens and
# a second switch process is not needed: see OFPROBE's usage). Stop the controller first,
# then let the switch reconnect to the probe on the same port.
kill $CP 2>/dev/null; wait $CP 2>/dev/null
out=$(ip netns exec $SW timeout 40 "$PROBE" 127.0.0.1:$OFPORT "ip link set $SB down" 2>&1)
rc=$?
echo "$out" | sed 's/^/  probe: /'
[ $rc = 0 ] && pass "flow stats, errors, connection kept (probe)" || fail "probe exit $rc"

ip -n $SW link set $SB up
# 3. the switch goes back to the controller when it returns: ping again
start_controller || fail "controller restart"
ping_ok 3 && pass "ping after the controller came back" || fail "ping after reconnect"

# 4. ovs-ofctl (a client nobody here wrote) against --listen: dump-flows shows the learned
# flows and the table-miss flow; a flow it adds (cookie 0x77, priority 200) is the flow it reads
# back, its counters move with a ping, del-flows by cookie removes just that one.
if command -v ovs-ofctl >/dev/null; then
	O="ip netns exec $SW timeout 10 ovs-ofctl -O OpenFlow13"
	T=tcp:127.0.0.1:$LPORT
	ping_ok 3 # the first echo may set the flows up again; the others then pass them
	d=$($O dump-flows $T 2>&1)
	echo "$d" | sed 's/^/  ofctl: /'
	# (their counters are checked by the probe above: here a controller reconnect may
	# have set them up again a moment ago)
	echo "$d" | grep -q 'priority=100,in_port=1,dl_dst=' &&
		echo "$d" | grep -q 'priority=100,in_port=2,dl_dst=' &&
		echo "$d" | grep -q 'priority=0 actions=CONTROLLER:65535' &&
		pass "ovs-ofctl dump-flows: the learned flows and the table-miss flow" ||
		fail "ovs-ofctl dump-flows"
	$O add-flow $T "cookie=0x77,priority=200,in_port=1,actions=output:2" 2>&1 |
		sed 's/^/  ofctl: /'
	ping_ok 3
	d=$($O dump-flows $T "cookie=0x77/-1" 2>&1)
	echo "$d" | sed 's/^/  ofctl: /'
	echo "$d" | grep -q 'cookie=0x77, .*priority=200,in_port=1 actions=output:2' &&
		! echo "$d" | grep -q 'n_packets=0,' && pass "ovs-ofctl add-flow: read back, counters moved" ||
		fail "ovs-ofctl add-flow read back"
	$O del-flows $T "cookie=0x77/-1"
	d=$($O dump-flows $T 2>&1)
	! echo "$d" | grep -q 'cookie=0x77' && echo "$d" | grep -q 'priority=100,in_port=1' &&
		pass "ovs-ofctl del-flows by cookie: that flow gone, the others kept" ||
		fail "ovs-ofctl del-flows"
	d=$($O dump-ports $T 2>&1)
	echo "$d" | grep -q 'port  1: rx pkts=[1-9]' && pass "ovs-ofctl dump-ports" ||
		{ fail "ovs-ofctl dump-ports"; echo "$d"; }
else
	echo "skip: ovs-ofctl not installed (openvswitch-common): the --listen cases"
fi

kill $SP 2>/dev/null
for _ in $(seq 50); do kill -0 $SP 2>/dev/null || break; sleep 0.1; done
kill -0 $SP 2>/dev/null && fail "switch did not stop on SIGTERM in 5 s"
wait $SP 2>/dev/null
rc=$?
[ $rc = 0 ] && pass "switch exited 0 on SIGTERM" || fail "switch exit status $rc"
grep -q 'Sanitizer\|runtime error' "$TMP/sw.log" && fail "sanitizer report in the switch's log"
sed 's/^/  sw: /' "$TMP/sw.log" | tail -20

# 5. fail modes, no controller listening (the controller is stopped): secure forwards
# nothing without flows; standalone forwards by MAC learning.
kill $CP 2>/dev/null; wait $CP 2>/dev/null
for mode in secure standalone; do
	ip netns exec $SW "$SWITCH" --port packet:dev=$SA,frames=1 --port packet:dev=$SB,frames=1 --cores "${SW_CORES:-0}" \
		--controller tcp:127.0.0.1:$OFPORT --fail-mode $mode >"$TMP/sw-$mode.log" 2>&1 &
	FP=$!
	echo $FP >>"$PIDS"
	sleep 0.5
	if [ $mode = standalone ]; then
		ping_ok 3 && pass "fail-mode standalone, no controller: ping by MAC learning" ||
			fail "fail-mode standalone ping"
	else
		ip netns exec $H1 ping -q -c 2 -i 0.2 -W 1 $IP2 >/dev/null 2>&1 &&
			fail "fail-mode secure, no controller, no flows: ping went through" ||
			pass "fail-mode secure, no controller, no flows: nothing forwarded"
	fi
	kill $FP 2>/dev/null
	wait $FP 2>/dev/null
	rc=$?
	[ $rc = 0 ] || fail "switch ($mode) exit status $rc"
	grep -q 'Sanitizer\|runtime error' "$TMP/sw-$mode.log" && fail "sanitizer report ($mode)"
done
sed "s/^/  ctl: /" "$TMP/ctl.log" | tail -8
[ $FAILS = 0 ] && { echo "PASS"; exit 0; }
echo "$FAILS failure(s)"
exit 1
