#!/usr/bin/env bash
# tests/openflow/cluster_test.sh: ringflow-controller as a cluster on etcd (docs/cluster.md),
# as root.
#
#   cluster_test.sh SWITCH CONTROLLER
#
# Bed (tests/ofswitch/bed.sh and cluster_bed.sh, which bench/cluster/run.sh shares; every name
# carries the PID): H1 - S1 - S2 - S3 - H2, three ringflow-switches (OpenFlow 1.3) in
# namespaces of their own, each connected to all three controllers. The controllers and a three-member etcd (Debian's /usr/bin/etcd, data under
# the run's mktemp directory) live in namespace C, so their loopback ports are private to the
# run. Controller c3 reaches etcd only through a TCP proxy of the test's (cluster_tool.py),
# which the fencing case kills. Cases: unreachable etcd at start, garbage under the prefix,
# election (one master per switch, one switch per member, confirmed by the switches'
# ROLE_REPLYs), pings, shared hosts and links on every member, ringflow-ctl cluster, kill -9
# of a master (a new master, its time printed against TTL + 1 s; pings kept flowing; the new
# master seeded with the old one's MACs), a fake old master's ROLE_REQUEST refused as stale,
# rejoin and rebalance, fencing, the etcd leader hung (nothing visible), a second member
# (quorum lost: roles kept, a log line, /api/cluster status) and quorum back. Every wait is
# bounded; the bed's trap removes processes, namespaces and etcd's data on any exit. Exit 77
# (skip) without root, etcd, etcdctl or python3.
set -u
SWITCH=$1 CONTROLLER=$2
D=$(cd "$(dirname "$0")" && pwd)
. "$D/../ofswitch/bed.sh"
. "$D/cluster_bed.sh"
bed_need_root
bed_need ip ping ethtool curl python3 etcd etcdctl

TTL=3
line_bed

# ---- etcd: three members on C's loopback (cluster_bed.sh) ---------------------------------
etcd_up && pass "three-member etcd healthy" ||
	{ fail "etcd not healthy in 10 s"; tail -5 "$BED_TMP/etcd1.log"; bed_done; }

# c3 reaches etcd through the proxy (killed by the fencing case)
bed_bg $C "$BED_TMP/proxy.log" python3 "$TOOL" proxy 3379:2379 3479:2479 3579:2579
PROXY=$BED_PID
PROXIED=http://127.0.0.1:3379,http://127.0.0.1:3479,http://127.0.0.1:3579
for p in 3379 3479 3579; do
	bed_wait_tcp $C 127.0.0.1 $p 10 || { fail "the etcd proxy did not listen"; cat "$BED_TMP/proxy.log"; bed_done; }
done

CTL_ETCD[3]=$PROXIED

# unreachable etcd at start: one line, non-zero exit
out=$(ip netns exec $C timeout 10 "$CONTROLLER" --listen 127.0.0.1:6699 --cluster \
	etcd=http://127.0.0.1:1 --node-id x 2>&1)
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] && echo "$out" | grep -q "cannot reach etcd" &&
	pass "unreachable etcd at start: exit $rc, \"$(echo "$out" | grep 'cannot reach' | cut -c1-90)...\"" ||
	fail "unreachable etcd at start: rc $rc, $out"

# garbage under the prefix: ignored with a counted warning
ip netns exec $C etcdctl --endpoints $ENDPOINTS put /rct$P/members/bad 'not json' >/dev/null
ip netns exec $C etcdctl --endpoints $ENDPOINTS put /rct$P/masters/zz c9 >/dev/null

ctls_up || { fail "$CTLS_ERR"; bed_done; }
switches_up

# ---- election ----------------------------------------------------------------------------
t0=$SECONDS
if M=$(wait_masters 15 1 2 3); then
	pass "election: one master per switch, confirmed by the switches, after $((SECONDS - t0)) s: $M"
else
	fail "election: $M"
	view 1 2 3
