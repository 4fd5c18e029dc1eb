#!/usr/bin/env bash
# tests/l2fwd/l2fwd_test.sh: ringflow-l2fwd end to end, as root, on a bed of three network
# namespaces made for this run:  GEN --veth-- FWD --veth-- SINK  (GEN and SINK share a /24,
# ringflow-l2fwd forwards between the two veth ends inside FWD).
#
#   l2fwd_test.sh L2FWD XFER [BACKEND...]     (BACKEND: packet, packet-v2 (ring=v2), xdp,
#                                             dpdk; default all four)
#
# Cases: bad configurations (one line, non-zero exit, nothing left behind); per backend: ping,
# 200 non-IP frames of 60..1514 bytes (half of them VLAN-tagged) byte-exact, and a 4 MiB TCP
# transfer checked with sha256, and the out port set down and up mid-run (drops counted,
# totals add up, forwarding resumes); on xdp also --offload (the kernel forwards: byte-exact,
# counters add up, ringflow-ctl shows them); on packet also two queues with 64 UDP flows (each
# datagram exactly once, both queues used) and four ports (two pairs, nothing crosses). A backend whose driver has
# no frame mode here is reported as skipped with its reason. Exit 77 (skip) when not root.
# Names carry the PID; the namespaces and our processes go away on any exit, also when this
# script is killed with SIGKILL (a watchdog in its own session cleans up).
set -u
L2FWD=$1 XFER=$2
shift 2
BACKENDS=${*:-packet packet-v2 xdp dpdk}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, AF_PACKET)"
	exit 77
fi
for t in ip ping sha256sum ethtool; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/deps.sh)"; exit 77; }
done

P=$$
G=rflg$P F=rflf$P S=rfls$P G2=rflh$P S2=rflt$P
GI=g$P FA=fa$P FB=fb$P SI=s$P
A=$((P % 200 + 20)) B=$(((P / 200) % 250))
IPG=10.$A.$B.1 IPS=10.$A.$B.2
TMP=$(mktemp -d /tmp/rfl2fwd.XXXXXX)
PIDS=$TMP/pids
FAILS=0
SKIPPED=

cleanup() {
	[ -f "$PIDS" ] && while read -r p; do kill -9 "$p" 2>/dev/null; done <"$PIDS"
	for n in $G $F $S $G2 $S2; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# Watchdog: survives a SIGKILL of this script (own session), then cleans up the same way.
setsid bash -c "while kill -0 $P 2>/dev/null; do sleep 1; done
	[ -f $PIDS ] && while read -r p; do kill -9 \$p 2>/dev/null; done <$PIDS
	for n in $G $F $S $G2 $S2; do ip netns del \$n 2>/dev/null; done; rm -rf $TMP" </dev/null >/dev/null 2>&1 &

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }
# until_ready FILE: wait (30 s at most) for a receiver to print "ready" into FILE, so the
# sender never starts before the receiver's socket is bound (under a loaded CI run, starting a
# process in a netns has taken over 5 s); a receiver that never gets ready is said once.
until_ready() {
	for _ in $(seq 300); do grep -q ready "$1" && return 0; sleep 0.1; done
	echo "note: receiver not ready after 30 s: $(head -c 200 "$1")"
	return 1
}

# bed QUEUES: (re)build the three namespaces; the FWD veths get QUEUES rx/tx queues.
bed() {
	local q=$1
	for n in $G $F $S; do ip netns del "$n" 2>/dev/null; done
	ip netns add $G && ip netns add $F && ip netns add $S || return 1
	ip link add $GI netns $G numrxqueues $q numtxqueues $q type veth peer name $FA netns $F \
		numrxqueues $q numtxqueues $q || return 1
	ip link add $FB netns $F numrxqueues $q numtxqueues $q type veth peer name $SI netns $S \
		numrxqueues $q numtxqueues $q || return 1
	ip -n $G addr add $IPG/24 dev $GI && ip -n $S addr add $IPS/24 dev $SI || return 1
	for n in $G $F $S; do ip -n $n link set lo up; done
	ip -n $G link set $GI up && ip -n $S link set $SI up || return 1
	ip -n $F link set $FA up && ip -n $F link set $FB up || return 1
	# A forwarder passes bytes unchanged, so the senders must finish their own checksums
	# and segments (veth would leave them to an offload that never happens on the way).
	for x in "$G $GI" "$S $SI"; do
		set -- $x
		ip netns exec $1 ethtool -K $2 tx off tso off gso off >/dev/null 2>&1
	done
	# The kernel reports a new link up a moment later (linkwatch): wait for it (bounded).
	for _ in $(seq 50); do
		ip -n $F -o link show $FA | grep -q "state UP" &&
			ip -n $F -o link show $FB | grep -q "state UP" && return 0
		sleep 0.1
	done
	return 1
}

