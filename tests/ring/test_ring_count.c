/*
 * tests/ring/test_ring_count.c: rf_ring_count (and rf_mempool_avail_count, built on it) is a
 * consistent snapshot while a producer and a consumer run.
 *
 * The producer never has more than IN_FLIGHT items outstanding (it waits until the consumer
 * has taken the older ones), so the true count is always 0..IN_FLIGHT. A third thread reads
 * rf_ring_count the whole time: every value must be <= IN_FLIGHT, and in particular never
 * the capacity ("full"), which is what a prod.tail-then-cons.tail read reports when a
 * dequeue lands between the two loads. The items carry sequence numbers; the consumer checks
 * order and a checksum, so the pair is also proven to lose or duplicate nothing. The run is
 * bounded by an item count and a deadline (a stuck thread fails the test, never hangs it).
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <ringflow/mempool.h>
#include <ringflow/ring.h>

#define RING_SIZE 64
#define IN_FLIGHT 4
#define DEADLINE_S 120

static uint64_t items(void)
{
	const char *e = getenv("RF_STRESS_ITEMS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 0;
	return n >= 1000 ? n : 100000ull;
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

struct pc {
	struct rf_ring *ring;
	uint64_t n;
	uint64_t deadline;
	_Atomic uint64_t consumed; /* items the consumer took */
	_Atomic int done;
	_Atomic int timed_out;
	_Atomic int watching; /* the producer starts once the watcher reads (so it does read) */
	uint64_t sum, bad_order;   /* consumer's own */
	uint64_t reads, max_seen, over; /* watcher's own */
};