fi
balanced "$M" && pass "balanced: each member masters one switch" || fail "balance: $M"
grep -q "ignored /rct$P/members/bad" "$BED_TMP/c1.log" && grep -q "ignored /rct$P/masters/zz" "$BED_TMP/c1.log" &&
	pass "garbage values under the prefix ignored with a counted warning" ||
	fail "no warning for the garbage values"

bed_reach $H1 $BED_NET.2 20 "ping H1 -> H2 across three switches under the cluster" || view 1 2 3
# ---- shared state: every member's REST shows both hosts and all four links --------------
m1=$(bed_mac_of $H1 h$P) m2=$(bed_mac_of $H2 h$P)
shared=no
for _ in $(seq 60); do # 12 s bound: LLDP rounds, one publish and one resync
	ip netns exec $H2 ping -q -c 1 -W 1 $BED_NET.1 >/dev/null 2>&1
	ok=0
	for i in 1 2 3; do
		h=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[$i]}/api/hosts)
		l=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[$i]}/api/links)
		echo "$h" >"$BED_TMP/hosts$i.json"
		echo "$l" >"$BED_TMP/links$i.json"
		python3 -c "
import json,sys
h=json.load(open('$BED_TMP/hosts$i.json')); l=json.load(open('$BED_TMP/links$i.json'))
at={x['mac']:(int(x['dpid'],16),x['port']) for x in h}
ls=sorted('%d:%d-%d:%d'%(int(x['src']['dpid'],16),x['src']['port'],int(x['dst']['dpid'],16),x['dst']['port']) for x in l)
sys.exit(0 if at.get('$m1')==(1,1) and at.get('$m2')==(3,2) and ls==['1:2-2:1','2:1-1:2','2:2-3:1','3:1-2:2'] else 1)" 2>/dev/null && ok=$((ok + 1))
	done
	[ $ok = 3 ] && { shared=yes; break; }
	sleep 0.2
done
[ $shared = yes ] && pass "shared state: every member's /api/hosts has H1 at 1:1 and H2 at 3:2, /api/links the four links" ||
	{ fail "shared state"; for i in 1 2 3; do echo "  c$i hosts: $(cat "$BED_TMP/hosts$i.json")"; echo "  c$i links: $(cat "$BED_TMP/links$i.json")"; done; }

if [ -n "${RF_CTL:-}" ]; then # the control socket's cluster command: the same view
	"$RF_CTL" --json -p "${CPIDS[1]}" cluster >"$BED_TMP/ctl.json" 2>&1 && python3 -c "
import json,sys
j=json.load(open('$BED_TMP/ctl.json'))
sys.exit(0 if j['node']=='c1' and len(j['masters'])==3 and len(j['members'])==3 else 1)" &&
		pass "ringflow-ctl cluster: c1's members and masters" ||
		{ fail "ringflow-ctl cluster"; head -c 400 "$BED_TMP/ctl.json"; }
fi

