#!/usr/bin/env bash
# demo.sh BUILD_DIR: the main job, short (under a minute). Prints ringflow's figures beside its peers'.
#  1. the echo benchmark (seed 002), ~20 s: ringflow-echo + the open-loop ringflow-loadgen for each
#     backend that works here, and sockperf at the same rates, over a veth pair between two network
#     namespaces (root) or loopback (otherwise); few rates, short points. `make bench-echo` is the
#     full run.
#  2. the ring table (ringflow vs rte_ring, ck_ring, mutex).
set -euo pipefail
build=${1:-build}
echo "== ringflow demo: echo RTT over the I/O backends vs sockperf (open loop, short points) =="
bash "$(dirname "$0")/../bench/echo/run.sh" --build "$build" --rates 20k,200k \
  --warmup 0.2 --duration 0.6 --out "$build/demo-echo" --quiet \
  || echo "demo: the echo benchmark failed (see $build/demo-echo); continuing"
echo
echo "== ringflow demo: rings (ringflow vs rte_ring, ck_ring, mutex; pinned to CPUs 0 and 1) =="
"$build/bench/ringflow-bench" ring --duration 0.1 --repeats 5
echo "== mempool: get/put 2 KiB objects (ringflow vs rte_mempool, jemalloc, glibc; CPU 0) =="
"$build/bench/ringflow-bench" mempool --duration 0.1 --repeats 5
echo "== ringflow-stolen: CPU the kernel's receive softirq takes from a compute job (docs/stolen-cpu.md) =="
"$build/bench/tools/ringflow-stolen" --fifo --passes 25000
echo "== ringflow demo: hash, 100K 8-byte keys (ringflow vs rculfhash, ck_ht, rte_hash; as root the bench reserves 2 MiB hugepages for our table and gives them back, its last note says where each table ran) =="
"$build/bench/ringflow-bench" hash --quick --duration 0.1 --repeats 5
