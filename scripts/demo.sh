#!/usr/bin/env bash
# demo.sh BUILD_DIR: the main job, short. Prints ringflow's figures beside its peers'.
set -euo pipefail
build=${1:-build}
echo "== ringflow demo: rings (ringflow vs rte_ring, ck_ring, mutex; pinned to CPUs 0 and 1) =="
"$build/bench/ringflow-bench" ring --duration 0.1 --repeats 5
echo "== ringflow demo: hash, 100K 8-byte keys (ringflow vs rculfhash, ck_ht, rte_hash) =="
"$build/bench/ringflow-bench" hash --quick --duration 0.1 --repeats 5
