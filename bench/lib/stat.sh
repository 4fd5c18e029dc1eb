#!/usr/bin/env bash
# bench/lib/stat.sh: counters and CPU samples the benchmark beds share (bench/lib/bed.sh for
# bench/fwd, bench/switch; bench/echo). Defines functions only; nothing runs at source time.
#   devpk PID DEV      rx and tx packets of DEV seen from PID's namespace: "rx tx"
#   now_ns             the wall clock in ns
#   cpu_sample         /proc/stat: "name total busy steal" for the machine and each CPU, one line
#   cpu_json A B [load]   two samples as JSON fields "steal_pct" and "cpu_busy_pct" (with
#                      load: "load1" from /proc/loadavg between them, as bench/echo prints)
# shellcheck shell=bash

# rx and tx packets of one device, from a namespace's anchor: "rx tx".
# /proc/net/dev: "name: rx-bytes rx-packets ... (8 rx fields) tx-bytes tx-packets ..."; a large
# count may touch the colon, so split on it.
devpk() {
  awk -v d="$2" '{ i = index($0, ":"); if (i == 0) next; name = substr($0, 1, i - 1); gsub(/ /, "", name)
    if (name != d) next; split(substr($0, i + 1), f, " "); print f[2], f[10] }' "/proc/$1/net/dev"
}
now_ns() { date +%s%N; }
# /proc/stat: "total busy steal" of the machine and "total busy" of each CPU, one line.
cpu_sample() {
  awk '/^cpu/ { t=$2+$3+$4+$5+$6+$7+$8+$9; b=$2+$3+$4+$7+$8; printf "%s %d %d %d ", $1, t, b, $9 }' /proc/stat
}
cpu_json() { # sample-a sample-b [load]: "steal_pct":..,["load1":..,]"cpu_busy_pct":[..]
  awk -v a="$1" -v b="$2" -v load="${3:-}" 'BEGIN {
    na = split(a, x, " "); split(b, y, " "); list = ""
    for (i = 1; i <= na; i += 4) {
      dt = y[i+1] - x[i+1]; db = y[i+2] - x[i+2]; ds = y[i+3] - x[i+3]
      if (x[i] == "cpu") steal = dt > 0 ? 100 * ds / dt : 0
      else list = list (list == "" ? "" : ",") sprintf("%.1f", dt > 0 ? 100 * db / dt : 0)
    }
    if (load == "") { printf "\"steal_pct\":%.2f,\"cpu_busy_pct\":[%s]", steal, list; exit }
    getline la < "/proc/loadavg"; split(la, l, " ")
    printf "\"steal_pct\":%.2f,\"load1\":%.2f,\"cpu_busy_pct\":[%s]", steal, l[1], list }'
}
