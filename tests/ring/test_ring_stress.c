/*
 * tests/ring/test_ring_stress.c: producers and consumers on both CPUs move >= 10^7 items and
 * the test proves nothing was lost, duplicated or reordered.
 *
 * Each item is (producer id, sequence number). Consumers check that, for every producer,
 * the sequence numbers they see only grow (each producer's order is promised). A shared
 * bitmap catches duplicates (a bit set twice), and at the end every bit must be set and the
 * sum of all items must match the closed form: nothing lost. The test is bounded in time:
 * a stuck ring fails it with a message instead of hanging it.
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

#include <ringflow/ring.h>

#define MAX_THREADS 8
#define DEADLINE_S 240

static uint64_t stress_items(void)
{
	const char *e = getenv("RF_STRESS_ITEMS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 0;
	return n >= 1000 ? n : 10000000ull; /* 10^7 by default, as CI requires */
}

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

struct stress {
	struct rf_ring *ring;
	unsigned producers, consumers;
	uint64_t per_producer;
	uint64_t total;
	uint64_t deadline;
	_Atomic uint64_t *seen; /* bitmap over producer * per_producer + seq */
	_Atomic uint64_t consumed;
	_Atomic uint64_t sum;
	_Atomic unsigned errors;
	_Atomic unsigned timed_out;
	unsigned next_id;
	pthread_mutex_t id_lock; /* hands out thread ids at start; not on the data path */
	char first_error[160];
};

struct worker {
	struct stress *s;
	unsigned id;
	bool producer;
};

