/*
 * tests/hash/test_hash_mw.c: several lock-free writers on OVERLAPPING keys, with readers,
 * while the table grows from one bucket; the final content must equal the model rebuilt
 * from the writers' own logs.
 *
 * Four writers (two per CPU, so they preempt each other mid-operation) insert, upsert and
 * delete keys: a quarter of them on 8 hot keys, the rest from a range that widens as the run
 * goes on (so the table keeps growing and rebuilding under them). Every value written is
 * unique and encodes its key and writer: value = key << 32 | writer << 28 | seq. Each writer
 * logs the values it wrote successfully and the values its deletes and upserts got back as
 * "old". After the join:
 *   - a value was returned as old at most once, and only one that was written for that key;
 *   - per key, written minus removed is 0 or 1 values (two inserts of one key never both
 *     win), and the table holds exactly that value (nothing lost, nothing resurrected);
 *   - count, iteration (each key once) and the checksum of values agree with the model.
 * Two readers check every value they see encodes the key they asked for and was issued
 * (nothing torn or from nowhere), with single and bulk lookups. A second test races four
 * inserts of the same fresh key per round: exactly one returns 0, the others -EEXIST.
 * The same model check runs with one writer on a table created with RF_HASH_SINGLE_WRITER
 * (the plain-store write path) beside the two readers, and, in debug builds, two writers
 * overlapping on such a table must be caught (one line, abort).
 * RF_HASH_MW_OPS sets the operations per writer (TSan runs fewer).
 */
#include "rf_test.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>

#define WRITERS 4
#define READERS 2
#define MAX_KEYS (1u << 15)

static uint64_t ops_per_writer(void)
{
	const char *e = getenv("RF_HASH_MW_OPS");
	uint64_t n = e ? strtoull(e, NULL, 10) : 0;
	return n >= 1000 ? n : 200000;
}

struct mw {
	struct rf_hash *h;
	size_t key_len;
	unsigned nw; /* writers: WRITERS, or 1 on a single-writer table */
	uint64_t ops;
	uint8_t *written[WRITERS];  /* [seq]: 1 when that write succeeded */
	uint8_t *removed[WRITERS];  /* [seq]: times returned as old */
	_Atomic uint64_t issued[WRITERS];
	_Atomic int writers_left;
	_Atomic unsigned errors;
	_Atomic uint64_t reads, hits;
	char first_error[160];
};

struct arg {
	struct mw *m;
	unsigned id;
};

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void pin(unsigned id)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(id % 2, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* best effort */
}

static void fail(struct mw *m, const char *what, uint64_t key, uint64_t v)
{
	if (atomic_fetch_add(&m->errors, 1) == 0)
		snprintf(m->first_error, sizeof(m->first_error), "%s: key %lu value %#lx", what,
			 (unsigned long)key, (unsigned long)v);
}

/* The key bytes of key number k: its 8 bytes, or for 13-byte keys a 5-tuple-like layout. */
static void key_of(size_t len, uint64_t k, unsigned char *out)
{
	memset(out, 0xa5, len);
	memcpy(out + len - 8, &k, 8);
}

/* Operation i's key: a quarter of the operations go to 8 hot keys (writers collide on the
 * same key mid-call), the rest to a range that widens from 64 keys to MAX_KEYS over the run
 * (the table grows and rebuilds throughout). */
static uint64_t key_num(uint64_t r, uint64_t i, uint64_t ops)
{
	if (((r >> 40) & 3) == 0)
		return (r >> 8) % 8;
	uint64_t range = 64 + (MAX_KEYS - 64) * i / ops;
	return (r >> 8) % range;
}

