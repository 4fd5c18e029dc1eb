/*
 * tests/ring/test_slotring.c: the slot ring (ringflow/slotring.h), single-threaded edges and
 * a two-thread stress test.
 *
 * Edges: bad arguments, empty, full (exactly `count` objects fit), NULL as an object, many
 * laps of a small ring (a slot's old sequence word must never pass for a new one). Stress: one
 * producer and one consumer on the two CPUs move 10^7 numbered objects in random burst sizes;
 * the consumer checks each is exactly the next one (nothing lost, duplicated or reordered) and
 * both sides' sums must agree. Bounded in time: a stuck ring fails instead of hanging.
 */
#include "rf_test.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/slotring.h>

#define P(x) ((void *)(uintptr_t)(x))
#define DEADLINE_S 240

Test(slotring, create_rejects_bad_counts)
{
	errno = 0;
	cr_assert_null(rf_slotring_create(0));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_slotring_create(1));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_slotring_create(12));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_slotring_create(1u << 31));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	void *o[1];
	cr_assert_eq(rf_slotring_enqueue_burst(NULL, o, 1), 0);
	cr_assert_eq(errno, EINVAL);
	rf_slotring_free(NULL); /* no-op */
}

Test(slotring, empty_full_and_fifo_order)
{
	struct rf_slotring *r = rf_slotring_create(8);
	cr_assert_not_null(r);
	void *o = P(7);
	cr_assert_eq(rf_slotring_dequeue(r, &o), -ENOENT);
	cr_assert_eq(o, P(7), "untouched when empty");
	void *in[10], *out[10];
	for (unsigned i = 0; i < 10; i++)
		in[i] = P(100 + i);
	cr_assert_eq(rf_slotring_enqueue_burst(r, in, 10), 8, "exactly count fit");
	cr_assert_eq(rf_slotring_enqueue(r, P(1)), -ENOBUFS);
	cr_assert_eq(rf_slotring_dequeue_burst(r, out, 3), 3);
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(out[i], P(100 + i));
	cr_assert_eq(rf_slotring_enqueue_burst(r, in + 8, 2), 2);
	cr_assert_eq(rf_slotring_dequeue_burst(r, out, 10), 7, "a burst takes what is there");
	for (unsigned i = 0; i < 7; i++)
		cr_assert_eq(out[i], P(103 + i));
	cr_assert_eq(rf_slotring_dequeue_burst(r, out, 4), 0);
	rf_slotring_free(r);
}

Test(slotring, enqueue_failures_counted_on_a_full_ring)
{
	struct rf_slotring *r = rf_slotring_create(8);
	void *in[12] = {0}, *out[4];
	cr_assert_eq(rf_slotring_enqueue_burst(r, in, 8), 8);
	cr_assert_eq(rf_slotring_enqueue_failures(r, NULL), 0, "a success counts nothing");
	for (unsigned i = 0; i < 25; i++)
		cr_assert_eq(rf_slotring_enqueue(r, P(1)), -ENOBUFS);
	cr_assert_eq(rf_slotring_dequeue_burst(r, out, 4), 4);
	cr_assert_eq(rf_slotring_enqueue_burst(r, in, 12), 4); /* +1 call, +8 objects */
	uint64_t objs = 0;
	cr_assert_eq(rf_slotring_enqueue_failures(r, &objs), 26);
	cr_assert_eq(objs, 25 + 8);
	cr_assert_geq(offsetof(struct rf_slotring, fail_calls),
		      offsetof(struct rf_slotring, cons_pos) + RF_SLOTRING_ALIGN);
	cr_assert_geq(offsetof(struct rf_slotring, slots),
		      offsetof(struct rf_slotring, fail_calls) + RF_SLOTRING_ALIGN);
	rf_slotring_free(r);
}

Test(slotring, null_is_an_object)
{
	struct rf_slotring *r = rf_slotring_create(4);
	void *o = P(1);
	cr_assert_eq(rf_slotring_enqueue(r, NULL), 0);
	cr_assert_eq(rf_slotring_dequeue(r, &o), 0);
	cr_assert_null(o);
	cr_assert_eq(rf_slotring_dequeue(r, &o), -ENOENT);
	rf_slotring_free(r);
}

