/*
 * tests/hash/test_hash_api.c: every call of ringflow/hash.h, single-threaded. Each test runs
 * as a registered QSBR thread (as every user of the table must be).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>

static void reg(void)
{
	rf_qsbr_register();
}

static void unreg(void)
{
	rf_qsbr_unregister();
}

TestSuite(hash, .init = reg, .fini = unreg);

#define V(x) ((void *)(uintptr_t)(x))

static struct rf_hash *mk(size_t key_len, unsigned n)
{
	struct rf_hash *h = rf_hash_create("test", key_len, n, RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(h);
	return h;
}

Test(hash, create_rejects_bad_arguments)
{
	errno = 0;
	cr_assert_null(rf_hash_create("x", 0, 16, RF_MEMPOOL_NO_HUGE));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_hash_create("x", RF_HASH_KEY_MAX + 1, 16, RF_MEMPOOL_NO_HUGE));
	cr_assert_eq(errno, EINVAL);
	errno = 0;
	cr_assert_null(rf_hash_create("x", 8, 0, RF_MEMPOOL_NO_HUGE));
	cr_assert_eq(errno, EINVAL);
	rf_hash_free(NULL); /* ignored */
}

Test(hash, new_table_is_empty_with_one_bucket)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 1;
	cr_assert_eq(rf_hash_count(h), 0);
	cr_assert_eq(rf_hash_buckets(h), 1);
	cr_assert_eq(rf_hash_key_len(h), 8);
	cr_assert_null(rf_hash_lookup(h, &k));
	struct rf_hash_iter it;
	rf_hash_iter_init(h, &it);
	cr_assert_not(rf_hash_iter_next(h, &it, NULL, NULL));
	rf_hash_free(h);
}

Test(hash, insert_then_lookup_8_byte_keys)
{
	struct rf_hash *h = mk(8, 1024);
	for (uint64_t k = 0; k < 1000; k++)
		cr_assert_eq(rf_hash_insert(h, &k, V(k + 1)), 0);
	for (uint64_t k = 0; k < 1000; k++)
		cr_assert_eq(rf_hash_lookup(h, &k), V(k + 1), "key %lu", (unsigned long)k);
	for (uint64_t k = 1000; k < 2000; k++)
		cr_assert_null(rf_hash_lookup(h, &k));
	cr_assert_eq(rf_hash_count(h), 1000);
	rf_hash_free(h);
}

Test(hash, mac_and_five_tuple_keys)
{
	struct rf_hash *mac = mk(6, 256), *flow = mk(13, 256);
	unsigned char m[6] = {0x02, 0, 0, 0, 0, 0}, t[13] = {10, 0, 0, 1, 10, 0, 0, 2, 0x1f, 0x90, 0, 80, 17};
	for (int i = 0; i < 200; i++) {
		m[5] = (unsigned char)i;
		m[4] = (unsigned char)(i >> 8);
		t[12] = (unsigned char)i;
		cr_assert_eq(rf_hash_insert(mac, m, V(i + 1)), 0);
		cr_assert_eq(rf_hash_insert(flow, t, V(i + 1000)), 0);
	}
	for (int i = 0; i < 200; i++) {
		m[5] = (unsigned char)i;
		m[4] = (unsigned char)(i >> 8);
		t[12] = (unsigned char)i;
		cr_assert_eq(rf_hash_lookup(mac, m), V(i + 1));
		cr_assert_eq(rf_hash_lookup(flow, t), V(i + 1000));
	}
	t[0] = 11; /* one byte differs: a different flow */
	cr_assert_null(rf_hash_lookup(flow, t));
	rf_hash_free(mac);
	rf_hash_free(flow);
}

Test(hash, duplicate_insert_is_eexist_and_keeps_the_value)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 42;
	cr_assert_eq(rf_hash_insert(h, &k, V(1)), 0);
	cr_assert_eq(rf_hash_insert(h, &k, V(2)), -EEXIST);
	cr_assert_eq(rf_hash_lookup(h, &k), V(1));
	cr_assert_eq(rf_hash_count(h), 1);
	rf_hash_free(h);
}

