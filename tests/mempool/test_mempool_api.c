/*
 * tests/mempool/test_mempool_api.c: every mempool call and its edges, mostly single-threaded:
 * bad arguments, layout (alignment, odd-line stride, one region), get/put single and bulk
 * (all or nothing), the per-thread cache (refill, flush, objects held in another thread's
 * cache) and the region/index helpers AF_XDP needs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/mempool.h>

#define Q RF_MEMPOOL_QUIET /* no fallback warning in every test's output */

Test(mempool_api, create_rejects_bad_arguments)
{
	errno = 0;
	cr_assert_null(rf_mempool_create("zero_n", 0, 64, 0, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("zero_size", 8, 0, 0, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("cache_gt_n", 8, 64, 16, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("cache_max", 4096, 64, RF_MEMPOOL_CACHE_MAX + 1, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("flags", 8, 64, 0, 0x8000));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("n_too_big", (1u << 31) + 1, 64, 0, Q));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_mempool_create("a_name_that_is_far_too_long_for_it", 8, 64, 0, Q));
	cr_assert_eq(errno, ENAMETOOLONG);
	rf_mempool_free(NULL); /* no-op */
}

Test(mempool_api, create_rejects_n_beyond_memory)
{
	errno = 0; /* 2^31 objects of 1 GiB: overflows nothing on 64-bit, fits no machine */
	cr_assert_null(rf_mempool_create("too_much", 1u << 31, (size_t)1 << 30, 0, Q));
	cr_assert_eq(errno, ENOMEM);
	errno = 0; /* n * stride overflows size_t */
	cr_assert_null(rf_mempool_create("overflow", 1u << 30, SIZE_MAX / 4, 0, Q));
	cr_assert_eq(errno, ENOMEM);
	errno = 0;
	cr_assert_null(rf_mempool_create("elt_huge", 1, SIZE_MAX, 0, Q));
	cr_assert_eq(errno, ENOMEM);
}

Test(mempool_api, layout_is_one_region_with_odd_line_stride)
{
	size_t sizes[] = {1, 64, 65, 128, 2048, 2049, 4096, 9000};
	for (unsigned k = 0; k < RF_ARRAY_SIZE(sizes); k++) {
		struct rf_mempool *mp = rf_mempool_create("layout", 100, sizes[k], 0, Q);
		cr_assert_not_null(mp, "size %zu", sizes[k]);
		void *base;
		size_t len, stride;
		cr_assert_eq(rf_mempool_region(mp, &base, &len, &stride), 0);
		cr_assert_eq((uintptr_t)base % 4096, 0, "region page aligned");
		cr_assert_eq(len % rf_mempool_page_size(mp), 0);
		cr_assert_geq(len, 100 * stride);
		cr_assert_geq(stride, sizes[k]);
		cr_assert_eq(stride % RF_CACHE_LINE, 0);
		cr_assert_eq((stride / RF_CACHE_LINE) % 2, 1, "odd number of lines: %zu", stride);
		cr_assert_lt(stride - sizes[k], 2 * RF_CACHE_LINE, "no more than 2 lines of pad");
		for (unsigned i = 0; i < 100; i++) {
			void *o = rf_mempool_obj_at(mp, i);
			cr_assert_eq((uintptr_t)o % RF_CACHE_LINE, 0);
			cr_assert_eq(rf_mempool_obj_index(mp, o), (long)i);
		}
		rf_mempool_free(mp);
	}
}

Test(mempool_api, obj_index_rejects_foreign_pointers)
{
	struct rf_mempool *mp = rf_mempool_create("index", 10, 100, 0, Q);
	char *o = rf_mempool_obj_at(mp, 3);
	int local;
	cr_assert_eq(rf_mempool_obj_index(mp, o), 3);
	cr_assert_eq(rf_mempool_obj_index(mp, o + 1), -1);
	cr_assert_eq(rf_mempool_obj_index(mp, &local), -1);
	cr_assert_eq(rf_mempool_obj_index(mp, (char *)rf_mempool_obj_at(mp, 9) + mp->stride), -1);
	cr_assert_eq(rf_mempool_obj_index(mp, NULL), -1);
	cr_assert_eq(rf_mempool_obj_index(NULL, o), -1);
	rf_mempool_free(mp);
}

Test(mempool_api, region_rejects_null_arguments)
{
	struct rf_mempool *mp = rf_mempool_create("region", 4, 64, 0, Q);
	void *base;
	size_t len, stride;
	cr_assert_eq(rf_mempool_region(NULL, &base, &len, &stride), -EINVAL);
	cr_assert_eq(rf_mempool_region(mp, NULL, &len, &stride), -EINVAL);
	cr_assert_eq(rf_mempool_region(mp, &base, NULL, &stride), -EINVAL);
	cr_assert_eq(rf_mempool_region(mp, &base, &len, NULL), -EINVAL);
	cr_assert_eq(rf_mempool_page_size(NULL), 0);
	cr_assert_not(rf_mempool_on_hugepages(NULL));
	cr_assert_eq(rf_mempool_avail_count(NULL), 0);
	cr_assert_eq(rf_mempool_in_use_count(NULL), 0);
	cr_assert_eq(rf_mempool_debug_errors(NULL), 0);
	rf_mempool_cache_flush(NULL); /* no-op */
	rf_mempool_free(mp);
}

Test(mempool_api, no_huge_flag_uses_normal_pages)
{
	struct rf_mempool *mp = rf_mempool_create("nohuge", 100, 2048, 0, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(mp);
	cr_assert_not(rf_mempool_on_hugepages(mp));
	cr_assert_eq(rf_mempool_page_size(mp), 4096);
	rf_mempool_free(mp);
}

/* Every object exactly once, then -ENOBUFS, for each cache mode. */
static void drain_all(unsigned n, unsigned cache, unsigned flags)
{
	struct rf_mempool *mp = rf_mempool_create("drain", n, 256, cache, flags | Q);
	cr_assert_not_null(mp);
	cr_assert_eq(rf_mempool_avail_count(mp), n);
	void **objs = calloc(n, sizeof(void *));
	unsigned char *seen = calloc(n, 1);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(rf_mempool_get(mp, &objs[i]), 0, "get %u of %u (cache %u)", i, n, cache);
		long idx = rf_mempool_obj_index(mp, objs[i]);
		cr_assert_geq(idx, 0);
		cr_assert_eq(seen[idx], 0, "object %ld handed out twice", idx);
		seen[idx] = 1;
		memset(objs[i], 0xab, 256); /* the object is ours: writable in full */
	}
	void *extra = NULL;
	cr_assert_eq(rf_mempool_get(mp, &extra), -ENOBUFS);
	cr_assert_null(extra, "nothing taken");
	cr_assert_eq(rf_mempool_avail_count(mp), 0);
	cr_assert_eq(rf_mempool_in_use_count(mp), n);
	for (unsigned i = 0; i < n; i++)
		rf_mempool_put(mp, objs[i]);
	cr_assert_eq(rf_mempool_avail_count(mp), n);
	cr_assert_eq(rf_mempool_in_use_count(mp), 0);
	free(seen);
	free(objs);
	rf_mempool_free(mp);
}

Test(mempool_api, get_hands_out_every_object_once_then_enobufs)
{
	drain_all(1, 0, 0);
	drain_all(1, 1, 0);
	drain_all(100, 0, 0);
	drain_all(100, 32, 0);
	drain_all(1000, 512, 0);
	drain_all(1000, 64, RF_MEMPOOL_NO_CACHE);
}

Test(mempool_api, bulk_is_all_or_nothing)
{
	unsigned caches[] = {0, 8, 32, 256};
	for (unsigned k = 0; k < RF_ARRAY_SIZE(caches); k++) {
		struct rf_mempool *mp = rf_mempool_create("bulk", 300, 64, caches[k], Q);
		void *a[300], *b[64];
		cr_assert_eq(rf_mempool_get_bulk(mp, a, 0), 0);
		cr_assert_eq(rf_mempool_get_bulk(mp, a, 290), 0, "cache %u", caches[k]);
		for (unsigned i = 0; i < 64; i++)
			b[i] = NULL;
		cr_assert_eq(rf_mempool_get_bulk(mp, b, 11), -ENOBUFS, "cache %u", caches[k]);
		for (unsigned i = 0; i < 64; i++)
			cr_assert_null(b[i], "nothing written");
		cr_assert_eq(rf_mempool_avail_count(mp), 10, "nothing taken");
		cr_assert_eq(rf_mempool_get_bulk(mp, b, 10), 0);
		cr_assert_eq(rf_mempool_avail_count(mp), 0);
		rf_mempool_put_bulk(mp, b, 10);
		rf_mempool_put_bulk(mp, a, 290);
		cr_assert_eq(rf_mempool_avail_count(mp), 300);
		/* all 300 in one call, whatever the cache size */
		cr_assert_eq(rf_mempool_get_bulk(mp, a, 300), 0, "cache %u", caches[k]);
		cr_assert_eq(rf_mempool_get_bulk(mp, b, 1), -ENOBUFS);
		rf_mempool_put_bulk(mp, a, 300);
		rf_mempool_put_bulk(mp, a, 0);
		cr_assert_eq(rf_mempool_avail_count(mp), 300);
		rf_mempool_free(mp);
	}
}

Test(mempool_api, cache_serves_last_put_first)
{
	struct rf_mempool *mp = rf_mempool_create("lifo", 64, 64, 16, Q);
	void *a, *b, *c;
	cr_assert_eq(rf_mempool_get(mp, &a), 0);
	cr_assert_eq(rf_mempool_get(mp, &b), 0);
	rf_mempool_put(mp, a);
	cr_assert_eq(rf_mempool_get(mp, &c), 0);
	cr_assert_eq(c, a, "the cache-hot object comes back first");
	rf_mempool_put(mp, b);
	rf_mempool_put(mp, c);
	rf_mempool_free(mp);
}

Test(mempool_api, cache_flush_returns_objects_to_the_ring)
{
	struct rf_mempool *mp = rf_mempool_create("flush", 64, 64, 16, Q);
	void *o[8];
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 8), 0); /* refills the cache from the ring */
	cr_assert_lt(rf_ring_count(mp->ring), 64u - 8u, "cache holds some");
	rf_mempool_put_bulk(mp, o, 8);
	cr_assert_eq(rf_mempool_avail_count(mp), 64, "cached objects are counted");
	rf_mempool_cache_flush(mp);
	cr_assert_eq(rf_ring_count(mp->ring), 64, "all back in the common pool");
	rf_mempool_cache_flush(mp); /* empty: no-op */
	cr_assert_eq(rf_mempool_avail_count(mp), 64);
	rf_mempool_free(mp);
}