Test(slotring, many_laps_keep_order)
{
	struct rf_slotring *r = rf_slotring_create(4);
	uint64_t next_in = 0, next_out = 0;
	for (unsigned round = 0; round < 100000; round++) {
		void *in[5], *out[5];
		unsigned n = round % 6;
		for (unsigned i = 0; i < 5; i++)
			in[i] = P(next_in + i + 1);
		next_in += rf_slotring_enqueue_burst(r, in, n > 5 ? 5 : n);
		unsigned m = rf_slotring_dequeue_burst(r, out, (round * 7) % 5);
		for (unsigned i = 0; i < m; i++)
			cr_assert_eq(out[i], P(++next_out), "round %u", round);
		cr_assert_leq(next_in - next_out, 4);
	}
	rf_slotring_free(r);
}

/* ---- two threads ---- */

struct st {
	struct rf_slotring *r;
	uint64_t items, deadline;
	uint64_t sum_in, sum_out;
	_Atomic unsigned errors, timed_out;
	char first_error[128];
};

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void pin(unsigned i)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(i % (unsigned)sysconf(_SC_NPROCESSORS_ONLN), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *producer(void *p)
{
	struct st *s = p;
	pin(0);
	uint64_t next = 0, rnd = 12345;
	void *b[64];
	unsigned idle = 0;
	while (next < s->items) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		unsigned n = (unsigned)(rnd >> 59) + 1; /* 1..32 */
		if (n > s->items - next)
			n = (unsigned)(s->items - next);
		for (unsigned i = 0; i < n; i++)
			b[i] = P(next + i + 1);
		unsigned m = rf_slotring_enqueue_burst(s->r, b, n);
		for (unsigned i = 0; i < m; i++)
			s->sum_in += next + i + 1;
		next += m;
		if (m == 0 && ++idle % 1024 == 0) {
			sched_yield();
			if (now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				break;
			}
		}
	}
	return NULL;
}

static void *consumer(void *p)
{
	struct st *s = p;
	pin(1);
	uint64_t expect = 1, rnd = 777;
	void *b[64];
	unsigned idle = 0;
	while (expect <= s->items && !atomic_load(&s->timed_out)) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		unsigned n = (unsigned)(rnd >> 58) + 1; /* 1..64 */
		unsigned m = rf_slotring_dequeue_burst(s->r, b, n);
		for (unsigned i = 0; i < m; i++, expect++) {
			if (b[i] != P(expect) && atomic_fetch_add(&s->errors, 1) == 0)
				snprintf(s->first_error, sizeof(s->first_error),
					 "expected %llu, got %llu", (unsigned long long)expect,
					 (unsigned long long)(uintptr_t)b[i]);
			s->sum_out += (uintptr_t)b[i];
		}
		if (m == 0 && ++idle % 1024 == 0) {
			sched_yield();
			if (now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				break;
			}
		}
	}
	return NULL;
}

Test(slotring, stress_spsc_nothing_lost_duplicated_or_reordered, .timeout = 600)
{
	const char *e = getenv("RF_STRESS_ITEMS");
	uint64_t items = e && strtoull(e, NULL, 10) >= 1000 ? strtoull(e, NULL, 10) : 10000000ull;
	struct st s = {.r = rf_slotring_create(256), .items = items,
		       .deadline = now_s() + DEADLINE_S};
	cr_assert_not_null(s.r);
	pthread_t a, b;
	pthread_create(&b, NULL, consumer, &s);
	pthread_create(&a, NULL, producer, &s);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	cr_assert_eq(atomic_load(&s.timed_out), 0, "stuck: not done in %d s", DEADLINE_S);
	cr_assert_eq(atomic_load(&s.errors), 0, "%u errors, first: %s", atomic_load(&s.errors),
		     s.first_error);
	cr_assert_eq(s.sum_in, items * (items + 1) / 2);
	cr_assert_eq(s.sum_out, s.sum_in, "checksums differ");
	void *o;
	cr_assert_eq(rf_slotring_dequeue(s.r, &o), -ENOENT, "nothing left over");
	rf_slotring_free(s.r);
}
