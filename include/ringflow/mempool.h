/*
 * ringflow/mempool.h: fixed-size object pools on hugepages, with per-thread caches.
 *
 * A pool is n objects of one size carved out of ONE contiguous, page-aligned region
 * (2 MiB hugepages via mmap(MAP_HUGETLB), 1 GiB pages with RF_MEMPOOL_HUGE_1G, normal pages
 * as the fallback, announced by one warning line that says how to reserve hugepages).
 * Objects start on cache lines, at a stride that is an ODD number of cache lines, so
 * consecutive objects start in different cache sets (a 2 KiB object alone on a 4 KiB page
 * would put every object in the same sets: see docs/mempool.md).
 *
 * Free objects live in two places, as in DPDK's rte_mempool:
 *   - a lock-free common pool: an MPMC rf_ring holding pointers to free objects;
 *   - a per-thread cache per pool (the caller's thread; pollers are one thread per core),
 *     a small LIFO stack only that thread touches. get/put hit the cache; only when it runs
 *     empty (refill) or over its flush threshold (flush) does a thread touch the ring.
 *     So the common case reads one read-only line of the pool and writes only the
 *     thread's own cache.
 *
 * Contract:
 *   - get/put/get_bulk/put_bulk/avail_count/cache_flush may run concurrently from any
 *     threads. create and free may not run concurrently with any other use of that pool.
 *   - Each object is handed out at most once until it is put back (linearizable through the
 *     ring; the caches are private). An object may be put by another thread than the one
 *     that got it; it then lands in the putting thread's cache.
 *   - A get takes from the ring and the caller's own cache, together if needed; objects in
 *     OTHER threads' caches are not available to it: a get may fail with -ENOBUFS while
 *     other threads' caches still hold free objects. rf_mempool_avail_count
 *     counts them (ring + every thread's cache), so after all threads stop it is exact.
 *     A thread's cache is flushed back to the ring by rf_mempool_cache_flush() and, for
 *     threads created with pthreads, automatically when the thread exits.
 *   - At most RF_MEMPOOL_MAX_CACHED pools exist with caches at a time; pools made past that
 *     work without a cache (every call goes to the ring).
 *   - The pool never writes into a free object (pointers live in the ring and caches), except
 *     in debug mode, which poisons it. Contents are not preserved across put/get.
 *
 * Debug checks (flag RF_MEMPOOL_DEBUG, or every pool in a build with RF_DEBUG_CHECKS, as
 * `make asan-test` does): each object has a cookie (FREE/IN USE) kept outside the region, and
 * free objects are filled with a poison byte. A put of a pointer that is not an object of this
 * pool, or of an object already free (double put), logs one line (rf_log) and is rejected:
 * the object is not put (not UB). A get that finds the poison overwritten reports a write
 * after put. rf_mempool_debug_errors() counts the reports. The pools under pktbuf.h make
 * these reports fatal (one line naming the pktbuf call, then abort: see pktbuf.h).
 *
 * Errors: rf_mempool_create returns NULL with errno (EINVAL: bad arguments, ENOMEM: n * size
 * beyond memory, ENAMETOOLONG: name); calls that move objects return 0 or -ENOBUFS (nothing
 * taken); others as documented.
 */
#ifndef RINGFLOW_MEMPOOL_H
#define RINGFLOW_MEMPOOL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ringflow/common.h>
#include <ringflow/ring.h>