struct holder {
	struct rf_mempool *mp;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int step; /* 0 start, 1 holder filled its cache, 2 main asks to flush, 3 flushed, 4 exit */
};

static void wait_step(struct holder *h, int step)
{
	pthread_mutex_lock(&h->lock);
	while (h->step < step)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
}

static void set_step(struct holder *h, int step)
{
	pthread_mutex_lock(&h->lock);
	h->step = step;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

/* Takes every object of the pool, puts them back into its own cache, waits, flushes. */
static void *holder_main(void *arg)
{
	struct holder *h = arg;
	void *o[32];
	for (unsigned i = 0; i < 32; i++)
		cr_assert_eq(rf_mempool_get(h->mp, &o[i]), 0);
	rf_mempool_put_bulk(h->mp, o, 16); /* 16 stay in this thread's cache */
	rf_mempool_put_bulk(h->mp, o + 16, 16);
	set_step(h, 1);
	wait_step(h, 2);
	rf_mempool_cache_flush(h->mp);
	set_step(h, 3);
	wait_step(h, 4);
	return NULL;
}

Test(mempool_api, objects_in_another_threads_cache_are_counted_not_taken)
{
	struct holder h = {.mp = rf_mempool_create("other", 32, 64, 32, Q), .step = 0};
	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.cond, NULL);
	pthread_t t;
	pthread_create(&t, NULL, holder_main, &h);
	wait_step(&h, 1);
	void *o;
	unsigned in_ring = rf_ring_count(h.mp->ring);
	cr_assert_eq(rf_mempool_avail_count(h.mp), 32, "counted, wherever they sit");
	for (unsigned i = 0; i < in_ring; i++)
		cr_assert_eq(rf_mempool_get(h.mp, &o), 0);
	cr_assert_eq(rf_mempool_get(h.mp, &o), -ENOBUFS, "the rest sit in the holder's cache");
	rf_mempool_cache_flush(h.mp); /* main's cache back, so only the ring matters below */
	set_step(&h, 2);
	wait_step(&h, 3);
	cr_assert_eq(rf_ring_count(h.mp->ring), 32, "the holder flushed its cache");
	set_step(&h, 4);
	pthread_join(t, NULL);
	rf_mempool_free(h.mp);
}

