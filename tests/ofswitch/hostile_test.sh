#!/usr/bin/env bash
# tests/ofswitch/hostile_test.sh: ringflow-switch under hostile traffic (issue 25): a table-miss
# flood and a tuple-space explosion attack beside a stream that matches an installed flow.
#
#   hostile_test.sh SWITCH RF_CTL [N]
#
# Bed (made for this run, names carry the PID): H1 --veth-- SW --veth-- H2, ringflow-switch
# in SW with `packet` ports on the two veth ends, its controller hostile.py (a minimal
# OpenFlow controller) on SW's own loopback. The controller installs the table-miss flow
# (to the controller), the stream's forwarding flow (port 1 -> 2) and 16 drop flows of 16
# distinct ipv4_src masks; H1 then sends N (default 200000) distinct frames (hostile.py
# flood: random MACs, addresses and ports, half of them crafted as in Csikor et al.'s
# tuple-space explosion, each a new megaflow of one of 24 masks in a megaflow cache) with
# every 10th frame one of the stream. From the switch's own counters (ringflow-ctl), not
# timing:
#   A. rate limit on (--packet-in-rate 500,100), the controller reading: every stream frame
#      the switch received was forwarded (the stream flow's packets == port 2's tx), the
#      PACKET_INs sent <= 500 * seconds since the switch started + 100 (and some were dropped
#      by the limit, counted), the controller got no more than the switch sent; the
#      classifier's subtables and flows are the same before and after (no mask, no flow and
#      no cache entry is made by traffic), and VmRSS grew by less than 64 MiB;
#   B. no rate limit, a controller that never reads after its flows: the same flood; the
#      stream is still all forwarded, VmRSS grows by less than 64 MiB (PACKET_INs that do
#      not fit the connection's socket are dropped and counted, drop_busy), the switch exits 0.
# Exit 77 (skip) when not root. Every wait is bounded; a watchdog in its own session removes
# the namespaces if the script is killed.
SWITCH=$1 RF_CTL=$2 N=${3:-200000}
HOSTILE="$(dirname "$0")/hostile.py"
. "$(dirname "$0")/bed.sh" # the namespaces, cleanup trap and watchdog (shared with the other switch tests)
bed_need_root
bed_need ip ethtool python3 curl

H1=rfha$P SW=rfhw$P H2=rfhb$P
I1=hh1$P SA=hsa$P SB=hsb$P I2=hh2$P
TMP=$BED_TMP
RATE=500 BURST=100 MASKS=16 RSS_MAX_KIB=$((64 * 1024)) MPORT=9464

bed_ns $H1 $SW $H2
bed_link $H1 $I1 $SW $SA
bed_link $SW $SB $H2 $I2
bed_host $H1 $I1 $BED_NET.1/24
bed_host $H2 $I2 $BED_NET.2/24

now() { date +%s.%N; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# ctl_json PID WHAT...: ringflow-ctl --json, into stdout ("" on failure)
ctl_json() { local p=$1; shift; "$RF_CTL" --json -p "$p" "$@" 2>/dev/null; }
# counters PID: one line of "key=value" from the switch's own counters
counters() {
	local p=$1
	ctl_json "$p" stats app >"$TMP/app.json"
	ctl_json "$p" ports >"$TMP/ports.json"
	ctl_json "$p" flows limit=100 >"$TMP/flows.json"
	python3 - "$TMP/app.json" "$TMP/ports.json" "$TMP/flows.json" <<'PY'
import json, sys
def walk(o, pre=""):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from walk(v, pre + "/" + k if pre else k)
    else:
        yield pre, o
app = dict(walk(json.load(open(sys.argv[1]))))
def get(suffix):
    for k, v in app.items():
        if k.endswith(suffix):
            return v
    return -1
ports = json.load(open(sys.argv[2]))
flows = json.load(open(sys.argv[3]))
stream = sum(f["packets"] for f in flows["flows"] if f["priority"] == 100)
print("subtables=%d flows=%d pin_sent=%d pin_drop_rate=%d pin_drop_busy=%d rx1=%d tx2=%d "
      "stream=%d" % (get("switch_subtables"), get("switch_flows"), get("packet_in/sent"),
                     get("packet_in/drop_rate"), get("packet_in/drop_busy"),
                     ports[0]["rx_packets"], ports[1]["tx_packets"], stream))
PY
}
val() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }
# settle PID: until port 1's rx count stops moving (the switch has drained its queues), 10 s
settle() {
	local last=-1 c
	for _ in $(seq 20); do
		c=$(val "$(counters "$1")" rx1)
		[ "$c" = "$last" ] && return 0
		last=$c
		sleep 0.5
	done
}

