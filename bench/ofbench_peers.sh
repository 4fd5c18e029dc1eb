#!/usr/bin/env bash
# bench/ofbench_peers.sh: ringflow-ofbench against ringflow-controller (learning switch),
# ovs-testcontroller (learning switch, OpenFlow 1.0), os-ken (Ryu's fork, running
# bench/peers/osken_learning_switch.py, OpenFlow 1.3) and the trivial built-in responder (the
# generator's own ceiling), interleaved in one run. ringflow runs in both versions so each
# peer is compared in its own.
# Generator pinned to CPU 0, controller to CPU 1; each on a loopback port of its own,
# started and stopped by PID. Usage: bench/ofbench_peers.sh [BUILD_DIR] [ROUNDS] [all|rate]
# WHAT: all (default) or rate (only the open-loop 100K/s runs: ringflow, ovs-testcontroller,
# the responder). Rate runs use --mlock. Prints ofbench's JSON lines (stdout) and tables
# (stderr).
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-2}
WHAT=${3:-all}
OFB=$BUILD/apps/openflow/ofbench/ringflow-ofbench
OTC=/usr/bin/ovs-testcontroller
CTL=$BUILD/apps/openflow/controller/ringflow-controller
[ -x "$CTL" ] || { echo "ofbench_peers: $CTL missing; run make build first" >&2; exit 1; }
[ -x "$OFB" ] || { echo "ofbench_peers: $OFB missing; run make build first" >&2; exit 1; }
[ -x "$OTC" ] || { echo "ofbench_peers: $OTC missing; run scripts/deps.sh (openvswitch-testcontroller)" >&2; exit 1; }
OSKEN=/usr/bin/osken-manager
OSKEN_APP=$(cd "$(dirname "$0")" && pwd)/peers/osken_learning_switch.py
[ -x "$OSKEN" ] || { echo "ofbench_peers: $OSKEN missing; run scripts/deps.sh (python3-os-ken)" >&2; exit 1; }

dir=$(mktemp -d /tmp/rf-ofbench-XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
port=$(( 20000 + $$ % 20000 ))

start() { # start IMPL: launches the controller on CPU 1, sets $pid
  port=$((port + 1))
  case $1 in
    responder) taskset -c 1 "$OFB" --responder --busy --listen 127.0.0.1:$port >"$dir/log" 2>&1 & ;;
    ringflow) "$CTL" --listen 127.0.0.1:$port --cores 1 >"$dir/log" 2>&1 & ;;
    ovs-testcontroller) OVS_RUNDIR=$dir OVS_LOGDIR=$dir taskset -c 1 "$OTC" -vwarn \
        ptcp:$port:127.0.0.1 >"$dir/log" 2>&1 & ;;
    os-ken) taskset -c 1 "$OSKEN" --ofp-listen-host 127.0.0.1 --ofp-tcp-listen-port $port \
        "$OSKEN_APP" >"$dir/log" 2>&1 & ;;
  esac
  pid=$!
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0; sleep 0.1; done
  echo "ofbench_peers: $1 did not start listening on $port: $(tail -1 "$dir/log")" >&2; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""; }

run() { # run IMPL ARGS...: one controller process per measurement
  local impl=$1; shift
  start "$impl"
  "$OFB" --controller 127.0.0.1:$port --cpu 0 --json --name "$impl" "$@"
  stop
}

case $WHAT in all|rate) ;; *) echo "ofbench_peers: unknown '$WHAT': all or rate" >&2; exit 2 ;; esac
for r in $(seq "$ROUNDS"); do
  for impl in ringflow ovs-testcontroller responder; do
    if [ "$WHAT" = all ]; then
      run $impl -O 1.0 -s 16 -M 1000 -l 5 -t 1 --mode throughput
      run $impl -O 1.0 -s 16 -M 1000 -l 3 -t 1 --mode latency
    fi
    run $impl -O 1.0 -s 1 -M 1000 -l 3 -t 1 --mode rate --rate 100000 --mlock
  done
  [ "$WHAT" = rate ] && continue
  # OpenFlow 1.3 (os-ken's simple switch speaks 1.3 only); ringflow again, in 1.3.
  for impl in ringflow os-ken; do
    run $impl -s 16 -M 1000 -l 5 -t 1 --mode throughput
    run $impl -s 16 -M 1000 -l 3 -t 1 --mode latency
  done
done