static void *take_and_exit(void *arg)
{
	struct rf_mempool *mp = arg;
	void *o[20];
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 20), 0);
	rf_mempool_put_bulk(mp, o, 20); /* left in this thread's cache */
	return NULL;
}

Test(mempool_api, thread_exit_flushes_its_cache)
{
	struct rf_mempool *mp = rf_mempool_create("exit", 40, 64, 32, Q);
	for (int round = 0; round < 3; round++) {
		pthread_t t;
		pthread_create(&t, NULL, take_and_exit, mp);
		pthread_join(t, NULL);
		cr_assert_eq(rf_ring_count(mp->ring), 40, "round %d: cache drained at exit", round);
	}
	rf_mempool_free(mp);
}

Test(mempool_api, many_pools_and_reused_cache_slots)
{
	/* More pools than cache slots: the extra ones work without caches. Then free and make
	 * them again so slots (ids) are reused and stale thread slots must be ignored. */
	enum { N = RF_MEMPOOL_MAX_CACHED + 8 };
	static struct rf_mempool *mps[N];
	for (int round = 0; round < 2; round++) {
		for (unsigned i = 0; i < N; i++) {
			mps[i] = rf_mempool_create("many", 4, 64, 2, RF_MEMPOOL_NO_HUGE);
			cr_assert_not_null(mps[i]);
			void *o[4];
			cr_assert_eq(rf_mempool_get_bulk(mps[i], o, 4), 0);
			rf_mempool_put_bulk(mps[i], o, 4);
			cr_assert_eq(rf_mempool_avail_count(mps[i]), 4);
		}
		cr_assert_eq(mps[N - 1]->cache_size, 0, "past the slots: no cache");
		for (unsigned i = 0; i < N; i++)
			rf_mempool_free(mps[i]);
	}
}