Test(hash, null_value_is_einval)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 1;
	cr_assert_eq(rf_hash_insert(h, &k, NULL), -EINVAL);
	cr_assert_eq(rf_hash_upsert(h, &k, NULL, NULL), -EINVAL);
	cr_assert_eq(rf_hash_count(h), 0);
	rf_hash_free(h);
}

Test(hash, delete_returns_the_value_then_enoent)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 9, other = 10;
	void *old = NULL;
	cr_assert_eq(rf_hash_delete(h, &k, &old), -ENOENT);
	cr_assert_eq(rf_hash_insert(h, &k, V(99)), 0);
	cr_assert_eq(rf_hash_insert(h, &other, V(100)), 0);
	cr_assert_eq(rf_hash_delete(h, &k, &old), 0);
	cr_assert_eq(old, V(99));
	cr_assert_null(rf_hash_lookup(h, &k));
	cr_assert_eq(rf_hash_delete(h, &k, NULL), -ENOENT);
	cr_assert_eq(rf_hash_lookup(h, &other), V(100));
	cr_assert_eq(rf_hash_count(h), 1);
	cr_assert_eq(rf_hash_insert(h, &k, V(7)), 0, "a deleted key can come back");
	cr_assert_eq(rf_hash_lookup(h, &k), V(7));
	rf_hash_free(h);
}

Test(hash, upsert_inserts_then_replaces)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 5;
	void *old = V(0xdead);
	cr_assert_eq(rf_hash_upsert(h, &k, V(1), &old), 0);
	cr_assert_eq(old, V(0xdead), "untouched on insert");
	cr_assert_eq(rf_hash_upsert(h, &k, V(2), &old), 1);
	cr_assert_eq(old, V(1));
	cr_assert_eq(rf_hash_lookup(h, &k), V(2));
	cr_assert_eq(rf_hash_count(h), 1);
	rf_hash_free(h);
}

Test(hash, grows_keeping_load_factor_at_most_one)
{
	struct rf_hash *h = mk(8, 5000);
	for (uint64_t k = 0; k < 4000; k++) {
		cr_assert_eq(rf_hash_insert(h, &k, V(k + 1)), 0);
		if (rf_hash_buckets(h) < 1024)
			cr_assert_geq(rf_hash_buckets(h), rf_hash_count(h), "small tables grow at once");
	}
	/* Big tables check the sum every 128 inserts of a stripe: within that slack. */
	cr_assert_geq(rf_hash_buckets(h) + 128 * 16, 4000);
	for (uint64_t k = 0; k < 4000; k++)
		cr_assert_eq(rf_hash_lookup(h, &k), V(k + 1));
	rf_hash_free(h);
}

Test(hash, iteration_visits_each_entry_once)
{
	struct rf_hash *h = mk(8, 1024);
	static unsigned char seen[1000];
	for (uint64_t k = 0; k < 1000; k++)
		rf_hash_insert(h, &k, V(k + 1));
	for (uint64_t k = 0; k < 1000; k += 3)
		rf_hash_delete(h, &k, NULL);
	struct rf_hash_iter it;
	const void *key;
	void *val;
	unsigned n = 0;
	rf_hash_iter_init(h, &it);
	while (rf_hash_iter_next(h, &it, &key, &val)) {
		uint64_t k;
		memcpy(&k, key, 8);
		cr_assert_lt(k, 1000);
		cr_assert_neq(k % 3, 0, "deleted key %lu visited", (unsigned long)k);
		cr_assert_eq(val, V(k + 1));
		cr_assert_eq(seen[k]++, 0, "visited twice");
		n++;
	}
	cr_assert_eq(n, 666);
	cr_assert_eq(rf_hash_count(h), 666);
	rf_hash_free(h);
}