static void *writer(void *p)
{
	struct arg *a = p;
	struct mw *m = a->m;
	unsigned id = a->id;
	pin(id);
	rf_qsbr_register();
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (id + 1), seq = 0;
	unsigned char key[16];
	for (uint64_t i = 0; i < m->ops && atomic_load(&m->errors) == 0; i++) {
		uint64_t r = xorshift(&rnd);
		uint64_t k = key_num(r, i, m->ops), op = r % 8;
		key_of(m->key_len, k, key);
		if (op < 4) { /* insert or upsert a new value */
			uint64_t s = ++seq;
			/* relaxed: readers only compare against it after seeing the value. */
			atomic_store_explicit(&m->issued[id], s, memory_order_relaxed);
			void *v = (void *)(uintptr_t)(k << 32 | (uint64_t)id << 28 | s);
			void *old = NULL;
			int rc = op < 2 ? rf_hash_insert(m->h, key, v)
					: rf_hash_upsert(m->h, key, v, &old);
			if (rc == 0 || rc == 1)
				m->written[id][s] = 1;
			if (rc == 1) { /* counted against the old value's writer */
				uint64_t o = (uint64_t)(uintptr_t)old;
				unsigned t = (o >> 28) & 0xf;
				if (o >> 32 != k || t >= WRITERS)
					fail(m, "upsert returned another key's value", k, o);
				else
					atomic_fetch_add_explicit(
						(_Atomic uint8_t *)&m->removed[t][o & 0xfffffff], 1,
						memory_order_relaxed);
			}
			if (rc < 0 && rc != -EEXIST)
				fail(m, "insert/upsert failed", k, (uint64_t)-rc);
		} else if (op < 7) {
			void *old = NULL;
			int rc = rf_hash_delete(m->h, key, &old);
			if (rc == 0) {
				uint64_t o = (uint64_t)(uintptr_t)old;
				unsigned t = (o >> 28) & 0xf;
				if (o >> 32 != k || t >= WRITERS)
					fail(m, "delete returned another key's value", k, o);
				else
					atomic_fetch_add_explicit(
						(_Atomic uint8_t *)&m->removed[t][o & 0xfffffff], 1,
						memory_order_relaxed);
			} else if (rc != -ENOENT) {
				fail(m, "delete failed", k, (uint64_t)-rc);
			}
		} else {
			void *v = rf_hash_lookup(m->h, key);
			if (v && (uint64_t)(uintptr_t)v >> 32 != k)
				fail(m, "writer's lookup: another key's value", k, (uint64_t)(uintptr_t)v);
		}
		if ((i & 31) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	atomic_fetch_sub(&m->writers_left, 1);
	return NULL;
}

static void check_read(struct mw *m, uint64_t k, void *got)
{
	if (!got)
		return;
	uint64_t v = (uint64_t)(uintptr_t)got;
	unsigned t = (v >> 28) & 0xf;
	/* relaxed: issued was raised before the write began, so before any reader saw it. */
	if (v >> 32 != k || t >= WRITERS || (v & 0xfffffff) == 0 ||
	    (v & 0xfffffff) > atomic_load_explicit(&m->issued[t], memory_order_relaxed))
		fail(m, "reader saw a value never written for this key", k, v);
}

static void *reader(void *p)
{
	struct arg *a = p;
	struct mw *m = a->m;
	pin(a->id);
	rf_qsbr_register();
	uint64_t rnd = 0x2545f4914f6cdd1dull * (a->id + 1), reads = 0, hits = 0;
	unsigned char keys[16][16];
	const void *kp[16];
	uint64_t kn[16];
	void *vals[16];
	while (atomic_load(&m->writers_left) > 0 && atomic_load(&m->errors) == 0) {
		for (unsigned i = 0; i < 16; i++) {
			kn[i] = xorshift(&rnd) % MAX_KEYS;
			key_of(m->key_len, kn[i], keys[i]);
			kp[i] = keys[i];
		}
		hits += rf_hash_lookup_bulk(m->h, kp, 16, vals);
		for (unsigned i = 0; i < 16; i++)
			check_read(m, kn[i], vals[i]);
		void *v = rf_hash_lookup(m->h, keys[0]);
		check_read(m, kn[0], v);
		reads += 17;
		rf_qsbr_quiescent();
	}
	atomic_fetch_add(&m->reads, reads);
	atomic_fetch_add(&m->hits, hits);
	rf_qsbr_unregister();
	return NULL;
}

static void run_mw(size_t key_len, unsigned nw, unsigned flags)
{
	struct mw *m = calloc(1, sizeof(*m));
	cr_assert_not_null(m);
	m->key_len = key_len;
	m->nw = nw;
	m->ops = ops_per_writer();
	cr_assert_lt(m->ops, 1u << 28, "seq must fit in 28 bits");
	m->h = rf_hash_create("mw", key_len, MAX_KEYS + 64, RF_MEMPOOL_NO_HUGE | flags);
	cr_assert_not_null(m->h);
	for (unsigned t = 0; t < nw; t++) {
		m->written[t] = calloc(m->ops + 2, 1);
		m->removed[t] = calloc(m->ops + 2, 1);
		cr_assert(m->written[t] && m->removed[t]);
	}
	atomic_store(&m->writers_left, (int)nw);
	pthread_t th[WRITERS + READERS];
	struct arg args[WRITERS + READERS];
	for (unsigned i = 0; i < nw + READERS; i++) {
		args[i] = (struct arg){m, i < nw ? i : i - nw};
		cr_assert_eq(pthread_create(&th[i], NULL, i < nw ? writer : reader, &args[i]), 0);
	}
	for (unsigned i = 0; i < nw + READERS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(atomic_load(&m->errors), 0, "%s", m->first_error);

	/* The model: per key, the values written and not removed. */
	uint64_t *live = calloc(MAX_KEYS, sizeof(uint64_t));
	uint8_t *nlive = calloc(MAX_KEYS, 1);
	cr_assert(live && nlive);
	uint64_t model_count = 0, model_sum = 0;
	for (unsigned t = 0; t < nw; t++) {
		uint64_t issued = atomic_load(&m->issued[t]);
		for (uint64_t s = 1; s <= issued; s++) {
			uint8_t rm = m->removed[t][s];
			cr_assert_leq(rm, 1, "value of writer %u seq %lu removed %u times", t,
				      (unsigned long)s, rm);
			cr_assert(!rm || m->written[t][s],
				  "writer %u seq %lu removed but never written", t, (unsigned long)s);
		}
	}
	/* Re-derive each written value's key: replay the writers' random streams. */
	for (unsigned id = 0; id < nw; id++) {
		uint64_t rnd = 0x9e3779b97f4a7c15ull * (id + 1), seq = 0;
		for (uint64_t i = 0; i < m->ops; i++) {
			uint64_t r = xorshift(&rnd);
			uint64_t k = key_num(r, i, m->ops), op = r % 8;
			if (op >= 4)
				continue;
			uint64_t s = ++seq;
			if (m->written[id][s] && !m->removed[id][s]) {
				nlive[k]++;
				live[k] = k << 32 | (uint64_t)id << 28 | s;
			}
		}
	}
	unsigned char key[16];
	for (uint64_t k = 0; k < MAX_KEYS; k++) {
		cr_assert_leq(nlive[k], 1, "key %lu: %u values live (two inserts won)",
			      (unsigned long)k, nlive[k]);
		key_of(key_len, k, key);
		void *got = rf_hash_lookup(m->h, key);
		cr_assert_eq((uint64_t)(uintptr_t)got, nlive[k] ? live[k] : 0,
			     "key %lu: table %#lx, model %#lx", (unsigned long)k,
			     (unsigned long)(uintptr_t)got, (unsigned long)(nlive[k] ? live[k] : 0));
		model_count += nlive[k];
		model_sum += nlive[k] ? live[k] : 0;
	}
	cr_assert_eq(rf_hash_count(m->h), model_count);
	struct rf_hash_iter it;
	rf_hash_iter_init(m->h, &it);
	const void *kp;
	void *v;
	uint64_t n = 0, sum = 0;
	uint8_t *seen = calloc(MAX_KEYS, 1);
	cr_assert_not_null(seen);
	while (rf_hash_iter_next(m->h, &it, &kp, &v)) {
		uint64_t k;
		memcpy(&k, (const unsigned char *)kp + key_len - 8, 8);
		cr_assert_lt(k, MAX_KEYS);
		cr_assert_eq(seen[k]++, 0, "key %lu visited twice (duplicate entry)", (unsigned long)k);
		n++;
		sum += (uint64_t)(uintptr_t)v;
	}
	cr_assert_eq(n, model_count);
	cr_assert_eq(sum, model_sum, "checksum of values");
	cr_assert_geq(rf_hash_buckets(m->h), 1024, "the table grew during the run");
	cr_log_info("%zu-byte keys: %lu entries, %zu buckets, %lu reads (%lu hits)", key_len,
		    (unsigned long)model_count, rf_hash_buckets(m->h),
		    (unsigned long)atomic_load(&m->reads), (unsigned long)atomic_load(&m->hits));
	rf_hash_free(m->h);
	for (unsigned t = 0; t < nw; t++) {
		free(m->written[t]);
		free(m->removed[t]);
	}
	free(seen);
	free(live);
	free(nlive);
	free(m);
}

Test(hash_mw, overlapping_writers_match_the_model_with_inline_keys)
{
	rf_qsbr_register();
	run_mw(8, WRITERS, 0);
	rf_qsbr_unregister();
}

Test(hash_mw, overlapping_writers_match_the_model_with_13_byte_keys)
{
	rf_qsbr_register();
	run_mw(13, WRITERS, 0);
	rf_qsbr_unregister();
}

Test(hash_mw, single_writer_mode_matches_the_model_with_inline_keys)
{
	rf_qsbr_register();
	run_mw(8, 1, RF_HASH_SINGLE_WRITER);
	rf_qsbr_unregister();
}

Test(hash_mw, single_writer_mode_matches_the_model_with_13_byte_keys)
{
	rf_qsbr_register();
	run_mw(13, 1, RF_HASH_SINGLE_WRITER);
	rf_qsbr_unregister();
}

#ifdef RF_DEBUG_CHECKS
/* Two threads writing a single-writer table at once: the app broke its promise, and a debug
 * build says so and aborts (each call would otherwise race on plain stores). Bounded: 10^7
 * calls per thread; with two threads on two CPUs the calls overlap within the first few. */
static void *overlap_writer(void *p)
{
	struct rf_hash *h = p;
	rf_qsbr_register();
	for (uint64_t i = 1; i <= 10000000; i++) {
		uint64_t k = i % 64;
		if (rf_hash_insert(h, &k, (void *)(uintptr_t)i) == -EEXIST)
			rf_hash_delete(h, &k, NULL);
		if ((i & 63) == 0)
			rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(hash_mw, overlapping_writers_on_a_single_writer_table_abort, .signal = SIGABRT)
{
	struct rf_hash *h =
		rf_hash_create("one", 8, 1024, RF_MEMPOOL_NO_HUGE | RF_HASH_SINGLE_WRITER);
	cr_assert_not_null(h);
	pthread_t a, b;
	pthread_create(&a, NULL, overlap_writer, h);
	pthread_create(&b, NULL, overlap_writer, h);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	cr_assert_fail("two writers ran 10^7 calls each on a single-writer table and no overlap was caught");
}
#endif

/* ---- same key, same moment ---- */

struct race {
	struct rf_hash *h;
	pthread_barrier_t start, end;
	unsigned rounds;
	_Atomic unsigned arrived; /* racers at the line this round */
	int rc[WRITERS];
};

static void *racer(void *p)
{
	struct arg *a = p;
	struct race *r = (struct race *)a->m;
	pin(a->id);
	rf_qsbr_register();
	for (unsigned round = 0; round < r->rounds; round++) {
		uint64_t k = round;
		rf_qsbr_offline(); /* blocking in the barrier */
		pthread_barrier_wait(&r->start);
		rf_qsbr_online();
		/* Spin until all four are here, so the inserts start together (the barrier
		 * wakes threads one by one, tens of microseconds apart). */
		atomic_fetch_add(&r->arrived, 1);
		unsigned spins = 0;
		while (atomic_load(&r->arrived) < (round + 1) * WRITERS)
			if (++spins % 64 == 0)
				sched_yield(); /* two racers share each CPU */
		int rc = rf_hash_insert(r->h, &k, (void *)(uintptr_t)((uint64_t)round << 8 | (a->id + 1)));
		r->rc[a->id] = rc;
		rf_qsbr_quiescent();
		rf_qsbr_offline();
		pthread_barrier_wait(&r->end);
		rf_qsbr_online();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(hash_mw, racing_inserts_of_one_key_have_exactly_one_winner)
{
	rf_qsbr_register();
	struct race *r = calloc(1, sizeof(*r));
	cr_assert_not_null(r);
	r->rounds = ops_per_writer() >= 100000 ? 3000 : 300;
	r->h = rf_hash_create("race", 8, r->rounds + 64, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(r->h);
	pthread_barrier_init(&r->start, NULL, WRITERS + 1);
	pthread_barrier_init(&r->end, NULL, WRITERS + 1);
	pthread_t th[WRITERS];
	struct arg args[WRITERS];
	for (unsigned i = 0; i < WRITERS; i++) {
		args[i] = (struct arg){(struct mw *)r, i};
		cr_assert_eq(pthread_create(&th[i], NULL, racer, &args[i]), 0);
	}
	unsigned bad = 0, bad_round = 0;
	for (unsigned round = 0; round < r->rounds; round++) {
		rf_qsbr_offline();
		pthread_barrier_wait(&r->start); /* the racers go; rc[] is theirs until end */
		pthread_barrier_wait(&r->end);   /* this round's inserts are done */
		rf_qsbr_online();
		unsigned wins = 0, winner = 0;
		for (unsigned i = 0; i < WRITERS; i++) {
			if (r->rc[i] == 0) {
				wins++;
				winner = i;
			} else if (r->rc[i] != -EEXIST) {
				wins = 99;
			}
		}
		uint64_t k = round;
		void *v = rf_hash_lookup(r->h, &k);
		if ((wins != 1 || v != (void *)(uintptr_t)((uint64_t)round << 8 | (winner + 1))) &&
		    bad++ == 0)
			bad_round = round;
		rf_qsbr_quiescent();
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	cr_assert_eq(bad, 0, "%u rounds without exactly one winner holding the key (first: %u)",
		     bad, bad_round);
	cr_assert_eq(rf_hash_count(r->h), r->rounds);
	pthread_barrier_destroy(&r->start);
	pthread_barrier_destroy(&r->end);
	rf_hash_free(r->h);
	free(r);
	rf_qsbr_unregister();
}
