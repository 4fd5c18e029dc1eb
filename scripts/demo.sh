#!/usr/bin/env bash
# demo.sh BUILD_DIR: the main job, short. Prints ringflow's figures beside its peers'.
set -euo pipefail
build=${1:-build}
echo "== ringflow demo: rings (ringflow vs rte_ring, ck_ring, mutex; pinned to CPUs 0 and 1) =="
"$build/bench/ringflow-bench" ring --duration 0.1 --repeats 5
echo "== mempool: get/put 2 KiB objects (ringflow vs rte_mempool, jemalloc, glibc; CPU 0) =="
"$build/bench/ringflow-bench" mempool --duration 0.1 --repeats 5
echo "== ringflow-stolen: CPU the kernel's receive softirq takes from a compute job (docs/stolen-cpu.md) =="
"$build/bench/tools/ringflow-stolen" --fifo --passes 25000
echo "== ringflow demo: hash, 100K 8-byte keys (ringflow vs rculfhash, ck_ht, rte_hash) =="
"$build/bench/ringflow-bench" hash --quick --duration 0.1 --repeats 5
