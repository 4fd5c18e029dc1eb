/*
 * tests/bench/test_list.c: the two lists `ringflow-bench atomics` compares hold exactly the
 * keys they should. One thread: the mixed workload leaves each list with the same keys as a
 * reference bitmap driven by the same random stream, and reports the same successes.
 * Several threads: each inserts and deletes only its own keys, all at once, and the final
 * contents are exactly the keys each thread kept.
 */
#include <pthread.h>
#include <ringflow/qsbr.h>
#include <stdlib.h>
#include <string.h>

#include "rf_test.h"

#include "kernels/list_kernels.h"

#define KEYS 512
#define THREADS 4
#define PER_THREAD 400

/* A reference "list": a bitmap. */
static bool ref_insert(void *p, uint64_t k)
{
	bool *b = p;
	bool added = !b[k];
	b[k] = true;
	return added;
}
static bool ref_delete(void *p, uint64_t k)
{
	bool *b = p;
	bool had = b[k];
	b[k] = false;
	return had;
}
static bool ref_lookup(void *p, uint64_t k)
{
	return ((bool *)p)[k];
}
static const struct list_ops ref_ops = {ref_insert, ref_delete, ref_lookup};

static void check_against_reference(const struct list_ops *ops, void *list,
				    bool (*has)(void *, uint64_t))
{
	static bool ref[KEYS];
	memset(ref, 0, sizeof(ref));
	uint64_t rng_a = 12345, rng_b = 12345;
	uint64_t ok_list = list_mixed_ops(ops, list, &rng_a, 20000, KEYS, 50);
	uint64_t ok_ref = list_mixed_ops(&ref_ops, ref, &rng_b, 20000, KEYS, 50);
	cr_assert_eq(ok_list, ok_ref, "same successes as the reference");
	for (uint64_t k = 0; k < KEYS; k++)
		cr_assert_eq(has(list, k), ref[k], "key %llu", (unsigned long long)k);
}

static bool ml_has(void *l, uint64_t k) { return ml_lookup(l, k); }
static bool lf_has(void *l, uint64_t k) { return lf_lookup(l, k); }

Test(bench_list, mutex_list_matches_a_reference_set)
{
	struct ml_list l;
	cr_assert_eq(ml_init(&l), 0, "ml_init");
	check_against_reference(&ml_ops, &l, ml_has);
	ml_fini(&l);
}

Test(bench_list, lockfree_list_matches_a_reference_set)
{
	rf_qsbr_register();
	struct lf_list l;
	lf_init(&l);
	check_against_reference(&lf_ops, &l, lf_has);
	lf_fini(&l);
	rf_qsbr_unregister();
}

struct job {
	const struct list_ops *ops;
	void *list;
	unsigned index;
	bool qsbr;
};

/* Thread t owns keys t, t + THREADS, ...: inserts PER_THREAD of them, deletes every third,
 * and checks its own keys along the way. */
static void *own_keys(void *p)
{
	struct job *j = p;
	if (j->qsbr)
		rf_qsbr_register();
	for (uint64_t i = 0; i < PER_THREAD; i++) {
		uint64_t k = i * THREADS + j->index;
		cr_assert(j->ops->insert(j->list, k), "insert own key %llu", (unsigned long long)k);
		cr_assert_not(j->ops->insert(j->list, k), "second insert of %llu", (unsigned long long)k);
		if (j->qsbr)
			rf_qsbr_quiescent();
	}
	for (uint64_t i = 0; i < PER_THREAD; i += 3) {
		uint64_t k = i * THREADS + j->index;
		cr_assert(j->ops->delete(j->list, k), "delete own key %llu", (unsigned long long)k);
		cr_assert_not(j->ops->lookup(j->list, k), "deleted key %llu", (unsigned long long)k);
		if (j->qsbr)
			rf_qsbr_quiescent();
	}
	if (j->qsbr)
		rf_qsbr_unregister();
	return NULL;
}

static void run_own_keys(const struct list_ops *ops, void *list, bool qsbr,
			 bool (*has)(void *, uint64_t))
{
	pthread_t t[THREADS];
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ops, list, i, qsbr};
		cr_assert_eq(pthread_create(&t[i], NULL, own_keys, &jobs[i]), 0, "pthread_create");
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (uint64_t i = 0; i < PER_THREAD; i++)
		for (unsigned th = 0; th < THREADS; th++) {
			uint64_t k = i * THREADS + th;
			cr_assert_eq(has(list, k), i % 3 != 0, "key %llu at the end",
				     (unsigned long long)k);
		}
}

Test(bench_list, mutex_list_keeps_every_threads_keys)
{
	struct ml_list l;
	cr_assert_eq(ml_init(&l), 0, "ml_init");
	run_own_keys(&ml_ops, &l, false, ml_has);
	cr_assert_eq(ml_count(&l), THREADS * (PER_THREAD - (PER_THREAD + 2) / 3), "count");
	ml_fini(&l);
}

Test(bench_list, lockfree_list_keeps_every_threads_keys)
{
	struct lf_list l;
	lf_init(&l);
	run_own_keys(&lf_ops, &l, true, lf_has);
	cr_assert_eq(lf_count(&l), THREADS * (PER_THREAD - (PER_THREAD + 2) / 3), "count");
	lf_fini(&l);
}