static void *producer(void *arg)
{
	struct pc *s = arg;
	while (!atomic_load(&s->watching))
		sched_yield();
	for (uint64_t i = 1; i <= s->n; i++) {
		/* acquire: pairs with the consumer's release add; keeps <= IN_FLIGHT in the ring */
		while (i - 1 - atomic_load_explicit(&s->consumed, memory_order_acquire) >= IN_FLIGHT) {
			if (now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				return NULL;
			}
			sched_yield();
		}
		while (rf_ring_enqueue(s->ring, (void *)(uintptr_t)i) != 0) { /* never: <= 4 in */
			if (now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				return NULL;
			}
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct pc *s = arg;
	uint64_t expect = 1;
	while (expect <= s->n) {
		void *obj;
		if (rf_ring_dequeue(s->ring, &obj) != 0) {
			if (atomic_load(&s->timed_out) || now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				break;
			}
			sched_yield(); /* 2 CPUs, 3 threads: let the producer run */
			continue;
		}
		uint64_t v = (uintptr_t)obj;
		if (v != expect)
			s->bad_order++;
		s->sum += v;
		expect++;
		/* release: pairs with the producer's acquire load; the slot is free again */
		atomic_fetch_add_explicit(&s->consumed, 1, memory_order_release);
	}
	atomic_store(&s->done, 1);
	return NULL;
}

static void *watcher(void *arg)
{
	struct pc *s = arg;
	while (!atomic_load(&s->done) && !atomic_load(&s->timed_out)) {
		unsigned c = rf_ring_count(s->ring);
		s->reads++;
		if (c > s->max_seen)
			s->max_seen = c;
		if (c > IN_FLIGHT)
			s->over++;
		if (rf_ring_full(s->ring))
			s->over++;
		if (s->reads == 1000)
			atomic_store(&s->watching, 1);
	}
	return NULL;
}

static void run_pair(unsigned flags)
{
	struct pc s = { .n = items(), .deadline = now_s() + DEADLINE_S };
	s.ring = rf_ring_create("count", RING_SIZE, flags);
	cr_assert_not_null(s.ring);
	pthread_t p, c, w;
	cr_assert_eq(pthread_create(&w, NULL, watcher, &s), 0);
	cr_assert_eq(pthread_create(&c, NULL, consumer, &s), 0);
	cr_assert_eq(pthread_create(&p, NULL, producer, &s), 0);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	pthread_join(w, NULL);
	cr_assert_not(atomic_load(&s.timed_out), "producer/consumer stuck past %d s", DEADLINE_S);
	cr_assert_eq(atomic_load(&s.consumed), s.n, "items lost");
	cr_assert_eq(s.bad_order, 0, "%lu items out of order or duplicated",
		     (unsigned long)s.bad_order);
	cr_assert_eq(s.sum, s.n * (s.n + 1) / 2, "checksum of the items");
	cr_assert_geq(s.reads, 1000);
	cr_assert_eq(s.over, 0,
		     "rf_ring_count read %lu times above %d (max %lu of %d) in %lu reads",
		     (unsigned long)s.over, IN_FLIGHT, (unsigned long)s.max_seen, RING_SIZE,
		     (unsigned long)s.reads);
	cr_assert_eq(rf_ring_count(s.ring), 0);
	rf_ring_free(s.ring);
}

Test(ring_count, never_full_while_consumer_keeps_it_near_empty_spsc)
{
	run_pair(RF_RING_SP_ENQ | RF_RING_SC_DEQ);
}

Test(ring_count, never_full_while_consumer_keeps_it_near_empty_mpmc)
{
	run_pair(0);
}

/* A pool with no cache is its ring. The test holds all but 2 * IN_FLIGHT objects and two
 * threads cycle IN_FLIGHT each, so the pool is nearly dry: avail_count must stay within
 * 0..2 * IN_FLIGHT. A wrapped ring count read it as "all free" at exactly this moment. */
#define POOL_HELD (RING_SIZE - 2 * IN_FLIGHT)

struct mpw {
	struct rf_mempool *mp;
	uint64_t rounds;
	_Atomic int users_left;
	_Atomic uint64_t failed_gets;
	_Atomic int watching; /* the users start once the watcher reads (so it does read) */
	uint64_t reads, bad;
	unsigned max_seen;
};

static void *pool_user(void *arg)
{
	struct mpw *s = arg;
	void *objs[IN_FLIGHT];
	while (!atomic_load(&s->watching))
		sched_yield();
	for (uint64_t r = 0; r < s->rounds; r++) {
		if (rf_mempool_get_bulk(s->mp, objs, IN_FLIGHT) != 0) {
			atomic_fetch_add(&s->failed_gets, 1); /* cannot happen: 2 users, 2 * 4 free */
			continue;
		}
		rf_mempool_put_bulk(s->mp, objs, IN_FLIGHT);
	}
	atomic_fetch_sub(&s->users_left, 1);
	return NULL;
}

static void *pool_watcher(void *arg)
{
	struct mpw *s = arg;
	while (atomic_load(&s->users_left) > 0) {
		unsigned a = rf_mempool_avail_count(s->mp);
		s->reads++;
		if (a > s->max_seen)
			s->max_seen = a;
		if (a > 2 * IN_FLIGHT)
			s->bad++;
		if (s->reads == 1000)
			atomic_store(&s->watching, 1);
	}
	return NULL;
}

Test(ring_count, mempool_avail_count_never_all_free_when_nearly_dry)
{
	struct mpw s = { .rounds = items(), .users_left = 2 };
	s.mp = rf_mempool_create("avail", RING_SIZE, 64, 0,
				 RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET | RF_MEMPOOL_NO_CACHE);
	cr_assert_not_null(s.mp);
	void *held[POOL_HELD];
	cr_assert_eq(rf_mempool_get_bulk(s.mp, held, POOL_HELD), 0);
	pthread_t u1, u2, w;
	cr_assert_eq(pthread_create(&w, NULL, pool_watcher, &s), 0);
	cr_assert_eq(pthread_create(&u1, NULL, pool_user, &s), 0);
	cr_assert_eq(pthread_create(&u2, NULL, pool_user, &s), 0);
	pthread_join(u1, NULL);
	pthread_join(u2, NULL);
	pthread_join(w, NULL);
	cr_assert_eq(atomic_load(&s.failed_gets), 0);
	cr_assert_geq(s.reads, 1000);
	cr_assert_eq(s.bad, 0, "avail_count above %d %lu times (max %u of %d) in %lu reads",
		     2 * IN_FLIGHT, (unsigned long)s.bad, s.max_seen, RING_SIZE,
		     (unsigned long)s.reads);
	cr_assert_eq(rf_mempool_avail_count(s.mp), 2 * IN_FLIGHT);
	rf_mempool_put_bulk(s.mp, held, POOL_HELD);
	cr_assert_eq(rf_mempool_avail_count(s.mp), RING_SIZE);
	rf_mempool_free(s.mp);
}