static void pin(unsigned i)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(i % (unsigned)sysconf(_SC_NPROCESSORS_ONLN), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void report(struct stress *s, const char *msg, uint64_t a, uint64_t b)
{
	if (atomic_fetch_add(&s->errors, 1) == 0)
		snprintf(s->first_error, sizeof(s->first_error), "%s (%llu, %llu)", msg,
			 (unsigned long long)a, (unsigned long long)b);
}

/* Item encoding: never NULL, producer in the top bits. */
static inline void *encode(unsigned pid, uint64_t seq)
{
	return (void *)(uintptr_t)(((uint64_t)pid << 40) | (seq + 1));
}

static void *produce(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	pin(w->id);
	unsigned seed = w->id * 7919u + 1;
	void *batch[64];
	uint64_t seq = 0;
	while (seq < s->per_producer) {
		unsigned want = 1 + (unsigned)(rand_r(&seed) % 48);
		if (want > s->per_producer - seq)
			want = (unsigned)(s->per_producer - seq);
		for (unsigned i = 0; i < want; i++)
			batch[i] = encode(w->id, seq + i);
		bool bulk = rand_r(&seed) & 1;
		unsigned done = 0;
		while (done < want) {
			unsigned n = bulk ? rf_ring_enqueue_bulk(s->ring, batch + done, want - done, NULL)
					  : rf_ring_enqueue_burst(s->ring, batch + done, want - done, NULL);
			done += n;
			if (n == 0) {
				if (now_s() > s->deadline) {
					atomic_store(&s->timed_out, 1);
					return NULL;
				}
				sched_yield();
			}
		}
		seq += want;
	}
	return NULL;
}

static void *consume(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;
	pin(w->id + 1);
	unsigned seed = w->id * 104729u + 3;
	uint64_t last[MAX_THREADS];
	for (unsigned p = 0; p < MAX_THREADS; p++)
		last[p] = UINT64_MAX;
	void *batch[64];
	uint64_t local_sum = 0;
	for (;;) {
		if (atomic_load_explicit(&s->consumed, memory_order_relaxed) >= s->total)
			break;
		unsigned want = 1 + (unsigned)(rand_r(&seed) % 48);
		unsigned n = (rand_r(&seed) & 1) ? rf_ring_dequeue_bulk(s->ring, batch, want, NULL)
						 : rf_ring_dequeue_burst(s->ring, batch, want, NULL);
		if (n == 0) {
			if (now_s() > s->deadline) {
				atomic_store(&s->timed_out, 1);
				break;
			}
			sched_yield();
			continue;
		}
		for (unsigned i = 0; i < n; i++) {
			uint64_t v = (uint64_t)(uintptr_t)batch[i];
			unsigned pid = (unsigned)(v >> 40);
			uint64_t seq = (v & ((1ull << 40) - 1)) - 1;
			if (pid >= s->producers || seq >= s->per_producer) {
				report(s, "garbage item", pid, seq);
				continue;
			}
			if (last[pid] != UINT64_MAX && seq <= last[pid])
				report(s, "producer order broken: seq after last", seq, last[pid]);
			last[pid] = seq;
			uint64_t bit = pid * s->per_producer + seq;
			uint64_t old = atomic_fetch_or_explicit(&s->seen[bit / 64], 1ull << (bit % 64),
								memory_order_relaxed);
			if (old & (1ull << (bit % 64)))
				report(s, "duplicate item (producer, seq)", pid, seq);
			local_sum += v;
		}
		atomic_fetch_add_explicit(&s->consumed, n, memory_order_relaxed);
	}
	atomic_fetch_add(&s->sum, local_sum);
	return NULL;
}

static void run_stress(unsigned producers, unsigned consumers, unsigned flags, unsigned size)
{
	struct stress s = {0};
	s.ring = rf_ring_create("stress", size, flags);
	cr_assert_not_null(s.ring);
	s.producers = producers;
	s.consumers = consumers;
	s.per_producer = stress_items() / producers;
	s.total = s.per_producer * producers;
	s.deadline = now_s() + DEADLINE_S;
	size_t words = (size_t)(s.total + 63) / 64;
	s.seen = calloc(words, sizeof(*s.seen));
	cr_assert_not_null(s.seen);

	pthread_t tids[2 * MAX_THREADS];
	struct worker ws[2 * MAX_THREADS];
	unsigned nt = 0;
	for (unsigned i = 0; i < consumers; i++, nt++) {
		ws[nt] = (struct worker){.s = &s, .id = i, .producer = false};
		pthread_create(&tids[nt], NULL, consume, &ws[nt]);
	}
	for (unsigned i = 0; i < producers; i++, nt++) {
		ws[nt] = (struct worker){.s = &s, .id = i, .producer = true};
		pthread_create(&tids[nt], NULL, produce, &ws[nt]);
	}
	for (unsigned i = 0; i < nt; i++)
		pthread_join(tids[i], NULL);

	cr_assert_eq(atomic_load(&s.timed_out), 0, "ring stalled: %llu of %llu consumed in %d s",
		     (unsigned long long)atomic_load(&s.consumed), (unsigned long long)s.total,
		     DEADLINE_S);
	cr_assert_eq(atomic_load(&s.errors), 0, "%u errors, first: %s", atomic_load(&s.errors),
		     s.first_error);
	cr_assert_eq(atomic_load(&s.consumed), s.total);
	uint64_t missing = 0;
	for (uint64_t b = 0; b < s.total; b++)
		if (!(atomic_load_explicit(&s.seen[b / 64], memory_order_relaxed) & (1ull << (b % 64))))
			missing++;
	cr_assert_eq(missing, 0, "%llu items lost", (unsigned long long)missing);
	/* sum over producers p and seqs q of (p << 40 | (q + 1)) */
	uint64_t n = s.per_producer, expect = 0;
	for (unsigned p = 0; p < producers; p++)
		expect += ((uint64_t)p << 40) * n + n * (n + 1) / 2;
	cr_assert_eq(atomic_load(&s.sum), expect, "checksum mismatch");
	cr_assert(rf_ring_empty(s.ring));
	free(s.seen);
	rf_ring_free(s.ring);
}

Test(ring_stress, spsc_keeps_order_loses_nothing)
{
	run_stress(1, 1, RF_RING_SP_ENQ | RF_RING_SC_DEQ, 1024);
}

Test(ring_stress, spsc_small_ring_keeps_order)
{
	run_stress(1, 1, RF_RING_SP_ENQ | RF_RING_SC_DEQ, 64);
}

Test(ring_stress, mpmc_2p2c_per_producer_order)
{
	run_stress(2, 2, 0, 1024);
}

Test(ring_stress, mpmc_4p4c_oversubscribed_per_producer_order)
{
	run_stress(4, 4, 0, 256);
}

Test(ring_stress, mpsc_3p1c_per_producer_order)
{
	run_stress(3, 1, RF_RING_SC_DEQ, 512);
}

Test(ring_stress, spmc_1p3c_per_producer_order)
{
	run_stress(1, 3, RF_RING_SP_ENQ, 512);
}

/* Producers racing on a full ring: every failed call is counted once, none lost to the race
 * (the counter is a read-modify-write because producers fail together). */
#define FAIL_THREADS 4
#define FAIL_CALLS 20000
static void *fail_loop(void *arg)
{
	struct rf_ring *r = arg;
	void *objs[3] = {NULL, NULL, NULL};
	for (unsigned i = 0; i < FAIL_CALLS; i++)
		if (rf_ring_enqueue_bulk(r, objs, (i % 3) + 1, NULL) != 0)
			return (void *)1; /* the ring is full: a success is a bug */
	return NULL;
}

Test(ring_stress, concurrent_failed_enqueues_are_all_counted)
{
	struct rf_ring *r = rf_ring_create("full", 16, 0);
	cr_assert_not_null(r);
	void *fill[16] = {0};
	cr_assert_eq(rf_ring_enqueue_bulk(r, fill, 16, NULL), 16);
	pthread_t t[FAIL_THREADS];
	for (unsigned i = 0; i < FAIL_THREADS; i++)
		pthread_create(&t[i], NULL, fail_loop, r);
	for (unsigned i = 0; i < FAIL_THREADS; i++) {
		void *rv;
		pthread_join(t[i], &rv);
		cr_assert_null(rv, "an enqueue succeeded on a full ring");
	}
	uint64_t objs, calls = rf_ring_enqueue_failures(r, &objs);
	/* per thread: i % 3 + 1 over FAIL_CALLS calls */
	uint64_t per = 0;
	for (unsigned i = 0; i < FAIL_CALLS; i++)
		per += i % 3 + 1;
	cr_assert_eq(calls, (uint64_t)FAIL_THREADS * FAIL_CALLS);
	cr_assert_eq(objs, FAIL_THREADS * per);
	rf_ring_free(r);
}
