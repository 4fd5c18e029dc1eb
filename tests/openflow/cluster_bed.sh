# tests/openflow/cluster_bed.sh: the cluster bed that tests/openflow/cluster_test.sh and
# bench/cluster/run.sh share (sourced after tests/ofswitch/bed.sh, not run). Defines functions
# and fixed ports only; everything lives in namespace $C (so its loopback ports are the run's
# own) and is killed and deleted by bed.sh's trap.
#
#   etcd_start N / etcd_up          member eN of a three-member etcd (Debian's /usr/bin/etcd,
#                                   data under BED_TMP/eN, kept across restarts) / all three,
#                                   then until healthy (10 s): 0 or 1
#   etcd_healthy                    until all three members are healthy (10 s): 0 or 1
#   etcd_leader                     the N of the member that leads now, or nothing
#   etcd_move_leader N              member N leads (etcdctl move-leader): 0 or 1
#   ofc_start N [EXTRA...]          controller cN (CPIDS[N]): OpenFlow port OFP[N], REST
#                                   REST[N], etcd at CTL_ETCD[N] (default ENDPOINTS), node cN,
#                                   prefix /rct$P, lease TTL s; CTL_OPTS (every start) and
#                                   EXTRA are more options
#   urls N... / view N...           the members' REST URLs / their /api/cluster, one line each
#   wait_masters SECS N...          until members N... agree on one confirmed master per switch:
#                                   prints "dpid:node:gen ..." and returns 0, or 1 after SECS
#   wait_settled SECS N...          the same, and every member's role on every switch (slaves
#                                   too) confirmed by the switch, each member connected to
#                                   every switch: no ROLE_REQUEST still due
#   masters_now N...                wait_masters' check once: its words and 0, or why not and 1
#   balanced M                      0 when M (wait_masters' words) gives each member one switch
#   wait_rejoin SECS NODE           until every member agrees and NODE is master of one switch
#                                   again, each member of one (wait_masters' words in M3): 0 or 1
#   decided_ms N DPID T0_NS         when member N decided its role on DPID, in ms after T0_NS
#                                   (its own wall clock, decided_at_unix_ms), or "?"
#   line_bed                        namespaces H1 - rcs1 - rcs2 - rcs3 - H2 (veths a/b, hosts
#                                   $BED_NET.1 and .2, IPv6 off) and C, the controllers' one
#   ctls_up                         c1..c3, until they listen, OpenFlow and REST (10 s each):
#                                   0, or 1 with CTLS_ERR
#   ctl_state N L                   one line: cN's pid, running or gone, its log's last L lines
#   switches_up                     three ringflow-switches ($SWITCH, dpids 1..3, SPIDS[N]),
#                                   each connected to all three controllers through a control
#                                   link from C; their --listen on 127.0.0.1:6640 in rcsN
# Globals the caller sets: P, BED_TMP, CONTROLLER, SWITCH, TTL. Needs etcd, etcdctl, curl, python3.
# shellcheck shell=bash
# The globals are for the scripts that source this file; $(urls ...) is split on purpose.
# shellcheck disable=SC2034,SC2046

TOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster_tool.py
ECL=(0 2379 2479 2579) EPEER=(0 2380 2480 2580)
ENDPOINTS=http://127.0.0.1:2379,http://127.0.0.1:2479,http://127.0.0.1:2579
OFP=(0 6653 6663 6673) REST=(0 8081 8082 8083)
NSW=3 # the bed's switches (switches_up): cluster_tool.py's masters wants a key for each
EPIDS=() CPIDS=() CTL_ETCD=() SPIDS=() CTL_OPTS=()
H1=rch1$P H2=rch2$P C=rcc$P

line_bed() {
	local n
	bed_ns $H1 $H2 $C rcs1$P rcs2$P rcs3$P
	bed_link $H1 h$P rcs1$P a$P
	bed_link rcs1$P b$P rcs2$P a$P
	bed_link rcs2$P b$P rcs3$P a$P
	bed_link rcs3$P b$P $H2 h$P
	bed_host $H1 h$P $BED_NET.1/24
	bed_host $H2 h$P $BED_NET.2/24
	for n in $H1 $H2; do
		ip netns exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	done
}

etcd_start() {
	bed_bg $C "$BED_TMP/etcd$1.log" etcd --name e$1 --data-dir "$BED_TMP/e$1" \
		--listen-client-urls http://127.0.0.1:${ECL[$1]} \
		--advertise-client-urls http://127.0.0.1:${ECL[$1]} \
		--listen-peer-urls http://127.0.0.1:${EPEER[$1]} \
		--initial-advertise-peer-urls http://127.0.0.1:${EPEER[$1]} \
		--initial-cluster e1=http://127.0.0.1:2380,e2=http://127.0.0.1:2480,e3=http://127.0.0.1:2580 \
		--initial-cluster-token rct$P --heartbeat-interval 100 --election-timeout 500
	EPIDS[$1]=$BED_PID
}

etcd_up() {
	local i
	for i in 1 2 3; do etcd_start $i; done
	etcd_healthy
}

etcd_healthy() {
	for _ in $(seq 100); do
		ip netns exec $C timeout 2 etcdctl --endpoints $ENDPOINTS endpoint health >/dev/null 2>&1 &&
			return 0
		sleep 0.1
	done
	return 1
}

