/*
 * tests/hash/test_qsbr_debug.c: in a debug build (RF_DEBUG_CHECKS, as make asan-test), a
 * reader that is not registered (or is offline) is caught by rf_qsbr_assert_reader: one log
 * line naming the call, then abort(). A registered, online thread passes. Built only where
 * the checks are compiled in (tests/hash/CMakeLists.txt).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/hash.h>
#include <ringflow/log.h>
#include <ringflow/mempool.h>
#include <ringflow/qsbr.h>

static void check_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	dprintf(STDERR_FILENO, "report: %s\n", line);
	if (lvl != RF_LOG_ERR || strncmp(line, "rf_hash_lookup: ", 16) != 0 ||
	    !strstr(line, "not a registered, online QSBR reader") || !strstr(line, "tid "))
		_exit(7);
}

Test(qsbr_debug, unregistered_reader_aborts_naming_the_call, .signal = SIGABRT)
{
	rf_log_set_hook(check_line, NULL);
	rf_qsbr_assert_reader("rf_hash_lookup");
	_exit(8); /* not reached */
}

Test(qsbr_debug, offline_reader_aborts, .signal = SIGABRT)
{
	rf_qsbr_register();
	rf_qsbr_offline();
	rf_log_set_hook(check_line, NULL);
	rf_qsbr_assert_reader("rf_hash_lookup");
	_exit(8);
}

Test(qsbr_debug, registered_online_reader_passes)
{
	rf_qsbr_register_named("reader");
	rf_qsbr_assert_reader("rf_hash_lookup");
	rf_qsbr_quiescent();
	rf_qsbr_assert_reader("rf_hash_lookup");
	rf_qsbr_unregister();
}

/* The hash wires the check in (hash.c READER_CHECK): a lookup or a write from a thread that
 * never registered aborts with one line naming the call. */
static void check_hash_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	dprintf(STDERR_FILENO, "report: %s\n", line);
	if (lvl != RF_LOG_ERR || strncmp(line, (const char *)arg, strlen((const char *)arg)) != 0 ||
	    !strstr(line, "not a registered, online QSBR reader"))
		_exit(7);
}

Test(qsbr_debug, hash_lookup_from_an_unregistered_thread_aborts, .signal = SIGABRT)
{
	struct rf_hash *h = rf_hash_create("dbg", 8, 16, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(h);
	uint64_t k = 1;
	rf_log_set_hook(check_hash_line, "rf_hash_lookup: ");
	rf_hash_lookup(h, &k);
	_exit(8); /* not reached */
}

Test(qsbr_debug, hash_insert_from_an_unregistered_thread_aborts, .signal = SIGABRT)
{
	struct rf_hash *h = rf_hash_create("dbg", 8, 16, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(h);
	uint64_t k = 1;
	rf_log_set_hook(check_hash_line, "rf_hash_insert: ");
	rf_hash_insert(h, &k, &k);
	_exit(8);
}

Test(qsbr_debug, hash_from_a_registered_thread_passes)
{
	rf_qsbr_register_named("reader");
	struct rf_hash *h = rf_hash_create("dbg", 8, 16, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	uint64_t k = 1;
	cr_assert_eq(rf_hash_insert(h, &k, &k), 0);
	cr_assert_eq(rf_hash_lookup(h, &k), &k);
	cr_assert_eq(rf_hash_delete(h, &k, NULL), 0);
	rf_qsbr_offline();
	rf_hash_free(h);
	rf_qsbr_online();
	rf_qsbr_unregister();
}
