/*
 * mempool/mempool_cache.c: per-thread caches, the slow paths around them.
 *
 * Each thread has a table of cache slots indexed by pool id (rf_mempool_tls_pvt, 16 bytes a
 * pool). A slot is valid when its gen equals the pool's: pools get a fresh gen each time they
 * are created, so a slot left by a freed pool whose id was reused is simply stale. The pool
 * owns its caches (a list that only grows until the pool is freed) so rf_mempool_free and
 * rf_mempool_avail_count can reach them, the latter without a lock; a pthread key destructor
 * flushes a thread's caches when it exits and leaves them for the next thread to attach.
 */
#include <stdlib.h>
#include <string.h>

#include "mempool_pvt.h"

_Thread_local struct rf_mempool_tls_pvt rf_mempool_tls_pvt[RF_MEMPOOL_MAX_CACHED];

static pthread_key_t rf_mp_exit_key;
static pthread_once_t rf_mp_exit_once = PTHREAD_ONCE_INIT;

/* Moves a cache's objects back to the ring (caller is the cache's thread, or it is gone). */
static void rf_mp_cache_drain(struct rf_mempool *mp, struct rf_mempool_cache *c)
{
	unsigned len = atomic_load_explicit(&c->len, memory_order_relaxed); /* ours */
	if (len)
		rf_ring_enqueue_bulk(mp->ring, c->objs, len, NULL);
	atomic_store_explicit(&c->len, 0, memory_order_relaxed);
}

/* Thread exit: give back every cache of a pool that still exists. */
static void rf_mp_thread_exit(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&rf_mp_lock);
	for (unsigned id = 0; id < RF_MEMPOOL_MAX_CACHED; id++) {
		struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[id];
		if (t->gen == 0)
			continue;
		struct rf_mempool *mp = rf_mp_slots[id].mp;
		if (mp && rf_mp_slots[id].gen == t->gen) {
			rf_mp_cache_drain(mp, t->cache);
			t->cache->owned = false; /* kept in the list for the next thread */
		}
		t->gen = 0;
		t->cache = NULL;
	}
	pthread_mutex_unlock(&rf_mp_lock);
}

static void rf_mp_exit_key_init(void)
{
	pthread_key_create(&rf_mp_exit_key, rf_mp_thread_exit);
}

static struct rf_mempool_cache *rf_mp_cache_attach(struct rf_mempool *mp)
{
	if (mp->cache_size == 0)
		return NULL;
	pthread_once(&rf_mp_exit_once, rf_mp_exit_key_init);
	/* Any non-NULL value makes the destructor run when this thread exits. */
	pthread_setspecific(rf_mp_exit_key, rf_mempool_tls_pvt);

	/* A cache left by a thread that exited (empty), else a new one pushed on the list. */
	struct rf_mempool_cache *c = NULL;
	pthread_mutex_lock(&rf_mp_lock);
	for (c = atomic_load_explicit(&mp->slow->caches, memory_order_relaxed); c;
	     c = atomic_load_explicit(&c->next, memory_order_relaxed))
		if (!c->owned)
			break;
	if (c)
		c->owned = true;
	pthread_mutex_unlock(&rf_mp_lock);
	if (c)
		goto bind;

	size_t sz = sizeof(struct rf_mempool_cache) + 2 * (size_t)mp->cache_size * sizeof(void *);
	sz = (sz + RF_CACHE_LINE - 1) / RF_CACHE_LINE * RF_CACHE_LINE;
	c = aligned_alloc(RF_CACHE_LINE, sz);
	if (!c)
		return NULL; /* the caller goes to the ring directly */
	memset(c, 0, sizeof(*c));
	atomic_init(&c->len, 0);
	atomic_init(&c->hits, 0);
	c->size = mp->cache_size;
	c->flushthresh = mp->flushthresh;
	c->mp = mp;
	c->owned = true;

	pthread_mutex_lock(&rf_mp_lock);
	atomic_init(&c->next, atomic_load_explicit(&mp->slow->caches, memory_order_relaxed));
	/* release: pairs with the acquire load in rf_mempool_avail_count, which then sees c
	 * (and its next) initialised. */
	atomic_store_explicit(&mp->slow->caches, c, memory_order_release);
	pthread_mutex_unlock(&rf_mp_lock);

bind:;
	struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[mp->id];
	t->gen = mp->gen;
	t->cache = c;
	return c;
}

void rf_mempool_cache_flush(struct rf_mempool *mp)
{
	if (!mp || mp->cache_size == 0)
		return;
	struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[mp->id];
	if (t->gen == mp->gen)
		rf_mp_cache_drain(mp, t->cache);
}

void rf_mempool_stats_get(const struct rf_mempool *mp, struct rf_mempool_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!mp)
		return;
	st->n = mp->n;
	st->avail = rf_mempool_avail_count(mp);
	pthread_mutex_lock(&rf_mp_lock); /* no pool free while we read (caches live as long as it) */
	st->empty = atomic_load_explicit(&mp->slow->empty_nocache, memory_order_relaxed);
	/* Relaxed list walk: caches are pushed under rf_mp_lock (held here) and never freed
	 * before the pool. */
	for (struct rf_mempool_cache *k = atomic_load_explicit(&mp->slow->caches, memory_order_relaxed);
	     k; k = atomic_load_explicit(&k->next, memory_order_relaxed)) {
		/* Relaxed: single-writer counters, a snapshot. */
		st->cache_hits += atomic_load_explicit(&k->hits, memory_order_relaxed);
		st->cache_misses += atomic_load_explicit(&k->misses, memory_order_relaxed);
		st->cache_flushes += atomic_load_explicit(&k->flushes, memory_order_relaxed);
		st->empty += atomic_load_explicit(&k->empty, memory_order_relaxed);
	}
	pthread_mutex_unlock(&rf_mp_lock);
}