Test(mempool_api, name_is_kept)
{
	struct rf_mempool *mp = rf_mempool_create("named_pool", 4, 64, 0, Q);
	cr_assert_str_eq(mp->name, "named_pool");
	rf_mempool_free(mp);
	mp = rf_mempool_create(NULL, 4, 64, 0, Q);
	cr_assert_not_null(mp);
	cr_assert_str_eq(mp->name, "");
	rf_mempool_free(mp);
}

Test(mempool_api, stats_count_misses_flushes_and_empty_gets)
{
	struct rf_mempool *mp = rf_mempool_create("stats", 256, 64, 16, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(mp);
	void *o[256];
	struct rf_mempool_stats st;
	rf_mempool_stats_get(mp, &st);
	cr_assert_eq(st.n, 256);
	cr_assert_eq(st.avail, 256);
	cr_assert_eq(st.cache_misses + st.cache_flushes + st.empty, 0);
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 8), 0); /* empty cache: one miss, refill */
	cr_assert_eq(rf_mempool_get_bulk(mp, o + 8, 8), 0); /* from the cache */
	rf_mempool_stats_get(mp, &st);
	cr_assert_eq(st.cache_misses, 1);
	cr_assert_eq(st.cache_hits, 1);
	void *big[256];
	cr_assert_eq(rf_mempool_get_bulk(mp, big, 241), -ENOBUFS); /* 240 free */
	rf_mempool_put_bulk(mp, o, 16);                    /* cache: 24 (the threshold) */
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 16), 0);      /* 8 left */
	cr_assert_eq(rf_mempool_get_bulk(mp, o + 16, 16), 0); /* a miss: refill to 32, 16 left */
	rf_mempool_put_bulk(mp, o, 16);                       /* 32 > 24: flush to 8, then 24 */
	rf_mempool_put_bulk(mp, o + 16, 16);                  /* 40 > 24: flush again */
	rf_mempool_stats_get(mp, &st);
	cr_assert_eq(st.empty, 1);
	cr_assert_eq(st.avail, 256);
	cr_assert_eq(st.cache_misses, 3, "first get, the failed bulk, the refill");
	cr_assert_eq(st.cache_flushes, 2);
	cr_assert_eq(st.cache_hits, 2, "the second get and the get of 16 from 24");
	rf_mempool_free(mp);
}

