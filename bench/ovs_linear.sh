#!/usr/bin/env bash
# bench/ovs_linear.sh: how fast ringflow-controller discovers a linear topology of real Open
# vSwitch bridges. Starts the controller (learning,topology, REST on loopback) and an OVS bed
# (tests/openflow/ovs_bed.sh) of N userspace bridges in a line, all pointed at the controller
# in one transaction, then polls GET /api/links until all 2(N-1) directed links are there
# (at most 30 s). Prints one JSON line: the controller's own measure (first switch up to last
# new link, from /api/stats) and the links found. Needs root.
#   bench/ovs_linear.sh [N=100] [BUILD_DIR=build]
set -euo pipefail
n=${1:-100}
build=${2:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
ctl_bin=$here/$build/apps/openflow/controller/ringflow-controller
[ -x "$ctl_bin" ] || { echo "ovs_linear.sh: $ctl_bin missing; build first (make build)" >&2; exit 1; }
command -v curl >/dev/null || { echo "ovs_linear.sh: curl missing; run scripts/deps.sh" >&2; exit 1; }

port=$((20000 + $$ % 20000))
rest=$((port + 1))
"$ctl_bin" --listen "127.0.0.1:$port" --rest "127.0.0.1:$rest" --app learning,topology \
  --cores 0 --idle adaptive >/dev/null 2>&1 &
ctl_pid=$!
trap 'kill "$ctl_pid" 2>/dev/null; wait "$ctl_pid" 2>/dev/null' EXIT

export N=$n REST=$rest
"$here/tests/openflow/ovs_bed.sh" -c "tcp:127.0.0.1:$port" -b "$n" -H 0 -- bash -c '
  want=$((2 * (N - 1))); found=0
  for i in $(seq 150); do
    found=$(curl -sf "http://127.0.0.1:$REST/api/links" | grep -o "\"src\"" | wc -l) || found=0
    [ "$found" -ge "$want" ] && break
    sleep 0.2
  done
  ms=$(curl -sf "http://127.0.0.1:$REST/api/stats" |
       grep -o "\"first_switch_up_to_last_new_link_ms\":[0-9.]*" | cut -d: -f2)
  echo "{\"bench\":\"ovs_linear\",\"impl\":\"ringflow\",\"bridges\":$N,\"links_expected\":$want,\"links_found\":$found,\"discovery_ms\":${ms:-null}}"
  [ "$found" -eq "$want" ]'
