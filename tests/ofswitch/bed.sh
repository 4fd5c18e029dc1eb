# tests/ofswitch/bed.sh: the test bed the ringflow-switch end-to-end and interop scripts share
# (sourced, not run: `. "$(dirname "$0")/bed.sh"`). It makes network namespaces and veth pairs
# whose names carry the script's PID (so runs go in parallel), starts processes inside them,
# and removes everything on any exit: an EXIT trap, and a watchdog in its own session that
# does the same if the script is killed (ctest's TIMEOUT kills the process group). Nothing
# here touches the root namespace: every link is created inside namespaces of the run.
#
#   bed_need_root / bed_need TOOL...     exit 77 (skip) with the reason
#   bed_need_cores                       skip when SW_CORES is set and there are < 2 CPUs
#   bed_ns NAME...                       new namespaces (lo up), deleted at exit
#   bed_link NS1 IF1 NS2 IF2             a veth pair between two of them, both ends up
#   bed_host NS IF IP/LEN                a host end: address, tx checksum offload off
#   bed_mac NS IF MAC / bed_mac_of NS IF set / print an interface's MAC address
#   bed_mgmt CTLNS NS IF N               a control link: CTLNS gets BED_MGMT_NET.(4N+1)/30,
#                                        NS gets .(4N+2) (returned in BED_IP); the switches'
#                                        way to a controller living in its own namespace
#   bed_bg NS LOG CMD...                 CMD in NS in the background (PID in BED_PID), killed at exit
#   bed_wait_tcp NS IP PORT SECS         until something listens there
#   bed_switch NS LOG DPID LISTEN CTL DEV...  ringflow-switch ($SWITCH) with packet ports
#                                        (CTL "": no controller, only the --listen)
#   bed_ping NS IP COUNT                 COUNT echoes answered within 10 s
#   bed_wait_ping NS IP SECS             a first echo answered within SECS
#   bed_reach NS IP SECS WHAT            bed_wait_ping then 5 echoes: pass or fail WHAT
#   bed_lldp_links NS REST WANT WHAT     the controller's /api/links become WANT (10 s)
#   bed_learned_flows NAME NS TARGET MAC1 MAC2  a learning controller's two flows in TARGET
#   bed_stop PID                         SIGTERM, 5 s, then SIGKILL; its exit status (a child's)
#   bed_ovs_start NS / bed_ovs_vsctl ARGS... / bed_ovs_stop   private Open vSwitch daemons
#                                        (ovs-vsctl's --timeout: BED_OVS_TIMEOUT, default 30 s)
#   pass / fail / bed_done
# Globals: P (the PID), BED_TMP (the run's directory), FAILS, BED_NET (10.a.b: the hosts'
# /24), BED_MGMT_NET (172.c.d: the control links' /24).
set -u

bed_skip() { echo "SKIP: $*"; exit 77; }
bed_need_root() {
	[ "$(id -u)" -eq 0 ] || bed_skip "needs root (network namespaces, AF_PACKET)"
}
bed_need_cores() { # SW_CORES (bed_switch's --cores, e.g. 0,1): the two-poller runs
	if [ -n "${SW_CORES:-}" ] && [ "$(nproc)" -lt 2 ]; then
		bed_skip "SW_CORES=$SW_CORES needs 2 CPUs, $(nproc) here"
	fi
}
bed_need() {
	local t
	for t; do command -v "$t" >/dev/null || bed_skip "$t not installed (scripts/deps.sh)"; done
}
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

P=$$
FAILS=0
# shellcheck disable=SC2034 # BED_NET is for the scripts that source this file
BED_NET=10.$((P % 200 + 20)).$(((P / 200) % 250))
BED_MGMT_NET=172.$((16 + P % 16)).$(((P / 16) % 250))
BED_TMP=$(mktemp -d /tmp/rfbed$P.XXXXXX)
: >"$BED_TMP/pids" # every process started, killed at exit
: >"$BED_TMP/netns" # every namespace made, deleted at exit (after the processes are gone)
# One command for the trap and the watchdog: kill, let the kernel drop their sockets, delete.
BED_CLEAN="[ -f $BED_TMP/pids ] && while read -r p; do kill -9 \$p 2>/dev/null; done <$BED_TMP/pids
	sleep 0.2
	[ -f $BED_TMP/netns ] && while read -r n; do ip netns del \$n 2>/dev/null; done <$BED_TMP/netns
	rm -rf $BED_TMP"
trap 'eval "$BED_CLEAN"' EXIT
trap 'exit 1' INT TERM HUP
setsid bash -c "while kill -0 $P 2>/dev/null; do sleep 1; done
	$BED_CLEAN" </dev/null >/dev/null 2>&1 9>&- &

