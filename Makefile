# A thin layer over CMake. Every target first makes sure the Debian packages are there
# (scripts/deps.sh installs what is missing, as root), then configures and builds.
#   make demo        the main job: a short run that prints ringflow's figures beside its peers
#   make test        build and run every test but the long ones (ctest -LE long; root-only tests
#                    skip with a reason otherwise)
#   make conformance-goals  the long one: os-ken's suite with issue 25's goals asserted (~28 min)
#   make asan-test   the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan-test   the concurrent tests under ThreadSanitizer
#   make bench       every benchmark, full length
#   make fuzz        libFuzzer targets (clang, ASan+UBSan) for FUZZ_TIME s each on their corpus
#   make min-test    the core alone (every optional part off: libc + liburcu) and its tests
#   make abi-dump    regenerate abi/ringflow.abi, the ABI the test abi_check holds the library to
#                    (only after a deliberate change: docs/abi.md)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_ARGS ?= --output-on-failure

.PHONY: all deps build test demo bench asan-test tsan-test fuzz clean min-test abi-dump

all: build

deps:
	@bash scripts/deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest $(CTEST_ARGS) -j 2 -LE long

demo: build
	bash scripts/demo.sh $(BUILD)

bench: build
	$(BUILD)/bench/ringflow-bench ring
	$(BUILD)/bench/ringflow-bench falseshare
	$(BUILD)/bench/ringflow-bench branch
	$(BUILD)/bench/ringflow-bench atomics
	$(BUILD)/bench/ringflow-bench alloc
	$(BUILD)/bench/ringflow-bench mempool
	$(BUILD)/bench/ringflow-bench hash

asan-test: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DRF_SANITIZE=address,undefined -DRF_DEBUG_CHECKS=ON $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest $(CTEST_ARGS) -j 2 -LE nosan

tsan-test: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DRF_SANITIZE=thread $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  ctest $(CTEST_ARGS) -j 2 -L concurrent

FUZZ_TIME ?= 60
fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang \
	  -DRF_SANITIZE=address,undefined -DRF_BUILD_FUZZ=ON -DRF_BUILD_TESTS=OFF -DRF_BUILD_BENCH=OFF $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS) --target fuzz_of_parser
	mkdir -p build-fuzz/corpus/openflow
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_of_parser -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=1024 \
	  -artifact_prefix=build-fuzz/ build-fuzz/corpus/openflow tests/fuzz/corpus/openflow
	cmake --build build-fuzz -j $(JOBS) --target fuzz_net_frame
	mkdir -p build-fuzz/corpus/net
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_net_frame -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=1024 \
	  -artifact_prefix=build-fuzz/ build-fuzz/corpus/net
	cmake --build build-fuzz -j $(JOBS) --target fuzz_sw_frame
	mkdir -p build-fuzz/corpus/sw_frame
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_sw_frame -max_total_time=$$(( $(FUZZ_TIME) / 2 + 1 )) -timeout=10 \
	  -rss_limit_mb=1024 -artifact_prefix=build-fuzz/ build-fuzz/corpus/sw_frame tests/fuzz/corpus/sw_frame
	cmake --build build-fuzz -j $(JOBS) --target fuzz_of_group
	mkdir -p build-fuzz/corpus/of_group
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_of_group -max_total_time=$$(( $(FUZZ_TIME) / 2 + 1 )) -timeout=10 \
	  -rss_limit_mb=1024 -artifact_prefix=build-fuzz/ build-fuzz/corpus/of_group
	cmake --build build-fuzz -j $(JOBS) --target fuzz_lg_sink
	mkdir -p build-fuzz/corpus/lg_sink
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_lg_sink -max_total_time=$$(( $(FUZZ_TIME) / 2 + 1 )) -timeout=10 \
	  -rss_limit_mb=1024 -artifact_prefix=build-fuzz/ build-fuzz/corpus/lg_sink
	cmake --build build-fuzz -j $(JOBS) --target fuzz_json
	mkdir -p build-fuzz/corpus/json
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_json -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=1024 \
	  -artifact_prefix=build-fuzz/ build-fuzz/corpus/json tests/fuzz/corpus/json
	cmake --build build-fuzz -j $(JOBS) --target fuzz_opts
	mkdir -p build-fuzz/corpus/opts
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_opts -max_total_time=$$(( $(FUZZ_TIME) / 4 + 1 )) -timeout=10 \
	  -rss_limit_mb=1024 -artifact_prefix=build-fuzz/ build-fuzz/corpus/opts
	cmake --build build-fuzz -j $(JOBS) --target fuzz_of_meter
	mkdir -p build-fuzz/corpus/meter
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build-fuzz/tests/fuzz/fuzz_of_meter -max_total_time=$$(( $(FUZZ_TIME) / 2 + 1 )) -timeout=10 \
	  -rss_limit_mb=1024 -artifact_prefix=build-fuzz/ build-fuzz/corpus/meter tests/fuzz/corpus/meter

