/*
 * bench/kernels/alloc_kernels.h: the loops `ringflow-bench alloc` times: get an object of a
 * packet's size, write its header, give it back, with each allocator.
 *
 * The one idea (seed 003): a general-purpose allocator does bookkeeping on every call, and
 * initialising each buffer (memset) touches every byte; a pool of fixed-size objects, set
 * up once, hands out a pointer from a per-core cache. Two patterns: pairs (get, put, get,
 * put: the best case for any allocator, the same object comes back) and bursts (get 32,
 * then put 32, the way a poller allocates a receive burst).
 *
 * ringflow's mempool (ringflow/mempool.h) is the pool; the glibc and jemalloc kernels call each library by its own entry points
 * (__libc_malloc/__libc_free, mallocx/dallocx), because ringflow-bench links jemalloc and
 * so its plain malloc() is jemalloc's.
 *
 * Every kernel writes the object's index into its first 8 bytes on get and adds what it
 * reads back on put; the return value is that sum (plus, for the zeroing variants, the
 * object's last byte, which memset made 0), so a test can check the objects were real.
 * Sizes are >= 8. Returns UINT64_MAX if an allocation failed.
 */
#ifndef RINGFLOW_BENCH_ALLOC_KERNELS_H
#define RINGFLOW_BENCH_ALLOC_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AL_BURST 32

/* n get/put pairs of `size`-byte objects; zero: memset each object after getting it. */
uint64_t al_glibc_pairs(size_t size, uint64_t n, bool zero);
uint64_t al_jemalloc_pairs(size_t size, uint64_t n, bool zero);

/* n bursts: AL_BURST gets, then AL_BURST puts. */
uint64_t al_glibc_bursts(size_t size, uint64_t n, bool zero);
uint64_t al_jemalloc_bursts(size_t size, uint64_t n, bool zero);

/* The same with ringflow's mempool (objects of mp->elt_size bytes); bursts use the bulk calls
 * (rf_mempool_get_bulk / put_bulk of AL_BURST). mp needs at least AL_BURST free objects. */
struct rf_mempool;
uint64_t al_mempool_pairs(struct rf_mempool *mp, uint64_t n, bool zero);
uint64_t al_mempool_bursts(struct rf_mempool *mp, uint64_t n, bool zero);

/* What a pairs kernel returns for n objects (sum of 0..n-1); bursts: n * AL_BURST objects. */
static inline uint64_t al_expected_sum(uint64_t objects)
{
	return objects ? objects * (objects - 1) / 2 : 0;
}

#endif /* RINGFLOW_BENCH_ALLOC_KERNELS_H */
