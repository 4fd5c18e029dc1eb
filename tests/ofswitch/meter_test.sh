#!/usr/bin/env bash
# tests/ofswitch/meter_test.sh: meters end to end through ovs-ofctl, as root (issue 25).
#
# Bed (bed.sh; names carry the PID): H1 --veth-- SW --veth-- H2, ringflow-switch in SW with
# --listen only. ovs-ofctl adds a meter (10 pkt/s, burst 10, drop), a second ADD of it must
# fail (METER_EXISTS), a flow naming a missing meter must fail (UNKNOWN_METER); a flow
# H1 -> H2 through the meter and one back; 40 pings at 50/s from H1 must lose some and not
# all (-c without -w: exactly 40 sent; the meter drops what its bucket has no room for; how
# many is timing, so only that),
# and the meter's stats must count the frames in and the band's drops; dump-meters and
# meter-features answer; DELETE of the meter removes its flow and keeps the other. Exit 77
# (skip) when not root or without ovs-ofctl. Every wait has a deadline; the bed's trap and
# watchdog remove the namespaces on any exit.
set -u
SWITCH=$1
D=$(dirname "$0")
# shellcheck source=bed.sh
. "$D/bed.sh"
bed_need_root
bed_need ip ping ethtool timeout ovs-ofctl

H1=rma$P SW=rms$P H2=rmb$P
SA=ma$P SB=mb$P
IP2=$BED_NET.2
LP=6640 # on SW's own loopback
bed_ns "$H1" "$SW" "$H2"
bed_link "$H1" "h1$P" "$SW" "$SA"
bed_link "$SW" "$SB" "$H2" "h2$P"
bed_host "$H1" "h1$P" "$BED_NET.1/24"
bed_host "$H2" "h2$P" "$IP2/24"
bed_switch "$SW" "$BED_TMP/sw.log" 0x$P $LP "" "$SA" "$SB"
bed_wait_tcp "$SW" 127.0.0.1 $LP 20 || { fail "ringflow-switch did not listen"; bed_done; }
ofctl() { local cmd=$1; shift; ip netns exec "$SW" timeout 10 ovs-ofctl -O OpenFlow13 "$cmd" tcp:127.0.0.1:$LP "$@"; }

ofctl add-meter 'meter=1,pktps,burst,stats,bands=type=drop,rate=10,burst_size=10' &&
	pass "add-meter" || fail "add-meter"
out=$(ofctl add-meter 'meter=1,pktps,bands=type=drop,rate=10' 2>&1)
echo "$out" | grep -qi "METER_EXISTS\|meter exists" && pass "a second ADD: METER_EXISTS" ||
	fail "a second ADD: $out"
out=$(ofctl add-flow 'in_port=1,actions=meter:2,output:2' 2>&1)
echo "$out" | grep -qi "UNKNOWN_METER\|unknown meter\|METER_MOD_FAILED" &&
	pass "a flow naming a missing meter is refused" || fail "missing meter: $out"
ofctl add-flow 'priority=10,in_port=1,actions=meter:1,output:2' &&
	ofctl add-flow 'priority=10,in_port=2,actions=output:1' && pass "flows" || fail "flows"
ofctl dump-flows | grep -q 'meter:1' && pass "dump-flows shows meter:1" ||
	fail "dump-flows: $(ofctl dump-flows)"

ip netns exec "$H1" ping -q -c 40 -i 0.02 -W 1 "$IP2" >"$BED_TMP/ping" 2>&1
got=$(grep -o '[0-9]* received' "$BED_TMP/ping" | cut -d' ' -f1)
[ -n "$got" ] && [ "$got" -gt 0 ] && [ "$got" -lt 40 ] && pass "the meter passed $got of 40 echoes" ||
	fail "the meter passed ${got:-?} of 40 echoes"
stats=$(ofctl meter-stats)
echo "$stats" | sed 's/^/  /'
in=$(echo "$stats" | grep -o 'packet_in_count:[0-9]*' | head -1 | cut -d: -f2)
drop=$(echo "$stats" | grep -o '0: *packet_count:[0-9]*' | head -1 | grep -o '[0-9]*$')
[ "${in:-0}" -ge 40 ] && [ "${drop:-0}" -gt 0 ] && [ "${drop:-0}" -lt "${in:-0}" ] &&
	pass "meter stats: $in in, $drop dropped by the band" || fail "meter stats: in ${in:-?} drop ${drop:-?}"
ofctl dump-meters | grep -q 'meter=1 pktps burst stats bands=' && pass "dump-meters" ||
	fail "dump-meters: $(ofctl dump-meters)"
ofctl meter-features | grep -qi 'max_meter:4096' && pass "meter-features" ||
	fail "meter-features: $(ofctl meter-features)"

ofctl del-meter 'meter=1' && pass "del-meter" || fail "del-meter"
flows=$(ofctl dump-flows)
echo "$flows" | grep -q 'meter' && fail "the meter's flow is still there: $flows" ||
	pass "the meter's flow went with it"
echo "$flows" | grep -q 'in_port=2' && pass "the other flow stayed" || fail "other flow: $flows"
kill -0 "$BED_PID" 2>/dev/null && pass "ringflow-switch runs" || fail "ringflow-switch died"
grep -q 'Sanitizer\|runtime error' "$BED_TMP/sw.log" && fail "sanitizer report: $(head -20 "$BED_TMP/sw.log")"
bed_done
