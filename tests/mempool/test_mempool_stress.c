/*
 * tests/mempool/test_mempool_stress.c: 2-4 threads on both CPUs get and put objects, single
 * and in bulk, holding some for a while, and the test proves no object is ever handed out to
 * two holders at once and every object comes back.
 *
 * Two independent witnesses: a shared bitmap of held objects (get sets the object's bit with
 * fetch_or and it must have been clear; put clears it and it must have been set), and an
 * owner tag each holder writes into the object and checks just before putting it (a second
 * holder would have overwritten it). At the end, with the threads joined (their caches are
 * flushed when they exit), avail_count must be n and a single thread must get all n distinct
 * objects. Bounded in operations and in time.
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/mempool.h>

#define MAX_THREADS 4
#define HOLD_MAX 96
#define DEADLINE_S 120

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RF_SANITIZED 1
#endif
#endif

static uint64_t stress_ops(void)
{
	const char *e = getenv("RF_STRESS_ITEMS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 0;
#ifdef RF_SANITIZED
	uint64_t def = 250000ull; /* per thread: sanitizers run it 10-20x slower */
#else
	uint64_t def = 1000000ull; /* per thread */
#endif
	return n >= 1000 ? n : def;
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

struct tag {
	uint64_t owner; /* thread id + 1 */
	uint64_t seq;   /* the holder's operation number when it got the object */
};

struct stress {
	struct rf_mempool *mp;
	unsigned threads;
	uint64_t ops;
	uint64_t deadline;
	_Atomic uint64_t *held; /* bitmap over object index */
	_Atomic unsigned errors;
	_Atomic uint64_t gets, enobufs;
	char first_error[160];
};

struct worker {
	struct stress *s;
	unsigned id;
};

static void report(struct stress *s, const char *msg, uint64_t a, uint64_t b)
{
	if (atomic_fetch_add(&s->errors, 1) == 0)
		snprintf(s->first_error, sizeof(s->first_error), "%s (%llu, %llu)", msg,
			 (unsigned long long)a, (unsigned long long)b);
}

