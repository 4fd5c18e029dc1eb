/*
 * tests/hash/test_hash_resize.c: the table grows from 1 bucket to >= 64K entries while readers
 * run, and no reader ever misses a key that is present throughout its lookup.
 *
 * One writer inserts keys 0..N-1 in order (value = key + 1) and publishes a watermark after
 * each insert; a second writer keeps inserting and deleting keys of another range (churn:
 * marked nodes and bucket inits racing the growth). Readers pick keys below the watermark
 * (present since before their lookup began) with single and bulk lookups: each must be found
 * with its value. Keys of a range never inserted must never be found.
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>

#define N 100000u           /* entries: past 64K, so the table reaches 128K buckets */
#define CHURN_BASE (1u << 30)
#define ABSENT_BASE (1u << 31)
#define READERS 2

struct shared {
	struct rf_hash *h;
	_Atomic uint64_t mark; /* keys < mark are present */
	_Atomic int done;
	_Atomic unsigned errors;
	_Atomic uint64_t lookups;
	uint64_t bad_key, bad_val;
	unsigned id;
};

static void pin(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % 2, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
}

static void *grower(void *p)
{
	struct shared *s = p;
	pin(0);
	rf_qsbr_register();
	for (uint64_t k = 0; k < N; k++) {
		if (rf_hash_insert(s->h, &k, (void *)(uintptr_t)(k + 1)) != 0)
			atomic_fetch_add(&s->errors, 1);
		/* release: a reader that acquires mark > k finds k's insert done before it */
		atomic_store_explicit(&s->mark, k + 1, memory_order_release);
		if ((k & 63) == 0)
			rf_qsbr_quiescent();
	}
	atomic_store(&s->done, 1);
	rf_qsbr_unregister();
	return NULL;
}

static void *churner(void *p)
{
	struct shared *s = p;
	pin(1);
	rf_qsbr_register();
	uint64_t i = 0;
	while (!atomic_load(&s->done)) {
		uint64_t k = CHURN_BASE + (i * 2654435761u) % 4096;
		if (i & 1)
			rf_hash_delete(s->h, &k, NULL);
		else
			rf_hash_insert(s->h, &k, (void *)(uintptr_t)(k + 1)); /* -EEXIST fine */
		if ((++i & 63) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

static void *reader(void *p)
{
	struct shared *s = p;
	unsigned id = __atomic_fetch_add(&s->id, 1, __ATOMIC_RELAXED);
	pin(id);
	rf_qsbr_register();
	uint64_t rnd = 88172645463325252ull + id, n = 0;
	uint64_t keys[32];
	const void *kp[32];
	void *vals[32];
	for (unsigned i = 0; i < 32; i++)
		kp[i] = &keys[i];
	while (!atomic_load(&s->done) && atomic_load(&s->errors) == 0) {
		/* acquire: pairs with the grower's release; keys below are present. */
		uint64_t m = atomic_load_explicit(&s->mark, memory_order_acquire);
		if (m == 0)
			continue;
		for (unsigned i = 0; i < 32; i++) {
			rnd ^= rnd << 13, rnd ^= rnd >> 7, rnd ^= rnd << 17;
			keys[i] = (i & 1) ? m - 1 - (rnd % (m < 64 ? m : 64)) : rnd % m; /* new and old */
		}
		if (n & 1) {
			rf_hash_lookup_bulk(s->h, kp, 32, vals);
		} else {
			for (unsigned i = 0; i < 32; i++)
				vals[i] = rf_hash_lookup(s->h, &keys[i]);
		}
		for (unsigned i = 0; i < 32; i++)
			if (vals[i] != (void *)(uintptr_t)(keys[i] + 1) &&
			    atomic_fetch_add(&s->errors, 1) == 0) {
				s->bad_key = keys[i];
				s->bad_val = (uint64_t)(uintptr_t)vals[i];
			}
		uint64_t absent = ABSENT_BASE + rnd % N;
		if (rf_hash_lookup(s->h, &absent) != NULL && atomic_fetch_add(&s->errors, 1) == 0)
			s->bad_key = absent;
		n++;
		rf_qsbr_quiescent();
	}
	atomic_fetch_add(&s->lookups, n * 33);
	rf_qsbr_unregister();
	return NULL;
}

Test(hash_resize, readers_never_miss_present_keys_while_growing)
{
	static struct shared s;
	memset(&s, 0, sizeof(s));
	s.h = rf_hash_create("resize", 8, N + 8192, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(s.h);
	cr_assert_eq(rf_hash_buckets(s.h), 1);
	pthread_t g, c, r[READERS];
	for (unsigned i = 0; i < READERS; i++)
		cr_assert_eq(pthread_create(&r[i], NULL, reader, &s), 0);
	cr_assert_eq(pthread_create(&c, NULL, churner, &s), 0);
	cr_assert_eq(pthread_create(&g, NULL, grower, &s), 0);
	pthread_join(g, NULL);
	pthread_join(c, NULL);
	for (unsigned i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	cr_assert_eq(atomic_load(&s.errors), 0, "key %lu: got %#lx", (unsigned long)s.bad_key,
		     (unsigned long)s.bad_val);
	cr_assert_geq(rf_hash_buckets(s.h), 65536, "grew");
	rf_qsbr_register();
	for (uint64_t k = 0; k < N; k++)
		cr_assert_eq(rf_hash_lookup(s.h, &k), (void *)(uintptr_t)(k + 1), "key %lu after", (unsigned long)k);
	size_t n = 0;
	struct rf_hash_iter it;
	rf_hash_iter_init(s.h, &it);
	const void *key;
	while (rf_hash_iter_next(s.h, &it, &key, NULL)) {
		uint64_t k;
		memcpy(&k, key, 8);
		n += k < N;
	}
	cr_assert_eq(n, N);
	rf_qsbr_unregister();
	cr_log_info("%lu lookups during growth to %zu buckets", (unsigned long)atomic_load(&s.lookups),
		    rf_hash_buckets(s.h));
	rf_hash_free(s.h);
}
