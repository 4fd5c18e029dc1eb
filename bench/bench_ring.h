/* bench/bench_ring.h: what bench_ring.c needs from bench_ring_pad64.c. */
#ifndef RINGFLOW_BENCH_RING_H
#define RINGFLOW_BENCH_RING_H

#include "harness.h"

/* ringflow's ring with 64 B instead of 128 B between producer and consumer state. */
double rb_pad64_throughput(void *arg, const struct rf_bench_ctx *ctx);
double rb_pad64_handoff(void *arg, const struct rf_bench_ctx *ctx);

#endif
