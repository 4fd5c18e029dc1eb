/*
 * mempool/mempool_pvt.h: what the mempool's files share and nothing else includes: the
 * global table of pools with caches (and its lock), the region mapper, the debug cookies.
 */
#ifndef RINGFLOW_MEMPOOL_PVT_H
#define RINGFLOW_MEMPOOL_PVT_H

#include <pthread.h>

#include <ringflow/mempool.h>

/* Debug cookie of one object, kept outside the region so the object stays untouched. */
enum { RF_MP_COOKIE_FREE = 0x5a, RF_MP_COOKIE_INUSE = 0xa5 };

struct rf_mempool_slow_pvt {
	/* every cache of this pool ever attached: pushed under rf_mp_lock, read without it */
	struct rf_mempool_cache *_Atomic caches;
	_Atomic uint8_t *cookie;         /* debug mode: one per object, else NULL */
	/* Gets without a cache that failed (any thread: a read-modify-write, on failure only).
	 * Caches keep their own counters: a cache outlives its thread (reused, freed with the pool). */
	_Atomic uint64_t empty_nocache;
	/* Debug mode, set once before the pool is shared (rf_mp_debug_fatal): non-NULL makes a
	 * report fatal (one line naming this call, then abort), as pktbuf pools want. */
	const char *fatal_get_call, *fatal_put_call;
};

/* Add n to a counter only its thread writes (no read-modify-write). */
static inline void rf_mp_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}


/* Serialises the slow paths that change the set of pools or caches: pool create/free, cache
 * attach and thread exit. Never taken by get/put or avail_count. */
extern pthread_mutex_t rf_mp_lock;

/* Pools that own a per-thread cache slot, by id; gen 0 when the slot is free (rf_mp_lock). */
struct rf_mp_slot {
	struct rf_mempool *mp;
	uint64_t gen;
};
extern struct rf_mp_slot rf_mp_slots[RF_MEMPOOL_MAX_CACHED];

/* mempool_mem.c: maps len bytes (rounded up to the page size chosen) for pool `name`, on
 * 1 GiB pages if flags ask and they are free, else 2 MiB pages, else normal pages (with one
 * warning line per process unless RF_MEMPOOL_NO_HUGE or RF_MEMPOOL_QUIET). Returns the base
 * or NULL with errno; *mapped and *page_size get what was mapped. */
void *rf_mp_map_region(const char *name, size_t len, unsigned flags, size_t *mapped,
		       size_t *page_size);
void rf_mp_unmap_region(void *base, size_t mapped);

/* mempool_cache.c: unlinks and frees every cache of mp (rf_mp_lock held; pool being freed). */
void rf_mp_caches_free_locked(struct rf_mempool *mp);

/* mempool_cache.c: objects in every thread's cache of mp, without a lock (a statistic). */
unsigned rf_mp_caches_count(const struct rf_mempool *mp);

/* mempool_cache.c: get/put through the calling thread's cache (made on first use) or, for
 * pools without one, the ring; no debug checks. get: 0 or -ENOBUFS, nothing taken. */
int rf_mp_get_raw(struct rf_mempool *mp, void **objs, unsigned n);
void rf_mp_put_raw(struct rf_mempool *mp, void *const *objs, unsigned n);

/* mempool_debug.c: marks every object free and poisons it (pool creation, debug mode), and
 * the checked get/put of debug pools (over rf_mp_get_raw / rf_mp_put_raw). */
void rf_mp_debug_init(struct rf_mempool *mp);
int rf_mp_get_debug(struct rf_mempool *mp, void **objs, unsigned n);
void rf_mp_put_debug(struct rf_mempool *mp, void *const *objs, unsigned n);

/* mempool_debug.c: makes mp's debug reports fatal: one line "<call>: buffer <p> (pool ...)
 * <what>" through rf_log, then abort(). Call names are static strings. Before sharing mp. */
void rf_mp_debug_fatal(struct rf_mempool *mp, const char *get_call, const char *put_call);

/* mempool_debug.c: a debug pool's view of obj: -1 not one of its objects, 0 free, 1 in use. */
int rf_mp_debug_state(const struct rf_mempool *mp, const void *obj);

#endif