#ifdef __cplusplus
extern "C" {
#endif
RF_API_BEGIN

/* Flags for rf_mempool_create. */
#define RF_MEMPOOL_NO_HUGE 0x1u  /* normal pages only, no warning */
#define RF_MEMPOOL_HUGE_1G 0x2u  /* try 1 GiB pages first, then 2 MiB, then normal pages */
#define RF_MEMPOOL_NO_CACHE 0x4u /* no per-thread caches: every call uses the ring */
#define RF_MEMPOOL_DEBUG 0x8u    /* cookies and poison (always on with RF_DEBUG_CHECKS) */
#define RF_MEMPOOL_QUIET 0x10u   /* no warning line on the normal-page fallback */

#define RF_MEMPOOL_NAMESIZE 32
#define RF_MEMPOOL_CACHE_MAX 512     /* largest cache_size */
#define RF_MEMPOOL_MAX_CACHED 256    /* pools with per-thread caches at one time */
#define RF_MEMPOOL_POISON 0x6b       /* byte free objects are filled with in debug mode */

/* One thread's cache of one pool: only its thread touches objs; len is atomic (relaxed) only
 * so rf_mempool_avail_count may read it from another thread. */
struct rf_mempool_cache {
	_Atomic(unsigned) len;  /* objects in objs[0..len) */
	unsigned size;         /* target fill after a refill (the pool's cache_size) */
	unsigned flushthresh;  /* a put that would pass this flushes down to size / 2 first */
	/* Gets the cache served alone (no ring access): written by this cache's thread only,
	 * on the line it already writes (len), with a relaxed load + store, no read-modify-write;
	 * rf_mempool_stats_get sums it over every cache. */
	_Atomic(uint64_t) hits;
	/* The pool's list of caches: pushed at the head (under the mempool lock), never unlinked
	 * until the pool is freed, so rf_mempool_avail_count walks it without a lock. A cache
	 * whose thread exited is drained and kept for the next thread (owned false). */
	_Atomic(struct rf_mempool_cache *) next;
	bool owned; /* under the mempool lock */
	struct rf_mempool *mp;
	/* Slow-path events, written only by this cache's thread (relaxed load + store), read by
	 * rf_mempool_stats_get: gets the cache could not serve (they went to the ring), flushes
	 * to the ring, gets that failed because the pool was empty. */
	_Atomic(uint64_t) misses, flushes, empty;
	alignas(RF_CACHE_LINE) void *objs[]; /* 2 * size slots */
};

struct rf_mempool_slow_pvt; /* the pool's list of caches, debug state (mempool/mempool_pvt.h) */

struct rf_mempool {
	/* Read-only after create: the one line every fast-path call reads. */
	RF_CACHE_ALIGNED struct rf_ring *ring; /* the common pool (MPMC) */
	uint64_t fast_gen;     /* == gen when the inline fast path may use a thread's cache;
				* UINT64_MAX (matches no slot) for debug and cacheless pools */
	uint64_t gen;          /* unique per pool ever created: validates a thread's cache slot */
	unsigned id;           /* slot in the per-thread cache table (when cache_size > 0) */
	unsigned cache_size;   /* 0: no per-thread caches */
	unsigned flushthresh;  /* cache_size * 3 / 2 */
	unsigned debug;        /* 1: cookies and poison, calls take the checked path */
	unsigned n;            /* objects */
	unsigned flags;
	char *base;            /* region start (page aligned) == first object */
	size_t elt_size;       /* bytes asked for per object */
	size_t stride;         /* bytes between objects: odd multiple of RF_CACHE_LINE */
	/* Read-only, off the fast path. */
	size_t region_len;     /* bytes mapped (a multiple of page_size) */
	size_t page_size;      /* 4 KiB, 2 MiB or 1 GiB */
	char name[RF_MEMPOOL_NAMESIZE];
	/* Written by slow paths (cache attach/detach, stats, debug): its own line(s). */
	RF_CACHE_ALIGNED struct rf_mempool_slow_pvt *slow;
	_Atomic(uint64_t) debug_errors;
};

/* Creates a pool of n objects of elt_size bytes each (n, elt_size > 0; n <= 2^31), with a
 * per-thread cache of cache_size objects (0..RF_MEMPOOL_CACHE_MAX and <= n; 0 or
 * RF_MEMPOOL_NO_CACHE: none). flags: RF_MEMPOOL_*. All objects start free. Returns NULL with
 * errno EINVAL (zero or too large arguments, unknown flags), ENOMEM (the region is larger
 * than the machine's RAM, or mmap failed). Not thread-safe with use of the same pool. */
struct rf_mempool *rf_mempool_create(const char *name, unsigned n, size_t elt_size,
				     unsigned cache_size, unsigned flags);

/* Unmaps the region and frees the pool and every thread's cache of it (NULL is ignored).
 * Objects still held become invalid. No thread may use the pool during or after this. */
void rf_mempool_free(struct rf_mempool *mp);

/* Free objects: in the ring plus in every thread's cache. A snapshot taken without a lock
 * (any thread, any time; it walks every thread's cache, so not per packet); exact when no
 * thread is inside a call. 0 for NULL. */
unsigned rf_mempool_avail_count(const struct rf_mempool *mp);

/* Objects handed out: n - avail_count (same snapshot rules). */
unsigned rf_mempool_in_use_count(const struct rf_mempool *mp);

/* A pool's counters (rf_mempool_stats_get). Each thread's cache counts its own hits and
 * misses (a plain store to a line only that thread writes); a read sums every cache, so the
 * hit rate is cache_hits / (cache_hits + cache_misses). Puts are not counted on the fast path. */
struct rf_mempool_stats {
	unsigned n, avail;     /* objects; free now (as rf_mempool_avail_count) */
	uint64_t cache_hits;   /* gets the calling thread's cache served alone (no ring access) */
	uint64_t cache_misses; /* gets the calling thread's cache could not serve alone */
	uint64_t cache_flushes; /* puts that flushed a cache to the ring */
	uint64_t empty;        /* gets that failed: the pool had too few free objects */
};

/* Snapshot of mp's counters (every thread's, including threads that have exited). Takes
 * the mempool lock, like rf_mempool_avail_count; any thread. */
void rf_mempool_stats_get(const struct rf_mempool *mp, struct rf_mempool_stats *st);

/* Moves every object in the calling thread's cache of mp back to the ring, so other threads
 * can get them. Cheap when the cache is empty. Thread-safe. */
void rf_mempool_cache_flush(struct rf_mempool *mp);

/* True when the region sits on hugepages (2 MiB or 1 GiB). */
bool rf_mempool_on_hugepages(const struct rf_mempool *mp);

/* Page size backing the region: 4096, 2 MiB or 1 GiB (0 for NULL). */
size_t rf_mempool_page_size(const struct rf_mempool *mp);

/* The backing region, e.g. to register as AF_XDP UMEM: one contiguous page-aligned block;
 * object i starts at base + i * elt_stride (elt_stride is an odd number of cache lines, not a
 * power of two: AF_XDP needs XDP_UMEM_UNALIGNED_CHUNK_FLAG). Returns 0 or -EINVAL. */
int rf_mempool_region(const struct rf_mempool *mp, void **base, size_t *len, size_t *elt_stride);

/* Index of obj in the region (0..n-1), or -1 when obj is not an object of mp. */
long rf_mempool_obj_index(const struct rf_mempool *mp, const void *obj);

/* Checks reported by debug mode (double put, foreign pointer, write after put). */
uint64_t rf_mempool_debug_errors(const struct rf_mempool *mp);

/* ---- internals of the fast path (inline for speed; not part of the API) ----
 * They stay in this header on purpose: get/put out of line (a call each, the table private)
 * measured 2.5x slower on `ringflow-bench mempool` pair_single (181 -> 73 Mobj/s, same run
 * interleaved with the inline build), which would put ringflow behind rte_mempool, whose fast
 * path is inline too. Apps must not touch them. */

struct rf_mempool_tls_pvt {
	uint64_t gen;                   /* == pool->gen when cache belongs to that pool */
	struct rf_mempool_cache *cache;
};
/* The calling thread's cache slots, indexed by pool id. A slot whose gen does not match the
 * pool's is stale (that pool was freed) and is replaced on first use. */
extern _Thread_local struct rf_mempool_tls_pvt rf_mempool_tls_pvt[RF_MEMPOOL_MAX_CACHED];

/* Slow paths (mempool_cache.c, mempool_debug.c): everything the inline fast path does not
 * do itself (refill, flush, bulks larger than the cache, first use in a thread, pools
 * without caches, debug checks). Same results as the API calls. */
int rf_mempool_get_bulk_slow_pvt(struct rf_mempool *mp, void **objs, unsigned n);
void rf_mempool_put_bulk_slow_pvt(struct rf_mempool *mp, void *const *objs, unsigned n);

/* ---- the API ---- */

/* Takes n objects into objs: all of them, or none. Returns 0, or -ENOBUFS (fewer than n
 * free in the ring and this thread's cache together; nothing taken). n == 0 returns 0. Thread-safe. */
static inline int rf_mempool_get_bulk(struct rf_mempool *mp, void **objs, unsigned n)
{
	/* Fast path: this thread's cache of mp holds n objects. One compare validates the slot
	 * (and rules out debug and cacheless pools, whose fast_gen matches no slot). */
	struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[mp->id];
	if (rf_likely(t->gen == mp->fast_gen)) {
		struct rf_mempool_cache *c = t->cache;
		/* relaxed: len is only written by this thread; atomic for avail_count's reads. */
		unsigned len = atomic_load_explicit(&c->len, memory_order_relaxed);
		if (rf_likely(n <= len)) {
			/* LIFO: the n most recently put (cache-hot) objects, copied inline (no call
			 * into libc for a 32-pointer burst); within the batch they keep the order
			 * they were put in. */
			void *const *src = &c->objs[len - n];
			for (unsigned i = 0; i < n; i++)
				objs[i] = src[i];
			atomic_store_explicit(&c->len, len - n, memory_order_relaxed);
			/* relaxed load + store: this thread is the only writer (a statistic). */
			atomic_store_explicit(&c->hits,
					      atomic_load_explicit(&c->hits, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			return 0;
		}
	}
	return rf_mempool_get_bulk_slow_pvt(mp, objs, n);
}

/* Returns n objects got from mp. Thread-safe. Debug mode rejects foreign pointers and double
 * puts with a message; otherwise putting anything but a held object of mp is undefined. */
static inline void rf_mempool_put_bulk(struct rf_mempool *mp, void *const *objs, unsigned n)
{
	struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[mp->id];
	if (rf_likely(t->gen == mp->fast_gen)) {
		struct rf_mempool_cache *c = t->cache;
		unsigned len = atomic_load_explicit(&c->len, memory_order_relaxed); /* ours */
		if (rf_likely(n <= c->flushthresh - len)) { /* len <= flushthresh always */
			void **dst = &c->objs[len];
			for (unsigned i = 0; i < n; i++)
				dst[i] = objs[i];
			atomic_store_explicit(&c->len, len + n, memory_order_relaxed);
			return;
		}
	}
	rf_mempool_put_bulk_slow_pvt(mp, objs, n);
}

/* Takes one object: 0 and *obj set, or -ENOBUFS. Thread-safe. */
static inline int rf_mempool_get(struct rf_mempool *mp, void **obj)
{
	return rf_mempool_get_bulk(mp, obj, 1);
}

/* Returns one object (rules of rf_mempool_put_bulk). */
static inline void rf_mempool_put(struct rf_mempool *mp, void *obj)
{
	rf_mempool_put_bulk(mp, &obj, 1);
}

/* Object i of the pool (0 <= i < n), e.g. to translate an AF_XDP descriptor back. */
static inline void *rf_mempool_obj_at(const struct rf_mempool *mp, unsigned i)
{
	return mp->base + (size_t)i * mp->stride;
}

RF_API_END
#ifdef __cplusplus
}
#endif

#endif /* RINGFLOW_MEMPOOL_H */
