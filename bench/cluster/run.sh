#!/usr/bin/env bash
# bench/cluster/run.sh: the controller cluster's benchmark (issue 26, docs/cluster.md), as root.
#
#   bench/cluster/run.sh [--build DIR] [--rounds N] [--tp-rounds N] [--puts N] [--quick]
#
# The bed is tests/openflow/cluster_test.sh's (tests/openflow/cluster_bed.sh): a three-member
# etcd and three controllers (--lease-ttl 3, pinned to CPU 1) in namespace C, H1 - S1 - S2 -
# S3 - H2 with three ringflow-switches (CPU 0), each connected to every controller. Every name
# carries the PID; bed.sh's trap and watchdog remove processes, namespaces and etcd's data on
# any exit, and the whole run is bounded (LIMIT s).
#
# Failover, --rounds N (20): kill -9 the master of S2 (by its PID) and time, from the kill,
#   packet_in  the first probe frame sent after the kill that reaches H2: H1 sends one every
#              10 ms, each to a MAC no switch knows, so S2 forwards it only on its new
#              master's PACKET_OUT answering its PACKET_IN (S1's and S3's masters live on);
#   ping       the first reply of a ping H1 -> H2 started at the kill, H1 having a new MAC and
#              both hosts empty ARP caches: ARP and echo go through a path learned anew, the
#              reply crossing S2 only once its new master knows H1's new MAC;
#   decided    when the new master decided it is S2's master (its wall clock, /api/cluster);
#   then restarts the killed member and waits until it has its share back.
# Throughput, --tp-rounds N (3): ringflow-ofbench (CPU 0; throughput mode, 48 switches, 100
#   MACs each) against c1 alone, then against c1,c2,c3 (switch i to member i mod 3: each the
#   only member, hence master, of a third), interleaved rounds; PACKET_IN answers per second.
#   S1-S3 are stopped first (ofbench's datapath ids are 1..48).
# etcd, --puts N (2000): N puts of 64-byte values through etcd's JSON gateway, one keep-alive
#   connection (as the cluster thread writes: one call after another) and eight.
# --quick (ctest bench_cluster_quick): 2 failover rounds, 1 throughput round of 1 s without
# warm-up, 200 puts.
# Output: per-round JSON lines and a summary line per case (bench, impl, case, value = median,
# unit, min, max, n, steal and busy deltas) on stdout; progress and a table on stderr. The
# answers are checked (a new master each round, probes and pings through, ofbench answered,
# every put acknowledged): exit 1 on a failure, 77 (skip) without root, etcd or python3.
# Figures from a loaded machine mean nothing (docs/cluster.md says how to read them).
set -u
R=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$R/build ROUNDS=20 TP_ROUNDS=3 TP_SECS=2 PUTS=2000 QUICK=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--tp-rounds) TP_ROUNDS=$2; shift ;;
	--puts) PUTS=$2; shift ;;
	--quick) QUICK=1 ;;
	*) echo "usage: $0 [--build DIR] [--rounds N] [--tp-rounds N] [--puts N] [--quick]" >&2; exit 2 ;;
	esac
	shift
done
TP_WARM=1
[ $QUICK = 1 ] && ROUNDS=2 TP_ROUNDS=1 TP_SECS=1 TP_WARM=0 PUTS=200
for v in "$ROUNDS" "$TP_ROUNDS" "$PUTS"; do
	case $v in '' | *[!0-9]*) echo "$0: counts are numbers" >&2; exit 2 ;; esac
done
SWITCH=$BUILD/apps/ofswitch/ringflow-switch
CONTROLLER=$BUILD/apps/openflow/controller/ringflow-controller
OFB=$BUILD/apps/openflow/ofbench/ringflow-ofbench
for b in "$SWITCH" "$CONTROLLER" "$OFB"; do
	[ -x "$b" ] || { echo "$0: $b missing: build first (make build)" >&2; exit 1; }
done
. "$R/tests/ofswitch/bed.sh"
. "$R/tests/openflow/cluster_bed.sh"
. "$R/bench/lib/stat.sh"
bed_need_root
bed_need ip ping ethtool curl python3 etcd etcdctl taskset

# the whole run's bound: 40 s a failover round, 10 s a throughput run, 60 s of etcd, setup
LIMIT=$((90 + 40 * ROUNDS + 2 * TP_ROUNDS * (TP_SECS * 3 + 10) + 60))
# (ends within a second of the script: no sleeper outlives the run)
(for _ in $(seq $LIMIT); do sleep 1; kill -0 $P || exit 0; done; kill -TERM $P) </dev/null >/dev/null 2>&1 9>&- &
T0=$SECONDS
log() { echo "[$((SECONDS - T0)) s] $*" >&2; }
die() { fail "$*"; bed_done; }