void rf_mp_caches_free_locked(struct rf_mempool *mp)
{
	struct rf_mempool_cache *c = atomic_load_explicit(&mp->slow->caches, memory_order_relaxed);
	while (c) {
		struct rf_mempool_cache *next = atomic_load_explicit(&c->next, memory_order_relaxed);
		free(c);
		c = next;
	}
	atomic_store_explicit(&mp->slow->caches, NULL, memory_order_relaxed);
}

unsigned rf_mp_caches_count(const struct rf_mempool *mp)
{
	unsigned sum = 0;
	/* acquire: pairs with the release push in rf_mp_cache_attach. Caches are never unlinked
	 * while the pool lives, so the walk needs no lock. */
	for (struct rf_mempool_cache *c = atomic_load_explicit(&mp->slow->caches, memory_order_acquire);
	     c; c = atomic_load_explicit(&c->next, memory_order_relaxed)) /* next: set before the push */
		sum += atomic_load_explicit(&c->len, memory_order_relaxed); /* a statistic */
	return sum;
}

/* The calling thread's cache of mp, or NULL (no caches, or the cache could not be made). */
static struct rf_mempool_cache *rf_mp_cache(struct rf_mempool *mp)
{
	struct rf_mempool_tls_pvt *t = &rf_mempool_tls_pvt[mp->id];
	if (mp->cache_size && t->gen == mp->gen)
		return t->cache;
	return rf_mp_cache_attach(mp);
}

int rf_mp_get_raw(struct rf_mempool *mp, void **objs, unsigned n)
{
	struct rf_mempool_cache *c = rf_mp_cache(mp);
	if (c == NULL) {
		if (rf_ring_dequeue_bulk(mp->ring, objs, n, NULL) == n)
			return 0;
		atomic_fetch_add_explicit(&mp->slow->empty_nocache, 1, memory_order_relaxed);
		return -ENOBUFS;
	}
	unsigned len = atomic_load_explicit(&c->len, memory_order_relaxed); /* ours only */
	if (n > c->size || len < n)
		rf_mp_count(&c->misses, 1);
	else
		rf_mp_count(&c->hits, 1); /* served below from the cache alone (a debug pool's
					   * gets, a thread's first get with a warm cache) */
	if (n > c->size) {
		/* Too big for the cache: straight from the ring, or ring and cache together. */
		if (rf_ring_dequeue_bulk(mp->ring, objs, n, NULL) == n)
			return 0;
		unsigned from_cache = len < n ? len : n;
		unsigned from_ring = n - from_cache;
		if (rf_ring_dequeue_bulk(mp->ring, objs, from_ring, NULL) != from_ring) {
			rf_mp_count(&c->empty, 1);
			return -ENOBUFS;
		}
		memcpy(objs + from_ring, &c->objs[len - from_cache], from_cache * sizeof(void *));
		atomic_store_explicit(&c->len, len - from_cache, memory_order_relaxed);
		return 0;
	}
	if (len < n) {
		/* Refill to size + n, so the next gets hit the cache; if the ring has not that
		 * many, take just what is missing. */
		unsigned req = c->size + n - len;
		if (rf_ring_dequeue_bulk(mp->ring, &c->objs[len], req, NULL) != req) {
			req = n - len;
			if (rf_ring_dequeue_bulk(mp->ring, &c->objs[len], req, NULL) != req) {
				rf_mp_count(&c->empty, 1);
				return -ENOBUFS;
			}
		}
		len += req;
	}
	memcpy(objs, &c->objs[len - n], n * sizeof(void *));
	atomic_store_explicit(&c->len, len - n, memory_order_relaxed);
	return 0;
}

void rf_mp_put_raw(struct rf_mempool *mp, void *const *objs, unsigned n)
{
	struct rf_mempool_cache *c = rf_mp_cache(mp);
	if (c == NULL || n > c->size) {
		/* The ring holds every object of the pool, so this cannot fail for real ones. */
		rf_ring_enqueue_bulk(mp->ring, objs, n, NULL);
		return;
	}
	unsigned len = atomic_load_explicit(&c->len, memory_order_relaxed); /* ours only */
	if (len + n > c->flushthresh) {
		/* Flush the oldest (coldest) objects, keeping size / 2 for the next gets. */
		unsigned keep = c->size / 2;
		rf_mp_count(&c->flushes, 1);
		if (len > keep) {
			rf_ring_enqueue_bulk(mp->ring, &c->objs[keep], len - keep, NULL);
			len = keep;
		}
	}
	memcpy(&c->objs[len], objs, n * sizeof(void *));
	atomic_store_explicit(&c->len, len + n, memory_order_relaxed);
}

int rf_mempool_get_bulk_slow_pvt(struct rf_mempool *mp, void **objs, unsigned n)
{
	if (n == 0)
		return 0;
	return mp->debug ? rf_mp_get_debug(mp, objs, n) : rf_mp_get_raw(mp, objs, n);
}

void rf_mempool_put_bulk_slow_pvt(struct rf_mempool *mp, void *const *objs, unsigned n)
{
	if (n == 0)
		return;
	if (mp->debug)
		rf_mp_put_debug(mp, objs, n);
	else
		rf_mp_put_raw(mp, objs, n);
}

