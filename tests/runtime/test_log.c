/*
 * tests/runtime/test_log.c: the log hook (log.h): a hook gets every line at or below the
 * level and nothing above it, the level parses from its names, the default sink writes one
 * "ringflow: " line per call to stderr and drops past RF_LOG_BURST a second, counting what
 * it dropped, and library reports (the mempool's double-put line) go through the hook.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/log.h>
#include <ringflow/mempool.h>

static char got[16][256];
static int ngot;
static enum rf_log_level got_lvl[16];

static void hook(enum rf_log_level lvl, const char *line, void *arg)
{
	cr_assert_eq(arg, (void *)got);
	if (ngot < 16) {
		snprintf(got[ngot], sizeof(got[ngot]), "%s", line);
		got_lvl[ngot++] = lvl;
	}
}

Test(log, hook_gets_lines_at_or_below_the_level)
{
	ngot = 0;
	rf_log_set_hook(hook, got);
	enum rf_log_level old = rf_log_set_level(RF_LOG_WARN);
	rf_log(RF_LOG_ERR, "one %d\n", 1);
	rf_log(RF_LOG_WARN, "two");
	rf_log(RF_LOG_INFO, "three");
	rf_log(RF_LOG_DEBUG, "four");
	cr_assert_eq(ngot, 2);
	cr_assert_str_eq(got[0], "one 1", "trailing newline dropped");
	cr_assert_eq(got_lvl[0], RF_LOG_ERR);
	cr_assert_str_eq(got[1], "two");
	rf_log_set_level(RF_LOG_DEBUG);
	rf_log(RF_LOG_DEBUG, "five");
	cr_assert_eq(ngot, 3);
	rf_log_set_level(old);
	rf_log_set_hook(NULL, NULL);
}

Test(log, level_names_parse)
{
	cr_assert_eq(rf_log_level_parse("err"), RF_LOG_ERR);
	cr_assert_eq(rf_log_level_parse("WARNING"), RF_LOG_WARN);
	cr_assert_eq(rf_log_level_parse("info"), RF_LOG_INFO);
	cr_assert_eq(rf_log_level_parse("3"), RF_LOG_DEBUG);
	cr_assert_lt(rf_log_level_parse("loud"), 0);
	cr_assert_lt(rf_log_level_parse("4"), 0);
	cr_assert_lt(rf_log_level_parse(NULL), 0);
	cr_assert_str_eq(rf_log_level_name(RF_LOG_WARN), "warn");
	cr_assert_str_eq(rf_log_level_name(9), "?");
}

Test(log, default_sink_is_rate_limited)
{
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	int saved = dup(2);
	dup2(pfd[1], 2);
	uint64_t before = rf_log_suppressed();
	for (int i = 0; i < 200; i++)
		rf_log(RF_LOG_ERR, "flood %d", i);
	dup2(saved, 2);
	close(saved);
	close(pfd[1]);
	static char buf[65536];
	ssize_t n = read(pfd[0], buf, sizeof(buf) - 1);
	close(pfd[0]);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	int lines = 0;
	for (char *p = buf; (p = strstr(p, "ringflow: flood ")); p++)
		lines++;
	/* The loop may straddle a second boundary: at most two windows' worth. */
	cr_assert(lines >= 1 && lines <= 2 * RF_LOG_BURST, "%d lines passed", lines);
	cr_assert_eq(rf_log_suppressed() - before, (uint64_t)(200 - lines));
}

Test(log, library_report_goes_through_the_hook)
{
	ngot = 0;
	rf_log_set_hook(hook, got);
	/* A double put in debug mode is reported (and refused). Normal pages, so this test never
	 * takes a hugepage another test (mempool_huge) may be counting on. */
	struct rf_mempool *mp = rf_mempool_create("logtest", 64, 64, 0,
						  RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_DEBUG);
	cr_assert_not_null(mp);
	void *o;
	cr_assert_eq(rf_mempool_get(mp, &o), 0);
	rf_mempool_put(mp, o);
	rf_mempool_put(mp, o);
	cr_assert_eq(ngot, 1);
	cr_assert(strstr(got[0], "mempool 'logtest'"), "%s", got[0]);
	cr_assert_eq(got_lvl[0], RF_LOG_ERR);
	cr_assert_eq(rf_mempool_debug_errors(mp), 1);
	rf_mempool_free(mp);
	rf_log_set_hook(NULL, NULL);
}
