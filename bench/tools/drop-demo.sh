#!/usr/bin/env bash
# drop-demo.sh [BUILD_DIR] [READER_CPU]: ringflow-netstat watching a veth pair under a UDP
# flood, so the drops show up where docs/diagnosing-drops.md says they do. Root; about 6 s.
#   netns rfdd<pid>a: sockperf throughput on CPU 0 (64-byte datagrams, as fast as it can)
#   netns rfdd<pid>b: sockperf server pinned on READER_CPU (default 1); RPS sends the receive
#                     softirq to CPU 1, so by default the reader competes with the kernel
#                     work done for it.
set -euo pipefail
build=${1:-build}
reader_cpu=${2:-1}
netstat="$build/bench/tools/ringflow-netstat"
[ "$(id -u)" = 0 ] || { echo "drop-demo.sh: needs root (creates network namespaces)"; exit 1; }
a=rfdd$$a b=rfdd$$b
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	ip netns del "$a" 2>/dev/null || true
	ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip -n "$a" link add "$a" type veth peer name "$b" netns "$b"
ip -n "$a" addr add 10.202.0.1/24 dev "$a"
ip -n "$b" addr add 10.202.0.2/24 dev "$b"
ip -n "$a" link set "$a" up
ip -n "$b" link set "$b" up
ip netns exec "$b" sh -c "echo 2 > /sys/class/net/$b/queues/rx-0/rps_cpus"
ip netns exec "$b" taskset -c "$reader_cpu" sockperf server -i 10.202.0.2 -p 11111 >/dev/null 2>&1 &
pids+=($!)
sleep 0.5
ip netns exec "$a" taskset -c 0 sockperf throughput -i 10.202.0.2 -p 11111 -m 64 -t 5 \
	>/dev/null 2>&1 &
pids+=($!)
sleep 1.5 # sockperf's warm-up
"$netstat" --netns "$b" --dev "$b" --interval 1 --count 3
