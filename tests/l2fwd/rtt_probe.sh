#!/usr/bin/env bash
# tests/l2fwd/rtt_probe.sh: the ping RTT through ringflow-l2fwd on the packet driver (ring=v3
# and ring=v2) beside the Linux bridge, interleaved in one run (the figure in
# docs/dataplane-app.md). Not a test: it asserts nothing and is not registered in ctest.
#
#   tests/l2fwd/rtt_probe.sh build/apps/l2fwd/ringflow-l2fwd [ROUNDS]
#
# Bed: GEN --veth-- FWD --veth-- SINK (names carry the PID, deleted on any exit); ping GEN ->
# SINK, 300 echoes 5 ms apart per round; the forwarder on CPU 1, adaptive idle unless the row
# says busy. Prints one JSON line per (forwarder, round) and a table of the medians.
set -u
L2FWD=$1
ROUNDS=${2:-3}
[ "$(id -u)" -eq 0 ] || { echo "rtt_probe: needs root" >&2; exit 1; }
P=$$ G=rtg$$ F=rtf$$ S=rts$$
A=$((P % 200 + 20)) B=$(((P / 200) % 250))
cleanup() { [ -n "${L:-}" ] && kill -9 $L 2>/dev/null; for n in $G $F $S; do ip netns del $n 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 1' INT TERM
ip netns add $G && ip netns add $F && ip netns add $S
ip link add g0 netns $G type veth peer name fa netns $F
ip link add fb netns $F type veth peer name s0 netns $S
ip -n $G addr add 10.$A.$B.1/24 dev g0
ip -n $S addr add 10.$A.$B.2/24 dev s0
for n in $G $F $S; do ip -n $n link set lo up; done
ip -n $G link set g0 up; ip -n $S link set s0 up; ip -n $F link set fa up; ip -n $F link set fb up
OUT=$(mktemp)

probe() { # name: one round of ping, a JSON line into $OUT and stdout
	local r
	r=$(ip netns exec $G ping -q -c 300 -i 0.005 -W 1 10.$A.$B.2 | awk -F'[/ ]' '
		/packet loss/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) loss = $i }
		/rtt/ { min = $7; avg = $8; max = $9 }
		END { printf "\"min_ms\":%s,\"avg_ms\":%s,\"max_ms\":%s,\"loss\":\"%s\"", min, avg, max, loss }')
	echo "{\"bench\":\"l2fwd_rtt\",\"impl\":\"$1\",\"round\":$2,$r}" | tee -a $OUT
}

for r in $(seq $ROUNDS); do
	for mode in "v3 adaptive" "v2 adaptive" "v2 busy"; do
		set -- $mode
		ip netns exec $F taskset -c 1 "$L2FWD" --port packet:dev=fa,frames=1,ring=$1 \
			--port packet:dev=fb,frames=1,ring=$1 --cores 1 --idle $2 >/dev/null 2>&1 &
		L=$!
		sleep 0.5
		probe "l2fwd-packet-$1-$2" $r
		kill -INT $L; wait $L; L=
	done
	ip -n $F link add br0 type bridge && ip -n $F link set fa master br0 &&
		ip -n $F link set fb master br0 && ip -n $F link set br0 up
	sleep 0.3
	probe linux-bridge $r
	ip -n $F link del br0
done
echo
printf "%-28s %10s %10s   (medians of %d rounds; ranges in the JSON lines)\n" forwarder "min ms" "avg ms" $ROUNDS
for impl in $(sed 's/.*"impl":"\([^"]*\)".*/\1/' $OUT | sort -u); do
	mn=$(grep "\"$impl\"" $OUT | sed 's/.*"min_ms":\([0-9.]*\).*/\1/' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	av=$(grep "\"$impl\"" $OUT | sed 's/.*"avg_ms":\([0-9.]*\).*/\1/' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
	printf "%-28s %10s %10s\n" "$impl" "$mn" "$av"
done
rm -f $OUT