bed_ns() {
	local n
	for n; do
		ip netns add "$n" || { echo "FAIL: ip netns add $n"; exit 1; }
		echo "$n" >>"$BED_TMP/netns"
		ip -n "$n" link set lo up
	done
}

bed_link() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" ||
		{ echo "FAIL: veth $1/$2 -- $3/$4"; exit 1; }
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up || exit 1
}

bed_host() {
	ip -n "$1" addr add "$3" dev "$2" || exit 1
	# a socket's TCP/UDP checksum would be left to the (veth) offload; the switches do not
	# finish it
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off >/dev/null 2>&1
}

bed_mac() { ip -n "$1" link set "$2" address "$3" || { echo "FAIL: MAC $3 on $1/$2"; exit 1; }; }
bed_mac_of() { ip -n "$1" -br link show dev "$2" | awk '{print $3}'; }

bed_mgmt() {
	local c=$BED_MGMT_NET.$((4 * $4 + 1))
	BED_IP=$BED_MGMT_NET.$((4 * $4 + 2))
	bed_link "$1" "m$4x$P" "$2" "$3"
	ip -n "$1" addr add "$c/30" dev "m$4x$P" && ip -n "$2" addr add "$BED_IP/30" dev "$3" || exit 1
}

bed_bg() {
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" </dev/null >"$log" 2>&1 9>&- &
	BED_PID=$!
	echo $BED_PID >>"$BED_TMP/pids"
}