# spec BACKEND DEV [EXTRA]: the port config string of DEV on BACKEND.
spec() {
	case $1 in
	packet) echo "packet:dev=$2,frames=1${3:+,$3}" ;;
	packet-v2) echo "packet:dev=$2,frames=1,ring=v2${3:+,$3}" ;;
	xdp) echo "xdp:dev=$2,mode=skb,frames=1${3:+,$3}" ;;
	dpdk) echo "dpdk:vdev=net_af_packet$((${4:-0})),iface=$2,frames=1${3:+,$3}" ;;
	esac
}

# start BACKEND [EXTRA] [more l2fwd args]: run ringflow-l2fwd in FWD; sets LP and LOG.
start() {
	local be=$1 extra=${2:-}
	shift 2 2>/dev/null || shift $#
	LOG=$TMP/l2fwd.$be.$RANDOM
	ip netns exec $F "$L2FWD" --port "$(spec $be $FA "$extra" 0)" --port "$(spec $be $FB "$extra" 1)" \
		--cores 1 --stats 1 "$@" >"$LOG" 2>&1 &
	LP=$!
	echo $LP >>"$PIDS"
	for _ in $(seq 50); do
		grep -q "Ctrl-C stops" "$LOG" 2>/dev/null && return 0
		kill -0 $LP 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

# stop: SIGINT, wait (bounded); the totals must add up (exit 0).
stop() {
	kill -INT $LP 2>/dev/null
	for _ in $(seq 50); do kill -0 $LP 2>/dev/null || break; sleep 0.1; done
	if kill -0 $LP 2>/dev/null; then
		kill -9 $LP
		fail "ringflow-l2fwd did not stop on SIGINT"
		return 1
	fi
	wait $LP
	local rc=$?
	[ $rc -eq 0 ] || { fail "ringflow-l2fwd exit $rc (totals do not add up?)"; cat "$LOG"; return 1; }
	return 0
}

# ---- bad configurations: one line on stderr, non-zero exit, nothing left open -------------
bad_case() {
	local what=$1
	shift
	ip netns exec $F timeout 20 "$L2FWD" "$@" >$TMP/bad.out 2>$TMP/bad.err
	local rc=$?
	local lines
	lines=$(wc -l <$TMP/bad.err)
	if [ $rc -eq 0 ] || [ $rc -ge 124 ]; then
		fail "bad config ($what): exit $rc"
	elif [ "$lines" -ne 1 ]; then
		fail "bad config ($what): $lines lines on stderr: $(cat $TMP/bad.err)"
	elif [ -n "$(ip -n $F link show | grep -i xdp)" ]; then
		fail "bad config ($what): an XDP program was left attached"
	else
		pass "bad config ($what): $(cat $TMP/bad.err)"
	fi
}

bed 1 || { fail "cannot build the bed"; exit 1; }
bad_case "one port" --port "packet:dev=$FA,frames=1"
bad_case "no such interface" --port "packet:dev=nosuch$P,frames=1" --port "packet:dev=$FB,frames=1"
bad_case "unknown key" --port "packet:dev=$FA,frames=1,bogus=1" --port "packet:dev=$FB,frames=1"
bad_case "packet frames=0" --port "packet:dev=$FA,frames=0" --port "packet:dev=$FB,frames=1"
bad_case "frames=1 on udp" --port "udp:listen=127.0.0.1:0,frames=1" --port "packet:dev=$FB,frames=1"
bad_case "message-mode port" --port "udp:listen=127.0.0.1:0" --port "packet:dev=$FB,frames=1"
bad_case "bad queues" --port "packet:dev=$FA,frames=1,queues=0" --port "packet:dev=$FB,frames=1"
bad_case "unknown driver" --port "nosuch:dev=$FA" --port "packet:dev=$FB,frames=1"
if ! command -v capsh >/dev/null; then
	fail "capsh not installed (scripts/deps.sh installs libcap2-bin)"
else
	ip netns exec $F capsh --drop=cap_net_raw -- -c \
		"exec $L2FWD --port packet:dev=$FA,frames=1 --port packet:dev=$FB,frames=1" \
		>$TMP/bad.out 2>$TMP/bad.err
	if [ $? -ne 0 ] && [ "$(wc -l <$TMP/bad.err)" -eq 1 ] && grep -q CAP_NET_RAW $TMP/bad.err; then
		pass "bad config (no CAP_NET_RAW): $(cat $TMP/bad.err)"
	else
		fail "bad config (no CAP_NET_RAW): $(cat $TMP/bad.err)"
	fi
fi

# ---- packet with frames= left out (implied), ports reported up ------------------------------
ip netns exec $F "$L2FWD" --port "packet:dev=$FA" --port "packet:dev=$FB" --cores 1 \
	>$TMP/implied.log 2>&1 &
LP=$!
echo $LP >>"$PIDS"
for _ in $(seq 50); do grep -q "Ctrl-C stops" $TMP/implied.log 2>/dev/null && break; sleep 0.1; done
LOG=$TMP/implied.log
if ip netns exec $G ping -q -c 2 -i 0.2 -W 2 $IPS >/dev/null 2>&1; then
	pass "packet without frames=: frame mode implied, ping forwarded"
else
	fail "packet without frames=: $(cat $TMP/implied.log)"
fi
if [ "$(grep -c 'MTU 1500, link up' $TMP/implied.log)" -eq 2 ]; then
	pass "ports reported with MAC, MTU and link state: $(grep -m1 'port 0 =' $TMP/implied.log)"
else
	fail "port lines: $(grep 'port . =' $TMP/implied.log)"
fi
stop

# ---- --mac-rewrite: dst 02:00:00:00:00:01, src the out port's MAC, the rest unchanged -------
FBMAC=$(ip -n $F -o link show $FB | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
if start packet "" --mac-rewrite; then
	ip netns exec $S "$XFER" rawrecv $SI 50 20 02:00:00:00:00:01 "$FBMAC" >$TMP/raw 2>&1 &
	RP=$!
	echo $RP >>"$PIDS"
	until_ready $TMP/raw
	ip netns exec $G "$XFER" rawsend $GI 50
	if wait $RP; then
		pass "--mac-rewrite: 50 frames with dst 02:00:00:00:00:01 src $FBMAC: $(tail -1 $TMP/raw)"
	else
		fail "--mac-rewrite: $(tail -1 $TMP/raw)"
	fi
	stop
else
	fail "--mac-rewrite: did not start: $(cat "$LOG")"
fi

# ---- per backend: ping, raw frames, checksummed TCP ----------------------------------------
head -c $((4 << 20)) /dev/urandom >$TMP/data
WANT=$(sha256sum <$TMP/data | cut -d' ' -f1)

for be in $BACKENDS; do
	if ! start $be ""; then
		if grep -q "no frame mode\|unavailable here\|unknown driver" "$LOG"; then
			echo "SKIP: $be: $(grep -m1 ringflow-l2fwd "$LOG")"
			SKIPPED="$SKIPPED $be"
			kill -9 $LP 2>/dev/null
			continue
		fi
		fail "$be: ringflow-l2fwd did not start: $(cat "$LOG")"
		continue
	fi
	if ip netns exec $G ping -q -c 5 -i 0.2 -W 2 $IPS >$TMP/ping 2>&1; then
		pass "$be: ping GEN -> SINK through ringflow-l2fwd"
	else
		fail "$be: ping: $(tail -2 $TMP/ping)"
	fi
	# The control socket (docs/observing.md): the ports command and a driver counter.
	if [ -n "${RF_CTL:-}" ] && [ "$be" = packet ]; then
		if "$RF_CTL" --json -p $LP ports >$TMP/ctl 2>&1 && grep -q '"pair":1' $TMP/ctl &&
		   "$RF_CTL" --json -p $LP stats ports/port0 >$TMP/ctl2 2>&1 && grep -q 'xstats' $TMP/ctl2; then
			pass "$be: ringflow-ctl ports and the port's extended counters over the control socket"
		else
			fail "$be: ringflow-ctl: $(head -c 300 $TMP/ctl $TMP/ctl2)"
		fi
	fi
	ip netns exec $S "$XFER" rawrecv $SI 200 20 >$TMP/raw 2>&1 &
	RP=$!
	echo $RP >>"$PIDS"
	until_ready $TMP/raw
	ip netns exec $G "$XFER" rawsend $GI 200
	if wait $RP; then
		pass "$be: non-IP frames of 60..1514 bytes, half VLAN-tagged, byte-exact: $(tail -1 $TMP/raw)"
	else
		fail "$be: raw frames: $(tail -1 $TMP/raw)"
		RAWFAIL=1
	fi
	rm -f $TMP/got
	ip netns exec $S "$XFER" tcprecv 5001 $TMP/got &
	RP=$!
	echo $RP >>"$PIDS"
	ip netns exec $G timeout 60 "$XFER" tcpsend $IPS 5001 $TMP/data
	wait $RP
	GOT=$(sha256sum <$TMP/got 2>/dev/null | cut -d' ' -f1)
	if [ "$GOT" = "$WANT" ]; then
		pass "$be: 4 MiB TCP GEN -> SINK, sha256 equal"
	else
		fail "$be: TCP transfer: sha256 $GOT, want $WANT ($(stat -c %s $TMP/got 2>/dev/null) bytes)"
	fi
	stop && pass "$be: totals add up: $(grep -m1 'port 0 -> 1' "$LOG")"
	[ -n "${RAWFAIL:-}" ] && grep -E ' -> |xstats' "$LOG" && RAWFAIL=""
	if ip -n $F link show | grep -q xdp; then
		fail "$be: an XDP program is still attached after ringflow-l2fwd exited"
	fi
done

# ---- dpdk with the app's own EAL arguments (after --) ---------------------------------------
if [[ " $BACKENDS " == *" dpdk "* && " $SKIPPED " != *" dpdk "* ]]; then
	ip netns exec $F timeout 20 "$L2FWD" --port "$(spec dpdk $FA "" 0)" --port "$(spec dpdk $FB "" 1)" \
		-- --bogus-eal-arg >$TMP/eal.out 2>$TMP/eal.err
	rc=$?
	# DPDK prints its own usage first; our one line is the last.
	if [ $rc -ne 0 ] && [ $rc -lt 124 ] && tail -1 $TMP/eal.err | grep -q "^ringflow-l2fwd: EAL arguments: "; then
		pass "dpdk: a bad EAL argument: $(tail -1 $TMP/eal.err)"
	else
		fail "dpdk: a bad EAL argument: exit $rc, last line: $(tail -1 $TMP/eal.err)"
	fi
	if start dpdk "" -- --no-pci --no-huge -m 256 --no-shconf --file-prefix rfl2e$P \
		--log-level=lib.eal:error; then
		if ip netns exec $G ping -q -c 3 -i 0.2 -W 2 $IPS >$TMP/ping 2>&1; then
			pass "dpdk: EAL started from the app's arguments (after --), ping forwarded"
		else
			fail "dpdk with EAL arguments: ping: $(tail -2 $TMP/ping)"
		fi
		stop
	else
		fail "dpdk with EAL arguments: did not start: $(cat "$LOG")"
	fi
fi

# ---- packet: two queues, many flows --------------------------------------------------------
if [[ " $BACKENDS " == *" packet "* ]]; then
	bed 2 || fail "cannot build the 2-queue bed"
	if start packet "queues=2,blocks=256,block_kb=16"; then
		ip netns exec $G ping -q -c 2 -i 0.2 -W 2 $IPS >/dev/null 2>&1 # neighbours first
		ip netns exec $S "$XFER" udprecv 6000 64 150 30 >$TMP/udp 2>&1 &
		RP=$!
		echo $RP >>"$PIDS"
		until_ready $TMP/udp
		ip netns exec $G "$XFER" udpsend $IPS 6000 64 150 4000
		wait $RP
		URC=$?
		stop
		if [ $URC -eq 0 ]; then
			pass "packet queues=2: $(tail -1 $TMP/udp)"
		else
			fail "packet queues=2: $(tail -1 $TMP/udp)"
			grep -v ' rx .* tx .* drop .*(frames/s)' "$LOG"
		fi
		Q0=$(sed -n 's/.*port 0 queue 0 .*: rx \([0-9]*\)/\1/p' "$LOG")
		Q1=$(sed -n 's/.*port 0 queue 1 .*: rx \([0-9]*\)/\1/p' "$LOG")
		if [ "${Q0:-0}" -gt 0 ] && [ "${Q1:-0}" -gt 0 ]; then
			pass "packet queues=2: flows spread over both queues (rx $Q0 and $Q1)"
		else
			fail "packet queues=2: queue 0 rx ${Q0:-?}, queue 1 rx ${Q1:-?}"
		fi
	else
		fail "packet queues=2: did not start: $(cat "$LOG")"
	fi

fi

# ---- each backend: the out port goes down and up mid-run --------------------------------
# 20 pings/s for 2 s; FWD's port to SINK is down for 0.6 s of them: the frames meant for it
# must be counted as dropped, the totals must still add up, and forwarding must resume.
# The xdp and dpdk drivers hand a frame to a kernel ring and cannot tell when the kernel then
# drops it because the port is down (checked 2026-12-03 against the frame mode in progress):
# for them a missing drop count is reported as a known gap; survival, resumption and totals
# that add up are still required. The packet driver sees ENETDOWN on its kick and counts.
DOWN_DROPS_UNSEEN="xdp dpdk"
updown() {
	local be=$1
	bed 1 || { fail "cannot rebuild the bed"; return; }
	start $be "" || { fail "$be: down/up: did not start: $(cat "$LOG")"; return; }
	ip netns exec $G ping -q -c 2 -i 0.2 -W 2 $IPS >/dev/null 2>&1
	ip netns exec $G ping -q -c 40 -i 0.05 -W 1 $IPS >/dev/null 2>&1 &
	local pp=$!
	sleep 0.5
	ip -n $F link set $FB down
	sleep 0.6
	ip -n $F link set $FB up
	wait $pp
	sleep 0.3
	if ip netns exec $G ping -q -c 3 -i 0.2 -W 2 $IPS >$TMP/ping 2>&1; then
		pass "$be: forwarding resumes after the port came back up"
	else
		fail "$be: no forwarding after down/up: $(tail -2 $TMP/ping)"
	fi
	if kill -0 $LP 2>/dev/null && stop; then
		local d
		d=$(sed -n 's/.*port 0 -> 1: .* drops \([0-9]*\) .*/\1/p' "$LOG")
		if [ "${d:-0}" -gt 0 ]; then
			pass "$be: down/up: $(grep -m1 'port 0 -> 1' "$LOG")"
		elif [[ " $DOWN_DROPS_UNSEEN " == *" $be "* ]]; then
			echo "KNOWN GAP: $be: down/up: frames sent while the port was down are counted as" \
				"sent (handed to a kernel ring that did not send them; the driver cannot tell):" \
				"$(grep -m1 'port 0 -> 1' "$LOG")"
		else
			fail "$be: down/up: no drops counted: $(grep -m1 'port 0 -> 1' "$LOG")"
		fi
	else
		fail "$be: ringflow-l2fwd did not survive the port going down"
	fi
}
for be in $BACKENDS; do
	[[ " $SKIPPED " == *" $be "* ]] || updown $be
done

# ---- --offload: the kernel forwards (XDP), userspace sees the rest; counters add up ---------
# xdp ports get one port-wide offload entry each (with --mac-rewrite's MACs): 200 raw frames
# must arrive byte-exact with the rewritten MACs, `ringflow-ctl ports` must show the offloaded
# frames, and after the run offloaded + userspace-forwarded (port 0 -> 1) must equal what
# SINK's interface received meanwhile. IPv6 is off in all three namespaces, so no host stack
# sends anything of its own (FWD's on fb would reach SINK uncounted; GEN's router and
# listener solicitations would be forwarded, and one sent between l2fwd's last read of the
# counters and its exit is counted by SINK alone: the CI's ASan run saw 201 + 0 != 203).
# A port without a fast path (packet) says so in one line and forwards in userspace.
offload_case() {
	bed 1 || { fail "offload: cannot rebuild the bed"; return; }
	local ns
	for ns in $G $F $S; do
		ip netns exec $ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	sleep 0.2 # what the host stacks sent before is in SINK's count already
	local before after
	before=$(ip netns exec $S cat /sys/class/net/$SI/statistics/rx_packets)
	start xdp "" --mac-rewrite --offload || { fail "offload: did not start: $(cat "$LOG")"; return; }
	FBMAC=$(ip -n $F -o link show $FB | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	ip netns exec $S "$XFER" rawrecv $SI 200 20 02:00:00:00:00:01 "$FBMAC" >$TMP/raw 2>&1 &
	RP=$!
	echo $RP >>"$PIDS"
	until_ready $TMP/raw
	ip netns exec $G "$XFER" rawsend $GI 200
	if wait $RP; then
		pass "offload: 200 frames forwarded byte-exact with rewritten MACs: $(tail -1 $TMP/raw)"
	else
		fail "offload: raw frames: $(tail -1 $TMP/raw)"
	fi
	if [ -n "${RF_CTL:-}" ]; then
		"$RF_CTL" --json -p $LP ports >$TMP/ctl 2>&1
		local off0
		off0=$(sed -n 's/.*"port":0,[^}]*"offloaded":\([0-9]*\).*/\1/p' $TMP/ctl)
		if [ "${off0:-0}" -ge 200 ]; then
			pass "offload: ringflow-ctl ports shows port 0's offloaded frames ($off0)"
		else
			fail "offload: ringflow-ctl ports: $(head -c 400 $TMP/ctl)"
		fi
	fi
	stop || return
	sleep 0.2
	after=$(ip netns exec $S cat /sys/class/net/$SI/statistics/rx_packets)
	local off tx
	off=$(sed -n 's/.*port 0 -> 1: offloaded \([0-9]*\) .*/\1/p' "$LOG")
	tx=$(sed -n 's/.*port 0 -> 1: rx [0-9]* = tx \([0-9]*\) .*/\1/p' "$LOG")
	if [ -n "$off" ] && [ -n "$tx" ] && [ $((off + tx)) -eq $((after - before)) ] && [ "$off" -ge 200 ]; then
		pass "offload: offloaded $off + userspace $tx = $((after - before)) received by SINK"
	else
		fail "offload: offloaded ${off:-?} + userspace ${tx:-?} != SINK's $((after - before)): $(grep ' -> ' "$LOG")"
	fi
	start packet "" --offload || { fail "offload on packet: did not start: $(cat "$LOG")"; return; }
	if [ "$(grep -c 'no XDP fast path' "$LOG")" -eq 2 ] &&
	   ip netns exec $G ping -q -c 2 -i 0.2 -W 2 $IPS >/dev/null 2>&1; then
		pass "offload on packet ports: one line each, forwarded in userspace: $(grep -m1 'fast path' "$LOG")"
	else
		fail "offload on packet ports: $(cat "$LOG")"
	fi
	stop
}
if [[ " $BACKENDS " == *" xdp "* && " $SKIPPED " != *" xdp "* ]]; then
	offload_case
fi

# ---- four ports: two pairs, each forwarding only within itself ----------------------------
# A second GEN/SINK pair on FWD's ports 2 and 3, with the same subnet as the first: SINK2 has
# its own address, and GEN2 reaches it (pair 2<->3) but not SINK's (that is pair 0<->1).
four_ports() {
	local ip2=10.$A.$B.3
	bed 1 || { fail "four ports: cannot rebuild the bed"; return; }
	ip netns add $G2 && ip netns add $S2 || { fail "four ports: netns"; return; }
	ip link add h$P netns $G2 type veth peer name fc$P netns $F &&
		ip link add t$P netns $S2 type veth peer name fd$P netns $F || { fail "four ports: veth"; return; }
	ip -n $G2 addr add 10.$A.$B.4/24 dev h$P && ip -n $S2 addr add $ip2/24 dev t$P
	for x in "$G2 h$P" "$S2 t$P" "$F fc$P" "$F fd$P"; do set -- $x; ip -n $1 link set $2 up; done
	ip netns exec $F "$L2FWD" --port "packet:dev=$FA" --port "packet:dev=$FB" \
		--port "packet:dev=fc$P" --port "packet:dev=fd$P" --cores 1 >$TMP/four.log 2>&1 &
	LP=$!
	echo $LP >>"$PIDS"
	LOG=$TMP/four.log
	for _ in $(seq 50); do grep -q "Ctrl-C stops" $LOG 2>/dev/null && break; sleep 0.1; done
	if ip netns exec $G ping -q -c 2 -i 0.2 -W 2 $IPS >/dev/null 2>&1 &&
	   ip netns exec $G2 ping -q -c 2 -i 0.2 -W 2 $ip2 >/dev/null 2>&1; then
		pass "four ports: GEN -> SINK through 0<->1 and GEN2 -> SINK2 through 2<->3"
	else
		fail "four ports: a pair does not forward: $(cat $LOG)"
	fi
	if ip netns exec $G2 ping -q -c 2 -i 0.2 -W 1 $IPS >/dev/null 2>&1; then
		fail "four ports: GEN2 reached SINK: frames crossed from pair 2<->3 to pair 0<->1"
	else
		pass "four ports: nothing crosses between the pairs"
	fi
	stop && [ "$(grep -c ' = tx ' $LOG)" -eq 4 ] && pass "four ports: four directions add up" ||
		fail "four ports: totals: $(grep ' -> ' $LOG)"
}
if [[ " $BACKENDS " == *" packet "* ]]; then
	four_ports
fi

[ $FAILS -eq 0 ] && echo "all passed" || echo "$FAILS failed"
[ $FAILS -eq 0 ]