static void pin(unsigned i)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(i % (unsigned)sysconf(_SC_NPROCESSORS_ONLN), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void took(struct stress *s, struct worker *w, void *obj, uint64_t seq)
{
	long idx = rf_mempool_obj_index(s->mp, obj);
	if (idx < 0) {
		report(s, "get returned a pointer outside the pool", (uintptr_t)obj, w->id);
		return;
	}
	/* relaxed: the bitmap is a witness, not synchronisation; fetch_or is atomic anyway. */
	uint64_t bit = 1ull << (idx % 64);
	uint64_t old = atomic_fetch_or_explicit(&s->held[idx / 64], bit, memory_order_relaxed);
	if (old & bit)
		report(s, "object handed out while held", (uint64_t)idx, w->id);
	struct tag *t = obj;
	t->owner = w->id + 1;
	t->seq = seq;
}

static void giving_back(struct stress *s, struct worker *w, void *obj, uint64_t seq)
{
	long idx = rf_mempool_obj_index(s->mp, obj);
	struct tag *t = obj;
	if (t->owner != w->id + 1 || t->seq != seq)
		report(s, "owner tag overwritten while held", (uint64_t)idx, t->owner);
	uint64_t bit = 1ull << (idx % 64);
	uint64_t old = atomic_fetch_and_explicit(&s->held[idx / 64], ~bit, memory_order_relaxed);
	if (!(old & bit))
		report(s, "put of an object not marked held", (uint64_t)idx, w->id);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	void *held[HOLD_MAX];
	uint64_t seq[HOLD_MAX];
	unsigned nheld = 0;
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (w->id + 1);
	pin(w->id);
	for (uint64_t op = 0; op < s->ops; op++) {
		if ((op & 4095) == 0 && now_s() > s->deadline) {
			report(s, "deadline passed", op, w->id);
			break;
		}
		uint64_t r = xorshift(&rnd);
		unsigned want = (r >> 8) % 32 + 1;
		bool get = nheld == 0 || (nheld + want <= HOLD_MAX && (r & 1));
		if (get) {
			void *objs[32];
			int rc;
			if (want == 1)
				rc = rf_mempool_get(s->mp, objs);
			else
				rc = rf_mempool_get_bulk(s->mp, objs, want);
			if (rc == -ENOBUFS) {
				atomic_fetch_add_explicit(&s->enobufs, 1, memory_order_relaxed);
				if (nheld == 0)
					sched_yield(); /* others hold everything */
				continue;
			}
			if (rc != 0) {
				report(s, "get_bulk returned neither 0 nor -ENOBUFS", (uint64_t)-rc, want);
				break;
			}
			atomic_fetch_add_explicit(&s->gets, want, memory_order_relaxed);
			for (unsigned i = 0; i < want; i++) {
				took(s, w, objs[i], op);
				held[nheld] = objs[i];
				seq[nheld++] = op;
			}
		} else {
			/* put back some from the top, single or bulk */
			unsigned k = want < nheld ? want : nheld;
			for (unsigned i = nheld - k; i < nheld; i++)
				giving_back(s, w, held[i], seq[i]);
			if (k == 1)
				rf_mempool_put(s->mp, held[nheld - 1]);
			else
				rf_mempool_put_bulk(s->mp, &held[nheld - k], k);
			nheld -= k;
		}
	}
	for (unsigned i = 0; i < nheld; i++)
		giving_back(s, w, held[i], seq[i]);
	rf_mempool_put_bulk(s->mp, held, nheld);
	return NULL;
}

static void run_stress(unsigned threads, unsigned n, unsigned cache, unsigned flags, unsigned div)
{
	struct stress s = {.threads = threads, .ops = stress_ops() / div,
			   .deadline = now_s() + DEADLINE_S};
	s.mp = rf_mempool_create("stress", n, sizeof(struct tag) + 48, cache,
				 flags | RF_MEMPOOL_QUIET);
	cr_assert_not_null(s.mp);
	s.held = calloc((n + 63) / 64, sizeof(*s.held));
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	for (unsigned i = 0; i < threads; i++) {
		w[i] = (struct worker){.s = &s, .id = i};
		cr_assert_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(atomic_load(&s.errors), 0, "%s", s.first_error);
	cr_log_info("%u threads, n %u, cache %u: %llu objects got, %llu ENOBUFS", threads, n,
		    cache, (unsigned long long)atomic_load(&s.gets),
		    (unsigned long long)atomic_load(&s.enobufs));
	cr_assert_gt(atomic_load(&s.gets), s.ops, "the workers did work");
	cr_assert_eq(rf_mempool_debug_errors(s.mp), 0, "debug mode saw no misuse");
	for (unsigned i = 0; i < (n + 63) / 64; i++)
		cr_assert_eq(atomic_load(&s.held[i]), 0, "bitmap word %u: objects still held", i);
	cr_assert_eq(rf_mempool_avail_count(s.mp), n, "every object came back");
	/* and they are really reachable: this thread gets all n, each once */
	void **all = calloc(n, sizeof(void *));
	unsigned char *seen = calloc(n, 1);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(rf_mempool_get(s.mp, &all[i]), 0, "object %u of %u", i, n);
		long idx = rf_mempool_obj_index(s.mp, all[i]);
		cr_assert(idx >= 0 && !seen[idx], "object %ld", idx);
		seen[idx] = 1;
	}
	rf_mempool_put_bulk(s.mp, all, n);
	free(seen);
	free(all);
	free(s.held);
	rf_mempool_free(s.mp);
}

/* Scarce: 4 threads can hold up to 384 objects and caches hold more, so ENOBUFS and refills
 * from a near-empty ring happen all the time. */
Test(mempool_stress, four_threads_scarce_pool_with_caches)
{
	run_stress(4, 256, 32, 0, 1);
}

Test(mempool_stress, two_threads_plenty_with_caches)
{
	run_stress(2, 8192, 256, 0, 1);
}

Test(mempool_stress, two_threads_without_caches)
{
	/* every call goes through the ring, where a thread preempted mid-operation makes the
	 * other spin then yield: slow on a loaded 2-CPU machine, so fewer operations */
	run_stress(2, 512, 0, RF_MEMPOOL_NO_CACHE, 4);
}

Test(mempool_stress, four_threads_debug_mode)
{
	/* the cookies' CAS under contention; any report would also count as a failure below */
	run_stress(4, 1024, 64, RF_MEMPOOL_DEBUG, 2);
}

/* Each thread counts in its own cache; a read sums them, threads that exited included. */
#define HIT_THREADS 3
#define HIT_PAIRS 5000
static void *hit_pairs(void *arg)
{
	struct rf_mempool *mp = arg;
	for (unsigned i = 0; i < HIT_PAIRS; i++) {
		void *x;
		if (rf_mempool_get(mp, &x))
			return (void *)1;
		rf_mempool_put(mp, x);
	}
	return NULL;
}

Test(mempool_stress, cache_hits_of_every_thread_add_up)
{
	struct rf_mempool *mp = rf_mempool_create("hitmt", 1024, 64, 32, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(mp);
	pthread_t t[HIT_THREADS];
	for (unsigned i = 0; i < HIT_THREADS; i++)
		pthread_create(&t[i], NULL, hit_pairs, mp);
	/* A reader meanwhile (as the stats registry would be): counts only grow. */
	uint64_t last = 0;
	for (unsigned k = 0; k < 200; k++) {
		struct rf_mempool_stats s;
		rf_mempool_stats_get(mp, &s);
		cr_assert_geq(s.cache_hits, last);
		last = s.cache_hits;
	}
	for (unsigned i = 0; i < HIT_THREADS; i++) {
		void *rv;
		pthread_join(t[i], &rv);
		cr_assert_null(rv);
	}
	struct rf_mempool_stats st;
	rf_mempool_stats_get(mp, &st);
	/* each thread: its first get misses (empty cache), every later one hits */
	cr_assert_eq(st.cache_misses, HIT_THREADS);
	cr_assert_eq(st.cache_hits, (uint64_t)HIT_THREADS * (HIT_PAIRS - 1));
	rf_mempool_free(mp);
}