TTL=3
CTL_OPTS=(--cores 1 --max-conns-per-source 64) # 48 ofbench switches from one address
line_bed
# H1's ARP retries every 50 ms (not 1 s), so the ping's time is the network's, not ARP's timer
ip netns exec $H1 sysctl -qw net.ipv4.neigh.h$P.retrans_time_ms=50 net.ipv4.neigh.h$P.mcast_solicit=200
etcd_up || die "etcd not healthy in 10 s: $(tail -2 "$BED_TMP/etcd1.log")"
ctls_up || die "$CTLS_ERR"
switches_up
M=$(wait_masters 20 1 2 3) || { # which member, and whether its process is still there
	for i in 1 2 3; do echo "  $(ctl_state $i 2)"; done
	die "no election: $M"
}
bed_reach $H1 $BED_NET.2 20 "ping H1 -> H2 under the cluster" || die "no path H1 -> H2"
log "bed up: masters $M"

# summary CASE UNIT CPU0 CPU1 VALUE...: the JSON line (median, min, max) and a table row
TABLE=()
summary() {
	local c=$1 u=$2 c0=$3 c1=$4
	shift 4
	[ $# -gt 0 ] || return 0
	local s n
	s=$(printf '%s\n' "$@" | sort -g)
	n=$#
	local med min max
	med=$(echo "$s" | sed -n "$(((n + 1) / 2))p") min=$(echo "$s" | head -1) max=$(echo "$s" | tail -1)
	echo "{\"bench\":\"cluster\",\"impl\":\"ringflow\",\"case\":\"$c\",\"value\":$med,\"unit\":\"$u\",\"min\":$min,\"max\":$max,\"n\":$n,$(cpu_json "$c0" "$c1" load)}"
	TABLE+=("$(printf '%-34s %10s %10s %10s %4s  %s' "$c" "$med" "$min" "$max" "$n" "$u")")
}
# jget JSON FIELD...: the fields' values on one line ("-" for absent or unreadable; floats to 0.1)
jget() {
	python3 -c "
import json,sys
try: j=json.loads(sys.argv[1])
except ValueError: j={}
f=lambda v: '-' if v is None else str(round(v, 1) if isinstance(v, float) else v)
print(' '.join(f(j.get(k)) for k in sys.argv[2:]))" "$@" 2>/dev/null || echo "- - - -"
}

# ---- failover ----------------------------------------------------------------------------
T_PIN=() T_PING=() T_DEC=()
c0=$(cpu_sample)
for r in $(seq "$ROUNDS"); do
	s2=$(echo "$M" | tr ' ' '\n' | grep '^0000000000000002:')
	victim=${s2#*:}
	victim=${victim%%:*}
	v=${victim#c}
	others=$(echo 1 2 3 | tr ' ' '\n' | grep -v "^$v$" | tr '\n' ' ')
	# H1 becomes a host no member has seen: a new MAC, and no ARP entries on either side
	ip -n $H1 link set h$P address "$(printf '0e:%02x:%02x:00:%02x:%02x' $((P % 256)) $((P / 256 % 256)) $((r / 256 % 256)) $((r % 256)))" ||
		die "round $r: cannot change H1's MAC"
	ip -n $H1 neigh flush dev h$P
	ip -n $H2 neigh flush dev h$P
	out=$(python3 "$TOOL" failover $H1 h$P $H2 h$P "${CPIDS[$v]}" $BED_NET.2 10 2>&1)
	frc=$?
	echo "$out" | grep -q '^{' || die "round $r: the probe tool failed: $out"
	read -r k pin png before <<<"$(jget "$out" kill_ns packet_in_ms ping_ms probes_before)"
	[ "$before" != - ] && [ "$before" -gt 0 ] ||
		fail "round $r: no probe reached H2 before the kill (the control): $out"
	newm=""
	if B=$(wait_masters 10 $others); then
		newm=$(echo "$B" | tr ' ' '\n' | grep '^0000000000000002:' | grep -v ":$victim:")
	fi
	if [ -z "$newm" ]; then
		fail "round $r: no new master of S2 after the kill of $victim: $B"
		view $others
	else
		nn=${newm#*:}
		nn=${nn%%:*}
		dec=$(decided_ms ${nn#c} 0000000000000002 "$k")
		[ "$dec" != "?" ] && T_DEC+=("$dec")
		log "round $r: kill -9 $victim, S2 to $nn: decided $dec ms, packet_in ${pin:-none} ms, ping ${png:-none} ms"
	fi
	[ $frc = 0 ] && [ "$pin" != - ] && [ "$png" != - ] && { T_PIN+=("$pin"); T_PING+=("$png"); } ||
		fail "round $r: after the kill: $out"
	echo "{\"bench\":\"cluster\",\"impl\":\"ringflow\",\"case\":\"failover_round\",\"round\":$r,\"victim\":\"$victim\",\"new_master\":\"${nn:-}\",\"decided_ms\":\"${dec:-?}\",\"probe\":$out}"
	ofc_start $v
	wait_rejoin 30 $victim || die "round $r: $victim did not take its share back in 30 s: $M3"
	M=$M3
done
c1=$(cpu_sample)
summary failover_ttl${TTL}_packet_in ms "$c0" "$c1" "${T_PIN[@]}"
summary failover_ttl${TTL}_ping ms "$c0" "$c1" "${T_PING[@]}"
summary failover_ttl${TTL}_decided ms "$c0" "$c1" "${T_DEC[@]}"
[ ${#T_PIN[@]} = "$ROUNDS" ] && [ ${#T_PING[@]} = "$ROUNDS" ] &&
	pass "failover: $ROUNDS kill(s) of S2's master, a new master each time, probes and pings through after each"

# ---- throughput: ofbench, 48 switches, against one member and against three ------------------
for i in 1 2 3; do bed_stop "${SPIDS[$i]}"; done
log "throughput: ofbench, 48 switches, $TP_ROUNDS round(s)"
TP1=() TP3=()
c0=$(cpu_sample)
for r in $(seq "$TP_ROUNDS"); do
	for n in 1 3; do
		ctls=127.0.0.1:${OFP[1]}
		[ $n = 3 ] && ctls=$ctls,127.0.0.1:${OFP[2]},127.0.0.1:${OFP[3]}
		j=$(ip netns exec $C timeout $((TP_SECS * 3 + 10)) "$OFB" --controller "$ctls" --cpu 0 --json \
			--name "members$n" -s 48 -M 100 -w $TP_WARM -l "$TP_SECS" -t 1 --mode throughput 2>"$BED_TMP/ofb.err")
		read -r val fm <<<"$(jget "$j" value flow_mods)"
		if [ "$val" != - ] && [ "$fm" != - ] && [ "$fm" -gt 0 ]; then
			[ $n = 1 ] && TP1+=("$val") || TP3+=("$val")
			echo "$j"
			log "throughput round $r, $n member(s): $val responses/s ($fm FLOW_MODs)"
		else
			fail "throughput round $r, $n member(s): no answer: $(tail -2 "$BED_TMP/ofb.err") $j"
		fi
	done
done
c1=$(cpu_sample)
summary ofbench_s48_members1 responses/s "$c0" "$c1" "${TP1[@]}"
summary ofbench_s48_members3 responses/s "$c0" "$c1" "${TP3[@]}"
if [ ${#TP1[@]} -gt 0 ] && [ ${#TP1[@]} = ${#TP3[@]} ]; then
	RAT=()
	for i in "${!TP1[@]}"; do RAT+=("$(awk -v a="${TP3[$i]}" -v b="${TP1[$i]}" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')"); done
	summary ofbench_s48_ratio_3_to_1 ratio "$c0" "$c1" "${RAT[@]}"
	[ ${#TP1[@]} = "$TP_ROUNDS" ] && pass "ofbench: 48 switches answered by one member and by three"
fi

# ---- etcd's write rate -------------------------------------------------------------------
log "etcd: $PUTS puts over 1 and 8 connections"
for conns in 1 8; do
	c0=$(cpu_sample)
	j=$(ip netns exec $C python3 "$TOOL" etcdput http://127.0.0.1:${ECL[1]} "$PUTS" $conns 30 /rcbench$P/c$conns)
	c1=$(cpu_sample)
	read -r ps puts <<<"$(jget "$j" per_s puts)"
	log "etcd, $conns connection(s): $j"
	if [ "$puts" = "$PUTS" ]; then
		summary etcd_put_conns$conns puts/s "$c0" "$c1" "$ps"
		pass "etcd: $PUTS puts acknowledged over $conns connection(s)"
	else
		fail "etcd puts over $conns connection(s): $j"
	fi
done

{
	echo "cluster benchmark (TTL $TTL s; figures from a loaded machine are not figures):"
	printf '%-34s %10s %10s %10s %4s  %s\n' case median min max n unit
	printf '%s\n' "${TABLE[@]}"
} >&2
log "done"
bed_done