Test(hash, lookup_bulk_matches_single_lookups)
{
	struct rf_hash *h = mk(8, 1024);
	uint64_t keys[100];
	const void *kp[100];
	void *vals[100];
	for (uint64_t k = 0; k < 500; k += 2)
		rf_hash_insert(h, &k, V(k + 1));
	unsigned want = 0;
	for (unsigned i = 0; i < 100; i++) {
		keys[i] = (i * 7) % 300;
		kp[i] = &keys[i];
		want += keys[i] % 2 == 0;
	}
	cr_assert_eq(rf_hash_lookup_bulk(h, kp, 100, vals), want);
	for (unsigned i = 0; i < 100; i++)
		cr_assert_eq(vals[i], rf_hash_lookup(h, &keys[i]), "key %lu", (unsigned long)keys[i]);
	cr_assert_eq(rf_hash_lookup_bulk(h, kp, 0, vals), 0);
	rf_hash_free(h);
}

/* A table at its growth limit (one and a half keys a bucket: some keys sit past their home
 * bucket, and some lookups of absent keys go on past home): the bulk
 * lookup's second pass, which follows those chains after the first pass over every home
 * bucket, must answer exactly as single lookups do, for inline and for copied keys, present
 * and absent, in batches that do not line up with its internal batch of 32. */
static void bulk_dense(size_t key_len)
{
	enum { N = 3000, ASK = 2 * N, STEP = 77 };
	struct rf_hash *h = mk(key_len, N);
	static uint8_t keys[ASK][16];
	const void *kp[ASK];
	static void *vals[ASK];
	for (unsigned i = 0; i < ASK; i++) {
		uint64_t k = (uint64_t)i * 0x9e3779b97f4a7c15ull; /* even i: present */
		memset(keys[i], 0, sizeof(keys[i]));
		memcpy(keys[i], &k, 8);
		if (key_len > 8)
			memcpy(keys[i] + 8, &i, sizeof(i));
		kp[i] = keys[i];
		if (i % 2 == 0)
			cr_assert_eq(rf_hash_insert(h, keys[i], V(2 * i + 1)), 0);
	}
	cr_assert_eq(rf_hash_count(h), N);
	cr_assert_eq(rf_hash_buckets(h), 2048, "the table is at its growth limit");
	unsigned hits = 0;
	for (unsigned at = 0; at < ASK; at += STEP)
		hits += rf_hash_lookup_bulk(h, &kp[at], at + STEP <= ASK ? STEP : ASK - at,
					    &vals[at]);
	cr_assert_eq(hits, N);
	for (unsigned i = 0; i < ASK; i++) {
		cr_assert_eq(vals[i], i % 2 == 0 ? V(2 * i + 1) : NULL, "key %u", i);
		cr_assert_eq(vals[i], rf_hash_lookup(h, kp[i]), "key %u", i);
	}
	rf_hash_free(h);
}

Test(hash, lookup_bulk_follows_chains_past_home_in_a_dense_table)
{
	bulk_dense(8);
	bulk_dense(16);
}

Test(hash, full_pool_is_enospc_not_a_crash)
{
	struct rf_hash *h = mk(8, 16);
	uint64_t k = 0;
	int rc;
	while ((rc = rf_hash_insert(h, &k, V(k + 1))) == 0)
		k++;
	cr_assert_eq(rc, -ENOSPC);
	cr_assert_geq(k, 16, "at least max_entries fit");
	cr_assert_eq(rf_hash_count(h), k);
	cr_assert_eq(rf_hash_lookup(h, &(uint64_t){0}), V(1));
	rf_hash_free(h);
}

Test(hash, deleted_nodes_are_recycled_after_grace_periods)
{
	struct rf_hash *h = mk(8, 16);
	/* Far more insert/delete pairs than the pool has nodes: only works if reclaimed nodes
	 * come back. Quiescent states let grace periods end; the barrier waits for callbacks. */
	for (uint64_t i = 0; i < 50000; i++) {
		uint64_t k = i % 8;
		int rc = rf_hash_insert(h, &k, V(i + 1));
		if (rc == -EAGAIN) { /* the slots near k wait for their grace period */
			rf_qsbr_barrier();
			rc = rf_hash_insert(h, &k, V(i + 1));
		}
		cr_assert_eq(rc, 0, "insert %lu", (unsigned long)i);
		cr_assert_eq(rf_hash_delete(h, &k, NULL), 0);
		rf_qsbr_quiescent();
		if (i % 2000 == 0)
			rf_qsbr_barrier();
	}
	cr_assert_eq(rf_hash_count(h), 0);
	rf_hash_free(h);
}

