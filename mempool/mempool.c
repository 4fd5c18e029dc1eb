/*
 * mempool/mempool.c: creating and freeing pools, and the read-only queries. The fast path
 * (get/put through the caller's cache) is inline in ringflow/mempool.h; caches are
 * mempool_cache.c, the region is mempool_mem.c, debug checks are mempool_debug.c.
 *
 * Layout: object i starts at base + i * stride; the stride is the object size rounded up to
 * an ODD number of cache lines, as DPDK does (rte_mempool's optimize_object_size), so objects
 * spread over all cache sets instead of piling onto the few a power-of-two stride hits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "mempool_pvt.h"

pthread_mutex_t rf_mp_lock = PTHREAD_MUTEX_INITIALIZER;
struct rf_mp_slot rf_mp_slots[RF_MEMPOOL_MAX_CACHED];
static uint64_t rf_mp_next_gen = 1; /* under rf_mp_lock */

#define RF_MP_FLAGS_ALL \
	(RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_HUGE_1G | RF_MEMPOOL_NO_CACHE | RF_MEMPOOL_DEBUG | \
	 RF_MEMPOOL_QUIET)

/* Bytes between objects: whole cache lines, an odd count of them. 0 on overflow. */
static size_t rf_mp_stride(size_t elt_size)
{
	if (elt_size > SIZE_MAX / 2)
		return 0;
	size_t lines = (elt_size + RF_CACHE_LINE - 1) / RF_CACHE_LINE;
	if (lines % 2 == 0)
		lines++;
	return lines * RF_CACHE_LINE;
}

/* False when len bytes cannot fit in this machine's RAM (then mmap + populate would only
 * invite the OOM killer). */
static bool rf_mp_fits_in_ram(size_t len)
{
	struct sysinfo si;
	if (sysinfo(&si) != 0)
		return true;
	unsigned long long ram = (unsigned long long)si.totalram * si.mem_unit;
	return len <= ram;
}

/* Gives mp a per-thread cache slot (id) and a generation; no slot left: no caches. */
static void rf_mp_register(struct rf_mempool *mp)
{
	pthread_mutex_lock(&rf_mp_lock);
	mp->gen = rf_mp_next_gen++;
	mp->fast_gen = UINT64_MAX; /* set below once the pool has a cache slot */
	if (mp->cache_size) {
		unsigned i = 0;
		while (i < RF_MEMPOOL_MAX_CACHED && rf_mp_slots[i].mp)
			i++;
		if (i < RF_MEMPOOL_MAX_CACHED) {
			rf_mp_slots[i].mp = mp;
			rf_mp_slots[i].gen = mp->gen;
			mp->id = i;
			if (!mp->debug)
				mp->fast_gen = mp->gen;
		} else {
			mp->cache_size = 0; /* works, just without caches (documented) */
		}
	}
	pthread_mutex_unlock(&rf_mp_lock);
}