# The minimal build: every optional package switched off (cmake/RingflowDeps.cmake).
RF_MIN_FLAGS = -DRF_WITH_URING=OFF -DRF_WITH_XDP=OFF -DRF_WITH_DPDK=OFF -DRF_WITH_CK=OFF \
  -DRF_WITH_JEMALLOC=OFF -DRF_WITH_LIBEVENT=OFF -DRF_WITH_CURL=OFF
min-test: deps
	cmake -S . -B build-min -DCMAKE_BUILD_TYPE=Release $(RF_MIN_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-min -j $(JOBS)
	cd build-min && ctest $(CTEST_ARGS) -j 2 -LE long

# The stored ABI (docs/abi.md): from the Release build of the full configuration, as CI's
# `make test` builds it.
abi-dump: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS) --target ringflow_shared
	bash tests/abi/check_abi.sh --write $(BUILD)/libringflow.so abi/ringflow.abi include

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-min

# The echo benchmark (seed 002): netns + veth (root) or loopback, every backend + sockperf.
.PHONY: bench-echo
bench-echo: build
	bash bench/echo/run.sh --build $(BUILD)

# The netperf-style modes (stream, rr, crr) beside iperf3, sockperf ping-pong and a CRR floor.
.PHONY: bench-modes
bench-modes: build
	bash bench/echo/modes.sh --build $(BUILD)
# What scraping /metrics every 100 ms costs ringflow-echo (100k msg/s and saturated, loopback)
# and ringflow-l2fwd (the forwarding bed's namespaces, root), with vs without, same run; and
# whether the new counters slowed the mempool and ring fast paths (docs/observing.md).
OBSERVE_BASE ?= c856988
.PHONY: bench-observe
bench-observe: build
	bash bench/observe/scrape_cost.sh $(BUILD) 20 echo:100k,echo:max,l2fwd
	bash bench/observe/fastpath_cost.sh $(BUILD) $(OBSERVE_BASE) 5 "mempool ring"
# The forwarding bed (issue 13): GEN -> FWD -> SINK namespaces, ringflow-l2fwd on every frame
# backend beside dpdk-testpmd, OVS userspace and the Linux bridge (docs/forwarding-benchmark.md).
# FWD_ARGS passes options, e.g. make bench-fwd FWD_ARGS=--quick
.PHONY: bench-fwd
bench-fwd: build
	bash bench/fwd/run.sh --build $(BUILD) $(FWD_ARGS)

# ringflow-switch vs OVS userspace on the forwarding bed (issue 14, docs/switch.md "Figures"):
# 1 flow, 1K exact, 100K wildcard flows, churn, flow setup. SWITCH_ARGS passes options, e.g.
# make bench-switch SWITCH_ARGS=--quick
.PHONY: bench-switch
bench-switch: build
	bash bench/switch/run.sh --build $(BUILD) $(SWITCH_ARGS)

# The controller cluster (issue 26, docs/cluster.md "Benchmark"): kill -9 failover rounds,
# ofbench against one and three members, etcd's write rate; root, ~6 min. CLUSTER_ARGS passes
# options, e.g. make bench-cluster CLUSTER_ARGS="--rounds 5"
.PHONY: bench-cluster
bench-cluster: build
	bash bench/cluster/run.sh --build $(BUILD) $(CLUSTER_ARGS)

# os-ken's OpenFlow 1.3 switch test tool over every pattern set, ringflow-switch and OVS
# userspace as targets (issue 25, docs/switch.md "Conformance"); ~32 min, root. The patterns:
# RF_OSKEN_OF13 (default ../shared/osken-of13) and our own (tests/ofswitch/own_patterns.py);
# CONFORMANCE_SETS picks sets, e.g. "group meter own:pipeline".
.PHONY: conformance
conformance: build
	bash tests/ofswitch/conformance.sh $(BUILD)/apps/ofswitch/ringflow-switch

# The same over the shared sets with issue 25's goals asserted (ctest -L long:
# ofswitch_conformance_goals, ~28 min, root); CI runs it after make test.
.PHONY: conformance-goals
conformance-goals: build
	cd $(BUILD) && ctest $(CTEST_ARGS) -L long

# The controller under a mixed attack (issue 15), SOAK_S seconds (default 180): prints RSS,
# fds, CPU and the good switches' PACKET_IN -> reply p99 every 5 s. Not in CI.
SOAK_S ?= 180
.PHONY: soak
soak: build
	cmake --build $(BUILD) --target ringflow_soak
	SOAK_S=$(SOAK_S) $(BUILD)/tests/openflow/ringflow_soak $(BUILD)/apps/openflow/controller/ringflow-controller