etcd_leader() {
	local port i
	port=$(ip netns exec $C timeout 5 etcdctl --endpoints $ENDPOINTS endpoint status -w json 2>/dev/null |
		python3 -c 'import json,sys
for e in json.load(sys.stdin):
	if e["Status"]["header"]["member_id"] == e["Status"]["leader"]:
		print(e["Endpoint"].rsplit(":", 1)[1])' 2>/dev/null)
	for i in 1 2 3; do [ "${ECL[$i]}" = "$port" ] && echo $i; done
	return 0
}

etcd_move_leader() { # makes member N the leader (etcdctl move-leader), until it says so (5 s)
	local id
	[ "$(etcd_leader)" = "$1" ] && return 0
	id=$(ip netns exec $C timeout 5 etcdctl --endpoints http://127.0.0.1:${ECL[$1]} endpoint status -w json 2>/dev/null |
		python3 -c 'import json,sys; print("%x" % json.load(sys.stdin)[0]["Status"]["header"]["member_id"])' 2>/dev/null) ||
		return 1
	ip netns exec $C timeout 5 etcdctl --endpoints $ENDPOINTS move-leader "$id" >/dev/null 2>&1
	for _ in $(seq 50); do
		[ "$(etcd_leader)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

ofc_start() {
	local n=$1
	shift
	bed_bg $C "$BED_TMP/c$n.log" "$CONTROLLER" --listen 0.0.0.0:${OFP[$n]} \
		--app learning,topology,hosts --rest 127.0.0.1:${REST[$n]} --idle adaptive \
		--cluster etcd=${CTL_ETCD[$n]:-$ENDPOINTS} --node-id c$n --cluster-prefix /rct$P \
		--lease-ttl $TTL "${CTL_OPTS[@]}" "$@"
	CPIDS[$n]=$BED_PID
}

urls() { local u="" i; for i in "$@"; do u="$u http://127.0.0.1:${REST[$i]}"; done; echo $u; }
view() { ip netns exec $C python3 "$TOOL" view $(urls "$@") | sed 's/^/  view: /'; }

wait_masters() { wait_tool masters "$@"; }
wait_settled() { wait_tool settled "$@"; }
masters_now() { tool_once masters "$@"; }

tool_once() { # CMD N...: cluster_tool.py CMD on members N..., once, for the bed's switches
	local cmd=$1
	shift
	ip netns exec $C python3 "$TOOL" $cmd $NSW $(urls "$@") 2>&1
}

wait_tool() { # CMD SECS N...: until cluster_tool.py CMD on members N... exits 0
	local cmd=$1 end=$(($2 + SECONDS)) out
	shift 2
	while [ $SECONDS -lt $end ]; do
		out=$(tool_once $cmd "$@") && { echo "$out"; return 0; }
		sleep 0.2
	done
	echo "$out"
	return 1
}

balanced() {
	[ "$(echo "$1" | tr ' ' '\n' | cut -d: -f2 | sort | uniq -c | awk '{print $1}' | sort -u |
		tr '\n' ' ')" = "1 " ]
}

wait_rejoin() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		M3=$(wait_masters 1 1 2 3) && echo "$M3" | grep -q ":$2:" && balanced "$M3" && return 0
		sleep 0.2
	done
	return 1
}

decided_ms() {
	local at
	at=$(ip netns exec $C curl -s -m 2 http://127.0.0.1:${REST[$1]}/api/cluster | python3 -c '
import json,sys; print([s["decided_at_unix_ms"] for s in json.load(sys.stdin)["switches"] if s["dpid"]=="'"$2"'"][0])' 2>/dev/null)
	[ -n "$at" ] && echo $((at - $3 / 1000000)) || echo "?"
}

ctls_up() {
	local i
	for i in 1 2 3; do ofc_start $i; done
	for i in 1 2 3; do # REST opens once the member has joined the cluster
		bed_wait_tcp $C 127.0.0.1 ${OFP[$i]} 10 && bed_wait_tcp $C 127.0.0.1 ${REST[$i]} 10 ||
			{ CTLS_ERR="controller did not listen: $(ctl_state $i 3)"; return 1; }
	done
}

ctl_state() { # "cN (pid P, running|gone): " and its log's last L lines on one line
	echo "c$1 (pid ${CPIDS[$1]}, $(kill -0 "${CPIDS[$1]}" 2>/dev/null && echo running || echo gone)): $(tail -"$2" "$BED_TMP/c$1.log" | tr '\n' ' ')"
}

switches_up() {
	local i g
	for i in $(seq $NSW); do
		bed_mgmt $C rcs$i$P m$P $i
		g=$BED_MGMT_NET.$((4 * i + 1))
		bed_bg rcs$i$P "$BED_TMP/sw$i.log" "$SWITCH" --port "packet:dev=a$P,frames=1" \
			--port "packet:dev=b$P,frames=1" --cores 0 --listen tcp:127.0.0.1:6640 --dpid $i \
			--controller tcp:$g:${OFP[1]} --controller tcp:$g:${OFP[2]} --controller tcp:$g:${OFP[3]}
		SPIDS[$i]=$BED_PID
	done
}