bed_wait_tcp() {
	for _ in $(seq $(($4 * 10))); do
		ip netns exec "$1" bash -c "exec 3<>/dev/tcp/$2/$3" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# bed_switch NS LOG DPID LISTENPORT CTLURL DEV...: ringflow-switch ($SWITCH) on packet ports
# DEV... (OpenFlow ports 1, 2, ... in that order), its --listen on NS's loopback; an empty
# CTLURL starts it without a controller (fail-mode secure: only the flows added over --listen)
bed_switch() {
	local ns=$1 log=$2 dpid=$3 lport=$4 ctl=$5 d ports=()
	shift 5
	for d; do ports+=(--port "packet:dev=$d,frames=1"); done
	[ -n "$ctl" ] && ports+=(--controller "$ctl")
	bed_bg "$ns" "$log" "$SWITCH" "${ports[@]}" --cores "${SW_CORES:-0}" \
		--listen "tcp:127.0.0.1:$lport" --dpid "$dpid"
}

bed_ping() {
	ip netns exec "$1" ping -q -c "$3" -i 0.2 -w 10 "$2" >/dev/null 2>&1
}

bed_wait_ping() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		ip netns exec "$1" ping -q -c 1 -W 1 "$2" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# bed_reach NS IP SECS WHAT: a first echo from NS to IP answered within SECS (the controller's
# flows being set up), then 5 more within 10 s: pass "WHAT (first answer after N s)", or fail
# WHAT and return 1 (the caller shows its logs)
bed_reach() {
	local t0=$SECONDS
	if bed_wait_ping "$1" "$2" "$3" && bed_ping "$1" "$2" 5; then
		pass "$4 (first answer after $((SECONDS - t0)) s)"
		return 0
	fi
	fail "$4"
	return 1
}

# bed_lldp_links NS REST WANT WHAT: polls a ringflow-controller's GET /api/links (REST port on
# NS's loopback) for at most 10 s (LLDP goes out every second) until its links, one word a
# direction "srcdpid:port-dstdpid:port", sorted, are exactly WANT: pass "LLDP discovery: WHAT,
# both ways", or fail with the words last seen and the last answer.
bed_lldp_links() {
	local links got
	for _ in $(seq 50); do
		links=$(ip netns exec "$1" curl -s --max-time 2 "http://127.0.0.1:$2/api/links")
		got=$(echo "$links" | grep -o '"src":{"dpid":"[0-9a-f]*","port":[0-9]*},"dst":{"dpid":"[0-9a-f]*","port":[0-9]*}' |
			sed -E 's/"src":\{"dpid":"0*([0-9a-f]+)","port":([0-9]+)\},"dst":\{"dpid":"0*([0-9a-f]+)","port":([0-9]+)\}/\1:\2-\3:\4/' |
			sort | tr '\n' ' ')
		[ "$got" = "$3 " ] && break
		sleep 0.2
	done
	[ "$got" = "$3 " ] && pass "LLDP discovery: $4, both ways ($got)" ||
		fail "LLDP discovery: got '$got', want '$3'; /api/links: $links"
}

# bed_learned_flows NAME NS TARGET MAC1 MAC2: in TARGET's flow stats (ovs-ofctl -O OpenFlow13
# dump-flows, run in NS), the flows a learning controller installed for two hosts on ports 1
# (MAC1) and 2 (MAC2): in_port=1,dl_dst=MAC2 -> output:2 and in_port=2,dl_dst=MAC1 -> output:1,
# both with counters that moved. One pass or fail, as NAME (the flows shown on failure).
bed_learned_flows() {
	local d
	d=$(ip netns exec "$2" timeout 10 ovs-ofctl -O OpenFlow13 dump-flows "$3" 2>&1)
	if echo "$d" | grep -E "n_packets=[1-9].*in_port=1,dl_dst=$5 actions=output:2" >/dev/null &&
		echo "$d" | grep -E "n_packets=[1-9].*in_port=2,dl_dst=$4 actions=output:1" >/dev/null; then
		pass "$1 flow stats: the learned flows to H2 (out 2) and H1 (out 1), counters moved"
	else
		fail "$1 flow stats"
		echo "$d" | sed "s/^/  $1: /"
	fi
}

bed_stop() {
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 50); do # gone, or a zombie (a detached daemon: PID 1 reaps it)
		case "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" in "" | Z) break ;; esac
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Open vSwitch, as tests/openflow/ovs_bed.sh and bench/fwd/run.sh run it: an ovsdb-server and
# an ovs-vswitchd of our own, database, sockets, pidfiles and logs in BED_TMP/ovs, never the
# system service; here both run inside namespace NS, so the userspace datapath's tap
# (ovs-netdev) and the bridges' internal ports are made there. The beds still take turns on
# the host's OVS bed lock (60 s at most): ovs_bed.sh refuses to start while any process holds
# a tap named ovs-netdev.
bed_ovs_start() {
	local d=$BED_TMP/ovs pf
	BED_OVS_NS=$1
	bed_need ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl
	[ -r /usr/share/openvswitch/vswitch.ovsschema ] ||
		bed_skip "/usr/share/openvswitch/vswitch.ovsschema missing (openvswitch-common)"
	local t0=$SECONDS
	exec 9>/tmp/ringflow-ovs-bed.lock
	flock -w 60 9 || { echo "FAIL: another OVS bed held /tmp/ringflow-ovs-bed.lock for 60 s"; exit 1; }
	[ $SECONDS -gt $t0 ] && echo "(waited $((SECONDS - t0)) s for another OVS bed's lock)"
	mkdir -p "$d"
	export OVS_RUNDIR=$d OVS_DBDIR=$d OVS_LOGDIR=$d OVS_SYSCONFDIR=$d
	ovsdb-tool create "$d/conf.db" /usr/share/openvswitch/vswitch.ovsschema &&
		ip netns exec "$1" ovsdb-server "$d/conf.db" --remote="punix:$d/db.sock" \
			--pidfile="$d/ovsdb-server.pid" --log-file="$d/ovsdb-server.log" \
			--unixctl="$d/ovsdb-server.ctl" --detach --no-chdir -vconsole:off 2>>"$d/start.log" 9>&- &&
		cat "$d/ovsdb-server.pid" >>"$BED_TMP/pids" &&
		bed_ovs_vsctl --no-wait init &&
		ip netns exec "$1" ovs-vswitchd "unix:$d/db.sock" --pidfile="$d/ovs-vswitchd.pid" \
			--log-file="$d/ovs-vswitchd.log" --detach --no-chdir -vconsole:off 2>>"$d/start.log" 9>&- &&
		cat "$d/ovs-vswitchd.pid" >>"$BED_TMP/pids" ||
		{ echo "FAIL: the OVS daemons did not start"; tail -5 "$d"/*.log; exit 1; }
}

# 30 s by default: without --no-wait ovs-vsctl waits until ovs-vswitchd applied the change
# (0-1 s here; one unexplained failure at 10 s was seen at load average 15)
bed_ovs_vsctl() { ovs-vsctl --db="unix:$BED_TMP/ovs/db.sock" --timeout="${BED_OVS_TIMEOUT:-30}" "$@"; }

# Stops the two daemons by their pidfiles, removes the taps they leave in their namespace.
bed_ovs_stop() {
	local pf
	for pf in "$BED_TMP/ovs/ovs-vswitchd.pid" "$BED_TMP/ovs/ovsdb-server.pid"; do
		[ -r "$pf" ] && bed_stop "$(cat "$pf")"
	done
	ip -n "$BED_OVS_NS" -o link show type tun 2>/dev/null | awk -F': ' '{print $2}' |
		while read -r t; do ip -n "$BED_OVS_NS" link del "$t"; done
	exec 9>&-
}

bed_done() {
	[ "$FAILS" = 0 ] && { echo "PASS"; exit 0; }
	echo "$FAILS failure(s)"
	exit 1
}