# run_phase NAME MODE RATE_OPT: controller, switch, flood; leaves BEFORE/AFTER/T0/T1/FLOOD/SP
run_phase() {
	local name=$1 mode=$2 rate=$3 port=$((20000 + (P + RANDOM) % 20000))
	: >"$TMP/ctl_$name.out"
	bed_bg $SW "$TMP/ctl_$name.log" python3 "$HOSTILE" ctl $port $MASKS "$mode" 60 "$TMP/ctl_$name.out"
	CP=$BED_PID
	for _ in $(seq 50); do grep -q listening "$TMP/ctl_$name.out" && break; sleep 0.1; done
	T0=$(now)
	bed_bg $SW "$TMP/sw_$name.log" "$SWITCH" --port packet:dev=$SA,frames=1 \
		--port packet:dev=$SB,frames=1 --cores "${SW_CORES:-0}" \
		--controller tcp:127.0.0.1:$port --packet-in-rate "$rate" --stats-interval 1 \
		--metrics 127.0.0.1:$MPORT
	SP=$BED_PID
	for _ in $(seq 100); do grep -q ready "$TMP/ctl_$name.out" && break; sleep 0.1; done
	grep -q ready "$TMP/ctl_$name.out" || { fail "$name: the controller's flows were not installed"; return 1; }
	BEFORE=$(counters $SP)
	RSS0=$(rss_kib $SP)
	FLOOD=$(ip netns exec $H1 timeout 150 python3 "$HOSTILE" flood $I1 "$N" 10 $P)
	settle $SP
	AFTER=$(counters $SP)
	RSS1=$(rss_kib $SP)
	T1=$(now)
	echo "  $name: flood: $FLOOD"
	echo "  $name: before: $BEFORE rss ${RSS0} KiB"
	echo "  $name: after:  $AFTER rss ${RSS1} KiB"
}

check_common() {
	local name=$1
	local stream tx2 sent
	stream=$(val "$AFTER" stream) tx2=$(val "$AFTER" tx2)
	sent=$(echo "$FLOOD" | awk '{print $4}')
	[ "$stream" -gt 0 ] && [ "$stream" = "$tx2" ] &&
		pass "$name: every stream frame the switch received was forwarded ($stream of $sent sent)" ||
		fail "$name: stream flow matched $stream, port 2 sent $tx2"
	[ "$(val "$BEFORE" subtables)" = "$(val "$AFTER" subtables)" ] &&
		[ "$(val "$BEFORE" flows)" = "$(val "$AFTER" flows)" ] &&
		[ "$(val "$AFTER" flows)" = $((MASKS + 2)) ] &&
		pass "$name: subtables $(val "$AFTER" subtables) and flows $(val "$AFTER" flows) unchanged by the flood" ||
		fail "$name: subtables/flows before: $BEFORE after: $AFTER"
	[ $((RSS1 - RSS0)) -lt $RSS_MAX_KIB ] &&
		pass "$name: VmRSS $RSS0 -> $RSS1 KiB (bound +$RSS_MAX_KIB)" ||
		fail "$name: VmRSS grew from $RSS0 to $RSS1 KiB"
}

# A. rate-limited PACKET_IN, a reading controller
if run_phase a read $RATE,$BURST; then
	check_common a
	m=$(ip netns exec $SW curl -s --max-time 5 http://127.0.0.1:$MPORT/metrics)
	echo "$m" | grep -E '^ringflow_switch_packet_in_drop_rate_total\{[^}]*conn="0"[^}]*\} [1-9]' >/dev/null &&
		echo "$m" | grep -E '^ringflow_switch_subtables(\{[^}]*\})? 18$' >/dev/null &&
		pass "a: --metrics: the PACKET_IN drops of connection 0, 18 subtables" ||
		fail "a: --metrics: $(echo "$m" | grep -E 'packet_in|subtables' | head -4)"
	bed_stop $SP
	rc=$?
	T1=$(now) # the switch is gone: no PACKET_IN after this
	[ $rc = 0 ] && pass "a: switch exited 0" || fail "a: switch exit status $rc"
	# its last line: "flows N subtables N; packet_in: sent N drop: rate N busy N (...)"
	pin=$(sed -n 's/.*packet_in: sent \([0-9]*\) drop: rate.*/\1/p' "$TMP/sw_a.log" | tail -1)
	drop=$(sed -n 's/.*packet_in: sent [0-9]* drop: rate \([0-9]*\) .*/\1/p' "$TMP/sw_a.log" | tail -1)
	grep "packet_in: sent" "$TMP/sw_a.log" | tail -2 | sed 's/^/  a: /' # --stats-interval 1, the exit line
	bound=$(python3 -c "print(int($RATE * ($T1 - $T0)) + $BURST)")
	[ -n "$pin" ] && [ "$pin" -le "$bound" ] && [ "$drop" -gt 0 ] &&
		pass "a: PACKET_INs sent $pin <= $RATE/s * $(python3 -c "print(round($T1 - $T0, 1))") s + $BURST = $bound, $drop dropped by the limit" ||
		fail "a: PACKET_INs sent '$pin' (bound $bound), dropped by the limit '$drop'"
	kill $CP 2>/dev/null; wait $CP 2>/dev/null
	for _ in $(seq 50); do grep -q packet_ins "$TMP/ctl_a.out" && break; sleep 0.1; done
	got=$(awk '/packet_ins/ {print $2}' "$TMP/ctl_a.out")
	[ -n "$got" ] && [ "$got" -le "$pin" ] &&
		pass "a: the controller received $got PACKET_INs (<= $pin sent)" ||
		fail "a: the controller received '${got}', the switch sent $pin"
fi

# B. no rate limit, a controller that never reads
if run_phase b deaf 0; then
	check_common b
	# What the deaf controller's socket took is bounded by the kernel's buffers; the rest
	# was dropped without waiting (drop_busy), or the connection was closed.
	echo "  b: PACKET_INs sent $(val "$AFTER" pin_sent), dropped (socket full) $(val "$AFTER" pin_drop_busy)"
	bed_stop $SP
	rc=$?
	[ $rc = 0 ] && pass "b: switch exited 0 with a deaf controller" || fail "b: switch exit status $rc"
	kill $CP 2>/dev/null; wait $CP 2>/dev/null
fi
[ $FAILS = 0 ] || { sed 's/^/  sw: /' "$TMP"/sw_*.log; sed 's/^/  ctl: /' "$TMP"/ctl_*.log; }
bed_done
