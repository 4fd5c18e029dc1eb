/*
 * bench/kernels/falseshare_kernels.h: the loops `ringflow-bench falseshare` times, in a form
 * the tests can run on tiny counts.
 *
 * The one idea: two cores writing two different variables still fight if the variables share
 * a 64-byte cache line; each write takes the whole line away from the other core. A
 * fs_counters block places n counters `stride` bytes apart: stride 8 puts them side by side
 * in one line, 64 gives each its own line, 128 its own pair of lines (the adjacent-line
 * prefetcher fetches lines in pairs on some CPUs).
 *
 * Every counter has one writer, its thread. The "plain" increment is a relaxed atomic load
 * and a relaxed atomic store: on x86-64 it compiles to an ordinary load, add and store
 * (no lock prefix), but unlike a plain `c++` the compiler must perform every store, so the
 * loop cannot collapse into one `c += n`. The "atomic" increment is a relaxed fetch-add
 * (`lock xadd`). Relaxed is enough in both: nothing is published through these counters,
 * they are read only after the threads are joined.
 */
#ifndef RINGFLOW_BENCH_FALSESHARE_KERNELS_H
#define RINGFLOW_BENCH_FALSESHARE_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>

struct fs_counters {
	unsigned char *base; /* 128-byte aligned */
	size_t stride;       /* bytes from one counter to the next (>= 8, multiple of 8) */
	unsigned n;
};

/* Allocates n zeroed counters `stride` bytes apart. Returns 0 or -ENOMEM/-EINVAL. */
int fs_counters_init(struct fs_counters *c, unsigned n, size_t stride);
void fs_counters_fini(struct fs_counters *c);

/* Counter i (0 <= i < n). */
static inline _Atomic uint64_t *fs_counter(const struct fs_counters *c, unsigned i)
{
	return (_Atomic uint64_t *)(void *)(c->base + (size_t)i * c->stride);
}

/* Sum of all counters (call when no thread is writing). */
uint64_t fs_counters_sum(const struct fs_counters *c);

/* iters increments of *c: relaxed fetch-add (atomic) or relaxed load + store (plain). */
void fs_increment_atomic(_Atomic uint64_t *c, uint64_t iters);
void fs_increment_plain(_Atomic uint64_t *c, uint64_t iters);

/* The real case: the per-core counters a poller bumps for every packet, the same fields as
 * the runtime's struct rf_core_counters (ringflow/runtime.h): 7 x 8 = 56 bytes. */
struct fs_stats {
	_Atomic uint64_t rx, tx, drop_ring_full, drop_pool_empty, drop_driver, loops, idle_blocks;
};

/* One per core, packed (56 B apart: neighbours share lines) or one line each, the way the
 * runtime lays them out (alignas(RF_CACHE_LINE)). */
struct fs_stats_packed {
	struct fs_stats s;
};
struct fs_stats_aligned {
	RF_CACHE_ALIGNED struct fs_stats s;
};

/* Packets [first_packet, first_packet + packets) through *s, as a poller counts them
 * (single writer, relaxed load + store, like rf_counter_add): rx and tx per packet, one
 * loop per 32 packets (a burst), one drop_ring_full per 1024. */
void fs_stats_update(struct fs_stats *s, uint64_t first_packet, uint64_t packets);

#endif /* RINGFLOW_BENCH_FALSESHARE_KERNELS_H */