Test(hash, values_returned_by_delete_and_upsert_are_the_ones_stored)
{
	struct rf_hash *h = mk(16, 64);
	unsigned char k[16] = {0};
	void *old;
	for (int i = 1; i <= 50; i++) {
		cr_assert_geq(rf_hash_upsert(h, k, V(i), &old), 0);
		if (i > 1)
			cr_assert_eq(old, V(i - 1));
	}
	cr_assert_eq(rf_hash_delete(h, k, &old), 0);
	cr_assert_eq(old, V(50));
	rf_hash_free(h);
}

/* Random inserts, upserts and deletes over a small key space, checked against a plain array
 * after every step: overflow chains, slots freed and reused after grace periods, same-size
 * rebuilds and growth must never lose, resurrect or duplicate a key. Runs for an inline key
 * length (8) and for out-of-line keys (13 bytes: copies behind a pointer, with tags). */
static void churn_against_a_model(size_t key_len)
{
	enum { KEYS = 3000, STEPS = 200000 };
	static void *model[KEYS];
	memset(model, 0, sizeof(model));
	struct rf_hash *h = mk(key_len, KEYS);
	uint64_t rnd = 42;
	size_t present = 0;
	for (unsigned step = 0; step < STEPS; step++) {
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		unsigned i = (unsigned)(rnd >> 33) % KEYS, op = (unsigned)(rnd >> 20) % 4;
		unsigned char key[RF_HASH_KEY_MAX] = {0};
		memcpy(key, &i, sizeof(i));
		key[key_len - 1] ^= 0x5a; /* the last byte matters too */
		void *v = V(step + 1), *old = NULL;
		if (op == 0) {
			int rc = rf_hash_insert(h, key, v);
			cr_assert_eq(rc, model[i] ? -EEXIST : 0, "step %u insert", step);
			if (!model[i]) {
				model[i] = v;
				present++;
			}
		} else if (op == 1) {
			int rc = rf_hash_upsert(h, key, v, &old);
			cr_assert_eq(rc, model[i] ? 1 : 0, "step %u upsert", step);
			if (model[i])
				cr_assert_eq(old, model[i]);
			else
				present++;
			model[i] = v;
		} else if (op == 2) {
			int rc = rf_hash_delete(h, key, &old);
			cr_assert_eq(rc, model[i] ? 0 : -ENOENT, "step %u delete", step);
			if (model[i]) {
				cr_assert_eq(old, model[i]);
				model[i] = NULL;
				present--;
			}
		} else {
			cr_assert_eq(rf_hash_lookup(h, key), model[i], "step %u lookup", step);
		}
		if (step % 64 == 0)
			rf_qsbr_quiescent(); /* lets grace periods end: dirty slots come back */
	}
	cr_assert_eq(rf_hash_count(h), present);
	size_t seen = 0;
	struct rf_hash_iter it;
	const void *key;
	void *val;
	rf_hash_iter_init(h, &it);
	while (rf_hash_iter_next(h, &it, &key, &val)) {
		unsigned i;
		memcpy(&i, key, sizeof(i));
		cr_assert_lt(i, KEYS);
		cr_assert_eq(val, model[i], "iteration: key %u", i);
		seen++;
	}
	cr_assert_eq(seen, present);
	rf_hash_free(h);
}

Test(hash, churn_matches_a_model_with_inline_keys)
{
	churn_against_a_model(8);
}

Test(hash, churn_matches_a_model_with_13_byte_keys)
{
	churn_against_a_model(13);
}