/* Hits: gets the thread's cache served alone. A cache of 32 refilled by its first get of
 * one object (a miss) serves the next 32 single gets, and a get/put pair after that is a
 * hit every time. Same counts in debug mode (every call through the checked slow path). */
static void check_cache_hits_exact(unsigned flags)
{
	struct rf_mempool *mp = rf_mempool_create("hits", 1024, 64, 32, RF_MEMPOOL_NO_HUGE | flags);
	cr_assert_not_null(mp);
	void *o[40];
	struct rf_mempool_stats st;
	for (unsigned i = 0; i < 34; i++)
		cr_assert_eq(rf_mempool_get(mp, &o[i]), 0);
	rf_mempool_stats_get(mp, &st);
	cr_assert_eq(st.cache_misses, 2, "the first get and the 34th");
	cr_assert_eq(st.cache_hits, 32);
	rf_mempool_put_bulk(mp, o, 34);
	for (unsigned i = 0; i < 1000; i++) {
		cr_assert_eq(rf_mempool_get(mp, &o[0]), 0);
		rf_mempool_put(mp, o[0]);
	}
	rf_mempool_stats_get(mp, &st);
	cr_assert_eq(st.cache_misses, 2);
	cr_assert_eq(st.cache_hits, 1032);
	rf_mempool_free(mp);
}

Test(mempool_api, cache_hits_counted_exactly) { check_cache_hits_exact(0); }
Test(mempool_api, cache_hits_counted_exactly_debug) { check_cache_hits_exact(RF_MEMPOOL_DEBUG); }


/* avail_count takes no lock: it runs while the mempool's process-wide lock is held (by this
 * very thread, so a lock inside would deadlock, not race), and still counts every cache. */
#include "mempool/mempool_pvt.h"

Test(mempool_api, avail_count_takes_no_lock)
{
	struct rf_mempool *mp = rf_mempool_create("nolock", 64, 64, 16, Q);
	cr_assert_not_null(mp);
	void *o[10];
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 10), 0);
	rf_mempool_put_bulk(mp, o, 4); /* 4 in this thread's cache, 6 held */
	pthread_mutex_lock(&rf_mp_lock);
	unsigned avail = rf_mempool_avail_count(mp);
	pthread_mutex_unlock(&rf_mp_lock);
	cr_assert_eq(avail, 58);
	rf_mempool_put_bulk(mp, o + 4, 6);
	rf_mempool_free(mp);
}

/* A thread that exits leaves its (drained) cache to the next thread: the list of caches does
 * not grow with threads that come and go. */
Test(mempool_api, caches_of_exited_threads_are_reused)
{
	struct rf_mempool *mp = rf_mempool_create("reuse", 40, 64, 32, Q);
	for (int round = 0; round < 5; round++) {
		pthread_t t;
		pthread_create(&t, NULL, take_and_exit, mp);
		pthread_join(t, NULL);
	}
	unsigned n = 0;
	for (struct rf_mempool_cache *c = atomic_load(&mp->slow->caches); c; c = atomic_load(&c->next))
		n++;
	cr_assert_eq(n, 1, "%u caches after 5 threads, one at a time", n);
	cr_assert_eq(rf_mempool_avail_count(mp), 40);
	rf_mempool_free(mp);
}
