/*
 * tests/hash/test_hash_stress.c: 3 threads on the 2 CPUs hammer a small hot key set with
 * insert / delete / upsert / lookup (>= 10^7 operations in all) and the test proves every
 * result is explainable.
 *
 * Every value ever written is unique and names its writer: value = key index << 48 |
 * thread << 40 | seq (the writer's seq-th write). Per value, the test logs when its write
 * started and when a delete or upsert that returned it as "old" finished, on a logical clock
 * every operation ticks. It then checks:
 *   - a lookup of key k returns NULL or a value written for k, whose write started before the
 *     lookup ended and whose removal (if any) did not finish before the lookup started
 *     (no value from nowhere, no resurrected delete);
 *   - a value is returned as "old" at most once, and only if it was written for that key;
 *   - at the end, per key, every successfully written value was removed exactly once except
 *     at most one, and that one is exactly what the table holds (no lost insert, no lost
 *     delete); count and iteration agree.
 * RF_HASH_STRESS_OPS scales the run (the TSan run uses it); the default is 10^7.
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

#define THREADS 3
#define KEYS 64

static uint64_t stress_ops(void)
{
	const char *e = getenv("RF_HASH_STRESS_OPS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 0;
	return n >= 1000 ? n : 10000000ull;
}

struct vlog {                  /* one per value a thread may write */
	_Atomic uint32_t start;        /* clock when the write began (0: not written) */
	_Atomic uint32_t removed_end;  /* clock when the remover finished (0: never removed) */
	_Atomic uint8_t written;       /* 1: the insert/upsert succeeded */
	_Atomic uint8_t removed;       /* times returned as old */
};

struct stress {
	struct rf_hash *h;
	uint64_t per_thread;
	uint64_t max_vals;
	struct vlog *log[THREADS];
	_Atomic uint64_t issued[THREADS]; /* values whose write has begun */
	_Atomic uint32_t clock;
	_Atomic unsigned errors;
	_Atomic uint64_t lookups, hits, eagain;
	char first_error[200];
	pthread_mutex_t err_lock;
};

struct worker {
	struct stress *s;
	unsigned id;
};

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The logical clock: relaxed RMWs on one variable are totally ordered, which is all the
 * checks need, and they add no happens-before edges that could hide a race from TSan. */
static uint32_t tick(struct stress *s)
{
	return atomic_fetch_add_explicit(&s->clock, 1, memory_order_relaxed) + 1;
}

static void fail(struct stress *s, const char *what, uint64_t key, uint64_t v)
{
	if (atomic_fetch_add(&s->errors, 1) == 0) {
		pthread_mutex_lock(&s->err_lock);
		snprintf(s->first_error, sizeof(s->first_error), "%s: key %lu value %#lx", what,
			 (unsigned long)key, (unsigned long)v);
		pthread_mutex_unlock(&s->err_lock);
	}
}

static struct vlog *vlog_of(struct stress *s, uint64_t v, uint64_t key)
{
	uint64_t k = v >> 48, t = (v >> 40) & 0xff, seq = v & ((1ull << 40) - 1);
	if (k != key || t >= THREADS || seq >= s->max_vals ||
	    seq >= atomic_load_explicit(&s->issued[t], memory_order_relaxed))
		return NULL;
	return &s->log[t][seq];
}

/* A value came back as "old" from delete/upsert that finished at clock `end`. */
static void removed(struct stress *s, uint64_t key, void *old, uint32_t end)
{
	uint64_t v = (uint64_t)(uintptr_t)old;
	struct vlog *l = vlog_of(s, v, key);
	if (!l) {
		fail(s, "removed a value never written for this key", key, v);
		return;
	}
	if (atomic_fetch_add_explicit(&l->removed, 1, memory_order_relaxed) != 0)
		fail(s, "value removed twice", key, v);
	atomic_store_explicit(&l->removed_end, end, memory_order_relaxed);
}

