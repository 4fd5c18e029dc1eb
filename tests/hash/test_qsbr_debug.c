/*
 * tests/hash/test_qsbr_debug.c: in a debug build (RF_DEBUG_CHECKS, as make asan-test), a
 * reader that is not registered (or is offline) is caught by rf_qsbr_assert_reader: one log
 * line naming the call, then abort(). A registered, online thread passes. Built only where
 * the checks are compiled in (tests/hash/CMakeLists.txt).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/log.h>
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
