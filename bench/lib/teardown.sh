#!/usr/bin/env bash
# bench/lib/teardown.sh TAG [STATE_DIR]: removes everything one run of the forwarding bed
# (bench/fwd/run.sh, PID TAG) made, and nothing else. run.sh calls it from its exit trap; a
# watchdog it starts calls it too when run.sh dies without running its trap (SIGKILL), so the
# bed is gone either way.
#   - every process inside the run's three namespaces (rffg/rfff/rffs + TAG), found with
#     `ip netns pids` and killed by PID (TERM, then KILL after 2 s): forwarders, trafgen, the
#     private OVS daemons, the latency tool; only processes this run started live there;
#   - the namespaces themselves (their veths and bridges go with them);
#   - DPDK runtime directories of this run's file prefixes (/var/run/dpdk/rffwdTAGt*) and of
#     ringflow processes it killed (rf<pid>);
#   - STATE_DIR (the run's private directory: OVS database and sockets, trafgen config).
# Touches nothing in the root namespace.
set -u
tag=${1:?usage: teardown.sh TAG [STATE_DIR]}
state=${2:-}
case "$tag" in *[!0-9]*) echo "teardown.sh: TAG must be a PID" >&2; exit 2 ;; esac
nss=(rffg$tag rfff$tag rffs$tag)
pids=()
for ns in "${nss[@]}"; do
  [ -e "/run/netns/$ns" ] || continue
  for p in $(ip netns pids "$ns" 2>/dev/null); do
    [ "$p" != "$$" ] && pids+=("$p")
  done
done
if [ ${#pids[@]} -gt 0 ]; then
  kill -TERM "${pids[@]}" 2>/dev/null
  for _ in $(seq 20); do
    alive=()
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
    [ ${#alive[@]} -eq 0 ] && break
    sleep 0.1
  done
  for p in "${alive[@]}"; do kill -KILL "$p" 2>/dev/null; done
  # ringflow's dpdk driver names its EAL runtime directory rf<pid>
  for p in "${pids[@]}"; do rm -rf "/var/run/dpdk/rf$p" 2>/dev/null; done
fi
for ns in "${nss[@]}"; do
  [ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
done
rm -rf /var/run/dpdk/rffwd"$tag"t* 2>/dev/null
if [ -n "$state" ]; then
  case "$state" in /tmp/ringflow-fwd-"$tag".*) rm -rf "$state" ;; esac
fi
exit 0