static void *worker(void *p)
{
	struct worker *w = p;
	struct stress *s = w->s;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->id % 2, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
	rf_qsbr_register();
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (w->id + 1), seq = 0;
	uint64_t lookups = 0, hits = 0, eagain = 0;
	for (uint64_t i = 0; i < s->per_thread && atomic_load(&s->errors) == 0; i++) {
		uint64_t r = xorshift(&rnd), key = r % KEYS, op = (r >> 16) % 10;
		if (op < 5) {
			uint32_t ts = tick(s);
			void *got = rf_hash_lookup(s->h, &key);
			uint32_t te = tick(s);
			lookups++;
			if (got) {
				hits++;
				uint64_t v = (uint64_t)(uintptr_t)got;
				struct vlog *l = vlog_of(s, v, key);
				if (!l) {
					fail(s, "lookup returned a value never written for this key", key, v);
				} else {
					uint32_t st = atomic_load_explicit(&l->start, memory_order_relaxed);
					uint32_t re = atomic_load_explicit(&l->removed_end, memory_order_relaxed);
					if (st == 0 || st > te)
						fail(s, "lookup saw a value before its write began", key, v);
					if (re != 0 && re < ts)
						fail(s, "lookup saw a value deleted before it started", key, v);
				}
			}
		} else if (op < 9) {
			/* insert (5..6), upsert (7), delete (8) */
			if (op == 8) {
				void *old = NULL;
				int rc = rf_hash_delete(s->h, &key, &old);
				uint32_t te = tick(s);
				if (rc == 0)
					removed(s, key, old, te);
				else if (rc != -ENOENT)
					fail(s, "delete returned an unexpected code", key, (uint64_t)-rc);
			} else if (seq < s->max_vals) {
				uint64_t v = key << 48 | (uint64_t)w->id << 40 | seq;
				struct vlog *l = &s->log[w->id][seq];
				atomic_store_explicit(&l->start, tick(s), memory_order_relaxed);
				/* release: a reader that sees the value also sees issued cover it */
				atomic_store_explicit(&s->issued[w->id], ++seq, memory_order_release);
				void *old = NULL;
				int rc = op == 7 ? rf_hash_upsert(s->h, &key, (void *)(uintptr_t)v, &old)
						 : rf_hash_insert(s->h, &key, (void *)(uintptr_t)v);
				uint32_t te = tick(s);
				if (rc == 0 || rc == 1)
					atomic_store_explicit(&l->written, 1, memory_order_relaxed);
				if (rc == 1)
					removed(s, key, old, te);
				else if (rc == -EAGAIN) /* checked after the join */
					eagain++;
				else if (rc < 0 && !(rc == -EEXIST && op != 7))
					fail(s, "write returned an unexpected code", key, (uint64_t)-rc);
			}
		}
		if ((i & 63) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	atomic_fetch_add(&s->lookups, lookups);
	atomic_fetch_add(&s->hits, hits);
	atomic_fetch_add(&s->eagain, eagain);
	return NULL;
}

Test(hash_stress, mixed_ops_on_hot_keys_are_explainable)
{
	static struct stress s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.err_lock, NULL);
	uint64_t total = stress_ops();
	s.per_thread = total / THREADS + 1;
	s.max_vals = s.per_thread * 4 / 10 + 64; /* writes are 40 % of the ops */
	s.h = rf_hash_create("stress", 8, 1024, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(s.h);
	for (unsigned t = 0; t < THREADS; t++) {
		s.log[t] = calloc(s.max_vals, sizeof(struct vlog));
		cr_assert_not_null(s.log[t]);
	}
	pthread_t th[THREADS];
	struct worker w[THREADS];
	for (unsigned t = 0; t < THREADS; t++) {
		w[t] = (struct worker){&s, t};
		cr_assert_eq(pthread_create(&th[t], NULL, worker, &w[t]), 0);
	}
	for (unsigned t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	cr_assert_eq(atomic_load(&s.errors), 0, "%s", s.first_error);

	/* Final state, per key: the one unremoved written value is what the table holds. */
	rf_qsbr_register();
	uint64_t live[KEYS];
	unsigned nlive[KEYS];
	memset(nlive, 0, sizeof(nlive));
	for (unsigned t = 0; t < THREADS; t++) {
		uint64_t n = atomic_load(&s.issued[t]);
		for (uint64_t q = 0; q < n; q++)
			if (!atomic_load(&s.log[t][q].written))
				cr_assert_eq(atomic_load(&s.log[t][q].removed), 0,
					     "a value whose write failed was removed");
	}
	unsigned present = 0;
	for (uint64_t key = 0; key < KEYS; key++) {
		void *got = rf_hash_lookup(s.h, &key);
		if (!got)
			continue;
		present++;
		uint64_t v = (uint64_t)(uintptr_t)got;
		struct vlog *l = vlog_of(&s, v, key);
		cr_assert_not_null(l, "final value %#lx of key %lu was never written", (unsigned long)v,
				   (unsigned long)key);
		cr_assert_eq(atomic_load(&l->written), 1, "final value of key %lu: its write failed",
			     (unsigned long)key);
		cr_assert_eq(atomic_load(&l->removed), 0, "key %lu holds a removed value (resurrected)",
			     (unsigned long)key);
		live[key] = v;
		nlive[key] = 1;
	}
	/* Every written, never-removed value must be the final value of its key: else an insert
	 * (or upsert) was lost. */
	for (unsigned t = 0; t < THREADS; t++) {
		uint64_t n = atomic_load(&s.issued[t]);
		for (uint64_t q = 0; q < n; q++) {
			struct vlog *l = &s.log[t][q];
			if (!atomic_load(&l->written) || atomic_load(&l->removed))
				continue;
			/* the value written at (t, q): its key is fixed by the writer's rng
			 * stream, so find it among the live values */
			uint64_t tag = (uint64_t)t << 40 | q;
			bool found = false;
			for (unsigned k = 0; k < KEYS; k++)
				if (nlive[k] && (live[k] & ((1ull << 48) - 1)) == tag)
					found = true;
			cr_assert(found, "value (thread %u, seq %lu) written, never removed, not in the table",
				  t, (unsigned long)q);
		}
	}
	size_t iterated = 0;
	struct rf_hash_iter it;
	rf_hash_iter_init(s.h, &it);
	while (rf_hash_iter_next(s.h, &it, NULL, NULL))
		iterated++;
	cr_assert_eq(iterated, present);
	cr_assert_eq(rf_hash_count(s.h), present);
	rf_qsbr_unregister();
	cr_assert_eq(atomic_load(&s.eagain), 0,
		     "64 keys in a 1024-entry table: an insert never finds every slot near its key "
		     "dead and waiting");
	cr_log_info("%lu ops, %lu lookups (%lu hits), %u keys present, %lu -EAGAIN, %lu key copies from malloc",
		    (unsigned long)(s.per_thread * THREADS), (unsigned long)atomic_load(&s.lookups),
		    (unsigned long)atomic_load(&s.hits), present, (unsigned long)atomic_load(&s.eagain),
		    (unsigned long)rf_hash_overflow_allocs(s.h));
	rf_hash_free(s.h);
	for (unsigned t = 0; t < THREADS; t++)
		free(s.log[t]);
}