# ---- failover: kill -9 the master of S2 ---------------------------------------------------
s2=$(echo "$M" | tr ' ' '\n' | grep '^0000000000000002:')
victim=${s2#*:}
victim=${victim%%:*}
oldgen=${s2##*:}
v=${victim#c}
[ -n "$victim" ] && [ -n "${CPIDS[$v]:-}" ] || { fail "no master of S2 to kill in '$M'"; bed_done; }
others=$(echo 1 2 3 | tr ' ' '\n' | grep -v "^$v$" | tr '\n' ' ')
# control for the seeding check below: the survivors do not know S2's MACs yet
for o in $others; do
	ip netns exec $C curl -s -m 3 http://127.0.0.1:${REST[$o]}/api/flows/0000000000000002 >"$BED_TMP/pre$o.json"
	python3 -c "
import json,sys
j=json.load(open('$BED_TMP/pre$o.json'))
sys.exit(0 if {'$m1','$m2'} & {e['eth_dst'] for e in j['learned_macs']['entries']} else 1)" 2>/dev/null &&
		fail "c$o knew S2's MACs before being its master: the seeding check would prove nothing"
done
ip netns exec $H1 ping -q -c 50 -i 0.1 -w 15 $BED_NET.2 >"$BED_TMP/ping_fo.txt" 2>&1 &
PINGP=$!
sleep 0.5
t0=$(date +%s%N)
kill -9 "${CPIDS[$v]}"
newm=""
for _ in $(seq 100); do # 10 s bound; the expectation is TTL + 1 s
	M2=$(masters_now $others) &&
		newm=$(echo "$M2" | tr ' ' '\n' | grep '^0000000000000002:' | grep -v ":$victim:") && break
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
# the new master's own clock: how long ago it decided (takes the test's polling out)
nn=${newm#*:}
nn=${nn%%:*}
decided=$(decided_ms ${nn#c} 0000000000000002 $t0)
wait $PINGP
recv=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' "$BED_TMP/ping_fo.txt")
# Timing never decides a test (CONVENTIONS): the time is printed, and flagged when over
# the issue's TTL + 1 s (a loaded machine can exceed it; docs/cluster.md has the figures).
if [ -n "$newm" ]; then
	pass "failover: S2 from $victim to ${newm#*:}: decided $decided ms after the kill, confirmed by the switch as seen by the test after $ms ms (target TTL + 1 s = $((TTL + 1)) s$(
		[ $ms -gt $(((TTL + 1) * 1000)) ] && echo ": OVER, on this loaded machine"))"
else
	fail "failover: new master of S2 '${newm}' after $ms ms"
	view $others
fi
newgen=${newm##*:}
[ -n "$newgen" ] && [ "$newgen" -gt "$oldgen" ] && pass "generation id grew: $oldgen -> $newgen" ||
	fail "generation id: $oldgen -> $newgen"
[ "${recv:-0}" -ge 45 ] && pass "pings kept flowing through the failover: $recv/50 answered" ||
	{ fail "pings during failover: ${recv:-0}/50"; cat "$BED_TMP/ping_fo.txt"; }

# the new master learned S2's MACs from the cluster (its handler was seeded), not from
# PACKET_INs: the pings go through the flows the old master installed
seeded=no
for _ in $(seq 25); do
	ip netns exec $C curl -s -m 3 http://127.0.0.1:${REST[${nn#c}]}/api/flows/0000000000000002 >"$BED_TMP/flows2.json"
	python3 -c "
import json,sys
j=json.load(open('$BED_TMP/flows2.json'))
macs={e['eth_dst'] for e in j['learned_macs']['entries']}
sys.exit(0 if {'$m1','$m2'} <= macs else 1)" 2>/dev/null && { seeded=yes; break; }
	sleep 0.2
done
[ $seeded = yes ] && pass "the new master of S2 knows H1's and H2's MACs without relearning (seeded from the cluster)" ||
	{ fail "new master's MAC table for S2"; head -c 600 "$BED_TMP/flows2.json"; echo; }

# ---- stale generation: a fake old master replays its ROLE_REQUEST ------------------------
out=$(ip netns exec rcs2$P timeout 10 python3 "$TOOL" stale 127.0.0.1 6640 "$oldgen" 2>&1) &&
	pass "a fake old master's ROLE_REQUEST (generation $oldgen) refused: $out" ||
	fail "stale ROLE_REQUEST: $out"

# ---- rejoin and rebalance ----------------------------------------------------------------
ofc_start $v
t0=$SECONDS
wait_rejoin 20 $victim && pass "$victim rejoined and took its share back after $((SECONDS - t0)) s: $M3" ||
	{ fail "rejoin: $M3"; view 1 2 3; }
bed_reach $H1 $BED_NET.2 10 "ping H1 -> H2 after the rebalance" || view 1 2 3

# ---- fencing: c3 cut from etcd, still connected to the switches --------------------------
s3=$(echo "$M3" | tr ' ' '\n' | grep ':c3:')
d3=${s3%%:*}
kill -9 $PROXY
t0=$(date +%s%N)
fenced=no
for _ in $(seq 60); do
	ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[3]}/api/cluster >"$BED_TMP/c3.json"
	if python3 -c "
import json,sys
j=json.load(open('$BED_TMP/c3.json'))
s=[x for x in j['switches'] if x['dpid']=='$d3']
f=j.get('last_fencing')
sys.exit(0 if j['status']=='fenced' and s and s[0]['role']=='slave' and s[0]['switch_says']=='slave' and f else 1)" 2>/dev/null; then
		fenced=yes
		break
	fi
	sleep 0.1
done
ms=$((($(date +%s%N) - t0) / 1000000))
# The member's own record of when its I/O poller sent the demotion, counted from its last
# lease renewal: the lease cannot expire on etcd's side before renewal + TTL.
after=$(python3 -c "import json; print(json.load(open('$BED_TMP/c3.json'))['last_fencing']['after_renewal_ms'])" 2>/dev/null)
[ $fenced = yes ] && [ -n "$after" ] && [ "$after" -lt $((TTL * 1000)) ] &&
	pass "fencing: c3 cut from etcd demoted itself to SLAVE on $d3 (the switch confirms) $after ms after its last renewal, before its $TTL s lease can expire (seen by the test after $ms ms)" ||
	{ fail "fencing: $fenced, demoted ${after:-?} ms after renewal"; cat "$BED_TMP/c3.json"; }
if M4=$(wait_masters 8 1 2); then
	echo "$M4" | grep -q ":c3:" && fail "c3's switch still has c3 as master: $M4" ||
		pass "the others took $d3 over: $M4"
else
	fail "after fencing: $M4"
fi

# ---- one etcd member stops, then a second (quorum lost) -----------------------------------
# The baseline is taken once the takeover has ended for the slaves too (their ROLE_REQUEST
# with the new generation answered) and every switch is connected to both members again (a
# switch's reconnect backoff after c2's restart reaches 8 s), or a late ROLE_REQUEST would
# count as a change below.
before=$(wait_settled 20 1 2) || { fail "not settled after the takeover: $before"; view 1 2; }
members_json() { # /api/cluster of members 1 and 2, one line each (empty: no answer)
	for i in 1 2; do ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[$i]}/api/cluster | tr -d '\n'; echo; done
}
rq() { # role_requests each member has sent, summed: unchanged means no demotion and back
	members_json |
		python3 -c 'import json,sys; print(sum(s["role_requests"] for l in sys.stdin if l.strip() for s in json.loads(l)["switches"]))'
}
rq_detail() { # which member sent ROLE_REQUESTs to which switch, and any fencing (failure output)
	members_json | python3 -c 'import json,sys
for n, l in enumerate(sys.stdin, 1):
	try:
		j = json.loads(l)
	except ValueError:
		print("  c%d: no answer" % n)
		continue
	print("  c%d: " % n + " ".join("%s conn=%s req=%s refused=%s" % (s["dpid"][-4:], s["connected"], s["role_requests"], s["refused"]) for s in j["switches"]) + " last_fencing=%s" % j.get("last_fencing"))'
}
rq0=$(rq)
rqd0=$(rq_detail)
# one of three etcd members hangs, the leader, and it is the member c1 talks to (the worst
# case: SIGSTOP, so requests to it wait for their timeout; the others elect a new leader after
# their election timeout, and hold keepalives forwarded to it meanwhile, so c1's first
# renewal finds every member silent): nothing visible (a lease period later: same roles, ok)
ep1=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[1]}/api/cluster |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["etcd"].rsplit(":", 1)[1])' 2>/dev/null)
K1=""
for i in 1 2 3; do [ "${ECL[$i]}" = "$ep1" ] && K1=$i; done
[ -n "$K1" ] && etcd_move_leader $K1 || { fail "cannot make c1's etcd member (port '$ep1') the leader"; K1=$(etcd_leader); }
[ -n "$K1" ] || { fail "no etcd member says it leads"; K1=3; }
K2=$((K1 % 3 + 1))
kill -STOP "${EPIDS[$K1]}"
sleep 2 # six keepalive periods (TTL/10 each)
one=$(masters_now 1 2)
st1=$(members_json | python3 -c 'import json,sys
for l in sys.stdin:
	try:
		print(json.loads(l)["status"])
	except ValueError:
		pass' | sort -u | tr '\n' ' ')
[ "$one" = "$before" ] && [ "$st1" = "ok " ] && [ "$(rq)" = "$rq0" ] &&
	pass "one etcd member of three hung (the leader, e$K1, c1's member): nothing visible for 2 s (status ok, same roles, no ROLE_REQUEST)" ||
	{ fail "one etcd member hung: status '$st1', $before -> $one"; view 1 2;
	  echo "  ROLE_REQUESTs before:"; echo "$rqd0"; echo "  after:"; rq_detail; }
# A second member is killed while the leader is still hung: quorum lost, with one member that
# answers (no leader), one that refuses and one that holds every request until its timeout.
# (The hung one is killed and started again at the end, not resumed: in one run, a lease kept
# alive throughout expired soon after a paused leader resumed.)
nolead0=$(grep -c "etcd has no leader (quorum lost" "$BED_TMP/c1.log") # the election above
kill -9 "${EPIDS[$K2]}"
lost=no
for _ in $(seq 80); do
	st=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[1]}/api/cluster | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
	[ "$st" = quorum_lost ] && { lost=yes; break; }
	sleep 0.1
done
[ $lost = yes ] && [ "$(grep -c "etcd has no leader (quorum lost" "$BED_TMP/c1.log")" -gt "$nolead0" ] &&
	pass "quorum loss: /api/cluster status quorum_lost and a log line" ||
	{ fail "quorum loss not reported (status $st)"; tail -5 "$BED_TMP/c1.log"; }
sleep $((TTL + 1)) # past a lease's life: roles must still be the same
during=$(masters_now 1 2)
rq1=$(rq)
[ "$during" = "$before" ] && [ "$rq0" = "$rq1" ] &&
	pass "roles kept through quorum loss for $((TTL + 1)) s, no ROLE_REQUEST sent: $during" ||
	{ fail "roles changed during quorum loss: $before -> $during, ROLE_REQUESTs $rq0 -> $rq1"; view 1 2;
	  echo "  ROLE_REQUESTs before:"; echo "$rqd0"; echo "  after:"; rq_detail; }
bed_reach $H1 $BED_NET.2 10 "ping H1 -> H2 without etcd quorum"
kill -9 "${EPIDS[$K1]}"
etcd_start $K1
etcd_start $K2
back=no
for _ in $(seq 100); do
	st=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[1]}/api/cluster | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)
	[ "$st" = ok ] && { back=yes; break; }
	sleep 0.1
done
[ $back = yes ] && pass "quorum back: status ok" || fail "quorum back: status $st"

# ---- the end -----------------------------------------------------------------------------
for i in 1 2 3; do
	[ -n "${CPIDS[$i]:-}" ] && kill -0 "${CPIDS[$i]}" 2>/dev/null || continue
	bed_stop "${CPIDS[$i]}"
	rc=$?
	[ $rc = 0 ] || fail "controller c$i exit status $rc on SIGTERM"
	grep -q 'Sanitizer\|runtime error' "$BED_TMP/c$i.log" && fail "sanitizer report in c$i's log"
done
for i in 1 2 3; do sed "s/^/  c$i: /" "$BED_TMP/c$i.log" | grep -i cluster | tail -6; done
bed_done
