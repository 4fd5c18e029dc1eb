/*
 * tests/hash/test_qsbr_defer.c: rf_qsbr_defer runs each callback once after a grace period,
 * and a grace period that does not end is loud and bounded: a registered thread that stays
 * online without a quiescent state holds it, the pending count stops at the limit (defers
 * then fail with -EAGAIN, nothing queued), and exactly one log line names that thread (and
 * not the thread that keeps passing quiescent states). Once the holder passes one, all the
 * deferred callbacks run and defers work again. Nothing here depends on timing: the holder
 * is released only after the main thread has seen the limit.
 */
#include "rf_test.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <ringflow/log.h>
#include <ringflow/qsbr.h>

#define LIMIT 100

static _Atomic unsigned ran;
static _Atomic uint64_t ran_sum;

static void count_fn(void *arg)
{
	atomic_fetch_add(&ran, 1);
	atomic_fetch_add(&ran_sum, (uint64_t)(uintptr_t)arg);
}

static pthread_mutex_t lines_lock = PTHREAD_MUTEX_INITIALIZER;
static char lines[8][512];
static unsigned n_lines;

static void keep_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	if (lvl != RF_LOG_ERR)
		return;
	pthread_mutex_lock(&lines_lock);
	if (n_lines < 8)
		snprintf(lines[n_lines], sizeof(lines[0]), "%s", line);
	n_lines++;
	pthread_mutex_unlock(&lines_lock);
}

Test(qsbr_defer, callbacks_run_once_after_a_grace_period)
{
	rf_qsbr_register_named("defer-main");
	atomic_store(&ran, 0);
	atomic_store(&ran_sum, 0);
	for (uintptr_t i = 1; i <= 1000; i++) {
		cr_assert_eq(rf_qsbr_defer(count_fn, (void *)i), 0);
		rf_qsbr_quiescent();
	}
	cr_assert_eq(rf_qsbr_defer(NULL, NULL), -EINVAL);
	rf_qsbr_barrier();
	cr_assert_eq(atomic_load(&ran), 1000);
	cr_assert_eq(atomic_load(&ran_sum), 1000u * 1001u / 2, "each callback once, its own arg");
	cr_assert_eq(rf_qsbr_defer_pending(), 0);
	rf_qsbr_unregister();
}

struct holder {
	_Atomic int ready, release, done;
};

static void *sleepy_reader(void *arg)
{
	struct holder *h = arg;
	rf_qsbr_register_named("sleepy-reader");
	atomic_store(&h->ready, 1);
	while (!atomic_load(&h->release))
		sched_yield(); /* online, no quiescent state: the mistake under test */
	rf_qsbr_quiescent();
	rf_qsbr_unregister();
	atomic_store(&h->done, 1);
	return NULL;
}

Test(qsbr_defer, stalled_grace_period_is_bounded_and_names_its_holder)
{
	rf_log_set_hook(keep_line, NULL);
	cr_assert_eq(rf_qsbr_set_defer_limit(LIMIT), RF_QSBR_DEFER_LIMIT);
	rf_qsbr_register_named("busy-writer");
	atomic_store(&ran, 0);
	atomic_store(&ran_sum, 0);
	uint64_t reports = rf_qsbr_stall_reports();

	struct holder h = {0};
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, sleepy_reader, &h), 0);
	while (!atomic_load(&h.ready))
		sched_yield();

	unsigned accepted = 0, refused = 0;
	uint64_t sum = 0;
	for (uintptr_t i = 1; i <= 3 * LIMIT; i++) {
		int rc = rf_qsbr_defer(count_fn, (void *)i);
		cr_assert(rc == 0 || rc == -EAGAIN, "defer: %d", rc);
		if (rc == 0) {
			cr_assert_eq(refused, 0, "a defer accepted after one was refused");
			accepted++;
			sum += i;
		} else {
			refused++;
		}
		cr_assert_leq(rf_qsbr_defer_pending(), LIMIT, "memory grows past the bound");
		rf_qsbr_quiescent(); /* this thread is not the one holding the grace period */
	}
	cr_assert_eq(accepted, LIMIT, "the holder reclaimed nothing, so exactly LIMIT fit");
	cr_assert_eq(refused, 2 * LIMIT);
	cr_assert_eq(atomic_load(&ran), 0, "a callback ran while the grace period was held");
	cr_assert_eq(rf_qsbr_stall_reports(), reports + 1, "one report per stall");

	pthread_mutex_lock(&lines_lock);
	unsigned nl = n_lines;
	char line[512];
	snprintf(line, sizeof(line), "%s", lines[0]);
	pthread_mutex_unlock(&lines_lock);
	cr_assert_eq(nl, 1, "one line, not one per refused defer (got %u)", nl);
	cr_assert(strstr(line, "'sleepy-reader'") != NULL, "names the holder: %s", line);
	cr_assert(strstr(line, "'busy-writer'") == NULL, "does not blame the writer: %s", line);
	cr_assert(strstr(line, "limit 100") != NULL, "%s", line);

	/* The holder passes a quiescent state: everything deferred runs, defers work again. */
	atomic_store(&h.release, 1);
	pthread_join(t, NULL);
	rf_qsbr_barrier();
	cr_assert_eq(atomic_load(&ran), LIMIT);
	cr_assert_eq(atomic_load(&ran_sum), sum);
	cr_assert_eq(rf_qsbr_defer_pending(), 0);
	cr_assert_eq(rf_qsbr_defer(count_fn, (void *)0), 0);
	rf_qsbr_barrier();
	cr_assert_eq(atomic_load(&ran), LIMIT + 1);

	rf_qsbr_set_defer_limit(0);
	rf_qsbr_unregister();
	rf_log_set_hook(NULL, NULL);
}