struct rf_mempool *rf_mempool_create(const char *name, unsigned n, size_t elt_size,
				     unsigned cache_size, unsigned flags)
{
	if (name == NULL)
		name = "";
	if (strlen(name) >= RF_MEMPOOL_NAMESIZE) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (n == 0 || n > RF_RING_SZ_MAX || elt_size == 0 || cache_size > RF_MEMPOOL_CACHE_MAX ||
	    cache_size > n || (flags & ~RF_MP_FLAGS_ALL)) {
		errno = EINVAL;
		return NULL;
	}
	size_t stride = rf_mp_stride(elt_size);
	if (stride == 0 || (size_t)n > SIZE_MAX / stride || !rf_mp_fits_in_ram(n * stride)) {
		errno = ENOMEM;
		return NULL;
	}
	if (flags & RF_MEMPOOL_NO_CACHE)
		cache_size = 0;

	struct rf_mempool *mp = aligned_alloc(RF_CACHE_LINE, sizeof(*mp));
	struct rf_mempool_slow_pvt *slow = calloc(1, sizeof(*slow));
	uint64_t ring_n = rf_align_pow2_u64(n > 2 * cache_size ? n : 2 * cache_size);
	struct rf_ring *ring = rf_ring_create(name, (unsigned)ring_n, 0);
	if (mp)
		memset(mp, 0, sizeof(*mp));
	if (!mp || !slow || !ring)
		goto fail_nomem;
	mp->ring = ring;
	mp->slow = slow;
	mp->n = n;
	mp->flags = flags;
	mp->elt_size = elt_size;
	mp->stride = stride;
	mp->cache_size = cache_size;
	mp->flushthresh = cache_size * 3 / 2;
#ifdef RF_DEBUG_CHECKS
	mp->debug = 1;
#else
	mp->debug = (flags & RF_MEMPOOL_DEBUG) != 0;
#endif
	snprintf(mp->name, sizeof(mp->name), "%s", name);
	atomic_init(&mp->debug_errors, 0);

	mp->base = rf_mp_map_region(mp->name, n * stride, flags, &mp->region_len, &mp->page_size);
	if (!mp->base)
		goto fail_nomem;
	if (mp->debug) {
		slow->cookie = calloc(n, sizeof(*slow->cookie));
		if (!slow->cookie)
			goto fail_nomem;
		rf_mp_debug_init(mp);
	}
	/* Object 0 first: a fresh pool hands out objects in address order. */
	for (unsigned i = 0; i < n; i++) {
		void *obj = rf_mempool_obj_at(mp, i);
		rf_ring_enqueue_bulk(ring, &obj, 1, NULL);
	}
	rf_mp_register(mp);
	return mp;

fail_nomem:
	if (mp && mp->base)
		rf_mp_unmap_region(mp->base, mp->region_len);
	if (slow)
		free(slow->cookie);
	free(slow);
	rf_ring_free(ring);
	free(mp);
	errno = ENOMEM;
	return NULL;
}

void rf_mempool_free(struct rf_mempool *mp)
{
	if (!mp)
		return;
	pthread_mutex_lock(&rf_mp_lock);
	if (mp->cache_size && rf_mp_slots[mp->id].mp == mp) {
		rf_mp_slots[mp->id].mp = NULL;
		rf_mp_slots[mp->id].gen = 0;
	}
	rf_mp_caches_free_locked(mp);
	pthread_mutex_unlock(&rf_mp_lock);
	rf_mp_unmap_region(mp->base, mp->region_len);
	rf_ring_free(mp->ring);
	free(mp->slow->cookie);
	free(mp->slow);
	free(mp);
}

unsigned rf_mempool_avail_count(const struct rf_mempool *mp)
{
	if (!mp)
		return 0;
	/* No lock: caches live as long as the pool (mempool_cache.c). */
	unsigned sum = rf_ring_count(mp->ring) + rf_mp_caches_count(mp);
	return sum > mp->n ? mp->n : sum;
}

unsigned rf_mempool_in_use_count(const struct rf_mempool *mp)
{
	return mp ? mp->n - rf_mempool_avail_count(mp) : 0;
}

bool rf_mempool_on_hugepages(const struct rf_mempool *mp)
{
	return mp && mp->page_size > 4096;
}

size_t rf_mempool_page_size(const struct rf_mempool *mp)
{
	return mp ? mp->page_size : 0;
}

int rf_mempool_region(const struct rf_mempool *mp, void **base, size_t *len, size_t *elt_stride)
{
	if (!mp || !base || !len || !elt_stride)
		return -EINVAL;
	*base = mp->base;
	*len = mp->region_len;
	*elt_stride = mp->stride;
	return 0;
}

long rf_mempool_obj_index(const struct rf_mempool *mp, const void *obj)
{
	if (!mp || !obj)
		return -1;
	uintptr_t p = (uintptr_t)obj, b = (uintptr_t)mp->base;
	if (p < b || p >= b + (uintptr_t)mp->n * mp->stride)
		return -1;
	uintptr_t off = p - b;
	if (off % mp->stride)
		return -1;
	return (long)(off / mp->stride);
}

uint64_t rf_mempool_debug_errors(const struct rf_mempool *mp)
{
	return mp ? atomic_load_explicit(&mp->debug_errors, memory_order_relaxed) : 0;
}
