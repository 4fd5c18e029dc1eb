/*
 * bench/bench_ring_pad64.c: ringflow's ring rebuilt with its producer and consumer blocks
 * 64 B apart instead of 128 B, to measure whether the adjacent-line prefetcher makes the
 * extra padding worth it on this CPU. Same inline code, other layout: this translation unit
 * defines RF_RING_HEADTAIL_ALIGN before including the header and never shares a ring with
 * the rest of the program.
 */
#define RF_RING_HEADTAIL_ALIGN 64
#include <ringflow/ring.h>

#include <stdlib.h>

#include "bench_ring.h"
#include "ring_bench_loops.h"

static void *pad64_create(unsigned count, unsigned mode)
{
	size_t sz = sizeof(struct rf_ring) + (size_t)count * sizeof(void *);
	struct rf_ring *r = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	if (r)
		rf_ring_layout_init_pvt(r, "pad64", count,
					mode == 0 ? RF_RING_SP_ENQ | RF_RING_SC_DEQ : 0);
	return r;
}

static void pad64_destroy(void *q) { free(q); }

static inline unsigned pad64_enq(void *q, void **o, unsigned n)
{
	return rf_ring_enqueue_burst(q, o, n, NULL);
}

static inline unsigned pad64_deq(void *q, void **o, unsigned n)
{
	return rf_ring_dequeue_burst(q, o, n, NULL);
}

RING_BENCH_IMPL(pad64, pad64_create, pad64_destroy, pad64_enq, pad64_deq)

double rb_pad64_throughput(void *arg, const struct rf_bench_ctx *ctx)
{
	return pad64_throughput(arg, ctx);
}

double rb_pad64_handoff(void *arg, const struct rf_bench_ctx *ctx)
{
	return pad64_handoff(arg, ctx);
}
