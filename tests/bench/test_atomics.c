/*
 * tests/bench/test_atomics.c: the atomics kernels count right. A CAS loop must never lose
 * an increment under contention: threads x iterations with CAS gives the same count as with
 * fetch-add. The memory-order variants of store, load and RMW do what their names say.
 */
#include <pthread.h>

#include "rf_test.h"

#include "kernels/atomics_kernels.h"

#define THREADS 4
#define ITERS 100000

struct job {
	_Atomic uint64_t *counter;
	int use_cas;
	uint64_t failures;
};

static void *run_job(void *p)
{
	struct job *j = p;
	if (j->use_cas)
		j->failures = at_cas_loop(j->counter, ITERS);
	else
		at_fetch_add_loop(j->counter, ITERS);
	return NULL;
}

static uint64_t count_with(int use_cas, uint64_t *failures)
{
	_Atomic uint64_t counter = 0;
	pthread_t t[THREADS];
	struct job jobs[THREADS];
	for (unsigned i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){&counter, use_cas, 0};
		cr_assert_eq(pthread_create(&t[i], NULL, run_job, &jobs[i]), 0, "pthread_create");
	}
	*failures = 0;
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		*failures += jobs[i].failures;
	}
	return atomic_load(&counter);
}

Test(bench_atomics, cas_loop_count_equals_fetch_add_count_under_contention)
{
	uint64_t f_fa, f_cas;
	uint64_t fa = count_with(0, &f_fa), cas = count_with(1, &f_cas);
	cr_assert_eq(fa, (uint64_t)THREADS * ITERS, "fetch-add lost increments");
	cr_assert_eq(cas, fa, "CAS loop count differs from fetch-add count");
	cr_assert_eq(f_fa, 0, "fetch-add reports no failures");
}

Test(bench_atomics, uncontended_cas_loop_counts_from_the_current_value)
{
	_Atomic uint64_t c = 1000;
	uint64_t failures = at_cas_loop(&c, 500);
	cr_assert_eq(atomic_load(&c), 1500, "500 increments from 1000");
	/* A weak CAS may fail spuriously, but never more often than it is tried. */
	cr_assert_leq(failures, 500000, "failures bounded");
}

Test(bench_atomics, stores_leave_the_last_value)
{
	_Atomic uint64_t c = 0;
	at_store_seq_cst(&c, 10);
	cr_assert_eq(atomic_load(&c), 10, "seq_cst");
	at_store_release(&c, 20);
	cr_assert_eq(atomic_load(&c), 20, "release");
	at_store_relaxed(&c, 30);
	cr_assert_eq(atomic_load(&c), 30, "relaxed");
}

Test(bench_atomics, loads_sum_n_reads)
{
	_Atomic uint64_t c = 7;
	cr_assert_eq(at_load_seq_cst(&c, 100), 700, "seq_cst");
	cr_assert_eq(at_load_acquire(&c, 100), 700, "acquire");
	cr_assert_eq(at_load_relaxed(&c, 100), 700, "relaxed");
}

Test(bench_atomics, rmw_variants_add_n)
{
	_Atomic uint64_t c = 0;
	at_rmw_seq_cst(&c, 100);
	at_rmw_acq_rel(&c, 200);
	at_rmw_relaxed(&c, 300);
	cr_assert_eq(atomic_load(&c), 600, "100 + 200 + 300");
}
