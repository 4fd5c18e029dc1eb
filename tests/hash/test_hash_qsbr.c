/*
 * tests/hash/test_hash_qsbr.c: the hash's deferred frees count against the QSBR defer limit
 * (qsbr.h rule 2). With a grace period held by an online thread that never passes a
 * quiescent state, insert/delete pairs must not grow memory without bound: the hash's
 * deferred objects (dead-slot batches, replaced tables) stay at or under the limit, a table
 * that cannot be retired is not replaced, and once the table is full of dead slots inserts
 * fail with -EAGAIN. When the grace period ends, everything drains and inserts work again.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <ringflow/hash.h>
#include <ringflow/log.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>

#define LIMIT 8
#define PAIRS 2000000

static unsigned lines;

static void count_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)lvl;
	(void)line;
	(void)arg;
	lines++;
}

Test(hash_qsbr, stalled_grace_period_bounds_the_hash)
{
	rf_qsbr_register_named("stuck"); /* online, and never quiescent below: a stall */
	rf_log_set_hook(count_line, NULL);
	uint64_t reports = rf_qsbr_stall_reports();
	size_t old_limit = rf_qsbr_set_defer_limit(LIMIT);
	struct rf_hash *h = rf_hash_create("bounded", 8, 1u << 20,
					   RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(h);
	size_t max_pending = 0;
	uint64_t i, done = 0;
	int rc = 0;
	for (i = 0; i < PAIRS; i++) {
		uint64_t k = i;
		rc = rf_hash_insert(h, &k, (void *)(uintptr_t)(i + 1));
		if (rc != 0)
			break;
		cr_assert_eq(rf_hash_delete(h, &k, NULL), 0);
		done++;
		size_t p = rf_qsbr_defer_pending();
		if (p > max_pending)
			max_pending = p;
	}
	cr_assert_eq(rc, -EAGAIN, "after %llu pairs: %d (want -EAGAIN: the grace period is stalled)",
		     (unsigned long long)done, rc);
	cr_assert_gt(max_pending, 0, "the hash's deferred frees are counted");
	cr_assert_leq(max_pending, LIMIT, "and stay under the limit: %zu", max_pending);
	cr_assert_leq(rf_hash_buckets(h), 1024, "no table per rebuild while stalled: %zu buckets",
		      rf_hash_buckets(h));
	cr_assert_gt(rf_qsbr_stall_reports(), reports, "the stall was reported");
	cr_assert_gt(lines, 0, "through the log hook");
	cr_assert_eq(rf_hash_count(h), 0);

	/* The grace period ends: what waited drains and the table takes inserts again. */
	rf_qsbr_set_defer_limit(old_limit);
	rf_qsbr_quiescent();
	rf_qsbr_barrier();
	cr_assert_eq(rf_qsbr_defer_pending(), 0);
	for (uint64_t k = 0; k < 10000; k++) {
		cr_assert_eq(rf_hash_insert(h, &k, (void *)(uintptr_t)(k + 1)), 0, "key %llu",
			     (unsigned long long)k);
		cr_assert_eq(rf_hash_delete(h, &k, NULL), 0);
		rf_qsbr_quiescent();
	}
	rf_hash_free(h);
	cr_assert_eq(rf_qsbr_defer_pending(), 0);
	rf_log_set_hook(NULL, NULL);
	rf_qsbr_unregister();
}

/* A table that saw no delete holds no reclamation callback of its own (only its replaced
 * tables do, and those never touch it): rf_hash_free must free it at once, not wait for
 * every callback queued in the process (the switch's agent frees grown-out subtable hashes
 * and stalled 8-10 ms on each). A thread holds the grace period (online, never quiescent)
 * until told to stop or 30 s pass; the free must return while it still holds. */
static _Atomic int hold_stop, hold_gave_up, hold_ready;

static void *holder(void *arg)
{
	(void)arg;
	rf_qsbr_register_named("holder"); /* online from here: every grace period waits */
	atomic_store(&hold_ready, 1);
	for (int i = 0; i < 30000 && !atomic_load(&hold_stop); i++)
		usleep(1000);
	atomic_store(&hold_gave_up, !atomic_load(&hold_stop));
	rf_qsbr_unregister();
	return NULL;
}

/* Registers this thread and starts the holder; returns once it holds. */
static pthread_t hold_start(void)
{
	rf_qsbr_register();
	pthread_t th;
	cr_assert_eq(pthread_create(&th, NULL, holder, NULL), 0);
	while (!atomic_load(&hold_ready))
		usleep(100);
	return th;
}

Test(hash_qsbr, a_table_without_deletes_frees_while_a_grace_period_is_held)
{
	pthread_t th = hold_start();
	struct rf_hash *h = rf_hash_create("nodeletes", 16, 1u << 20,
					   RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(h);
	size_t b0 = rf_hash_buckets(h);
	for (uint64_t i = 0; i < 20000; i++) { /* long keys, and grown a few times */
		uint64_t k[2] = {i, ~i};
		cr_assert_eq(rf_hash_insert(h, k, (void *)(uintptr_t)(i + 1)), 0);
	}
	cr_assert_gt(rf_hash_buckets(h), b0, "the table grew (replaced tables wait meanwhile)");
	rf_hash_free(h); /* with the old barrier: waits for the holder, 30 s */
	int gave_up = atomic_load(&hold_gave_up);
	atomic_store(&hold_stop, 1);
	pthread_join(th, NULL);
	cr_assert_eq(gave_up, 0, "rf_hash_free waited for a grace period the holder held");
	rf_qsbr_barrier(); /* the replaced tables' callbacks, now that the holder is gone */
	rf_qsbr_unregister();
}

/* A table with deletes has reclamation callbacks queued (epoch advances, batches of key
 * copies), which cannot run while a grace period is held. rf_hash_free_deferred must still
 * return at once: the last of those callbacks frees the table (qsbr.h rule 5: the service
 * thread, the switch's agent, must never wait for a grace period). The holder holds as above;
 * both write modes; ASan's leak check at exit sees both tables freed once the callbacks ran
 * (the barrier below). */
Test(hash_qsbr, free_deferred_returns_while_a_grace_period_is_held_and_frees_later)
{
	pthread_t th = hold_start();
	for (unsigned mode = 0; mode < 2; mode++) {
		struct rf_hash *h = rf_hash_create(mode ? "deletes1w" : "deletes", 16, 1u << 16,
						   RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET |
							   (mode ? RF_HASH_SINGLE_WRITER : 0));
		cr_assert_not_null(h);
		for (uint64_t i = 0; i < 20000; i++) {
			uint64_t k[2] = {i, ~i};
			cr_assert_eq(rf_hash_insert(h, k, (void *)(uintptr_t)(i + 1)), 0);
		}
		for (uint64_t i = 0; i < 20000; i += 2) { /* dead slots and key copies wait */
			uint64_t k[2] = {i, ~i};
			cr_assert_eq(rf_hash_delete(h, k, NULL), 0);
		}
		cr_assert_gt(rf_qsbr_defer_pending(), 0, "reclamation is waiting for the holder");
		rf_hash_free_deferred(h); /* rf_hash_free would wait for the holder, 30 s */
	}
	int gave_up = atomic_load(&hold_gave_up);
	atomic_store(&hold_stop, 1);
	pthread_join(th, NULL);
	cr_assert_eq(gave_up, 0, "rf_hash_free_deferred waited for a grace period the holder held");
	rf_qsbr_barrier(); /* the callbacks run now; the last one of each table frees it */
	cr_assert_eq(rf_qsbr_defer_pending(), 0);
	rf_qsbr_unregister();
}
