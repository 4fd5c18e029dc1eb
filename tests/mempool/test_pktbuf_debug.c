/*
 * tests/mempool/test_pktbuf_debug.c: a debug pool's buffer misuse (double free, use after
 * free, a stray write to the pool pointer) is one log line naming the call and the buffer,
 * then abort() — never a segfault, never a buffer handed out twice.
 *
 * The pools are made with RF_MEMPOOL_DEBUG, so these run in every build (an RF_DEBUG_CHECKS
 * build turns the same checks on for every pool). Each misuse test expects SIGABRT; its log
 * hook checks the line first and exits with status 7 when the line is wrong, so a wrong or
 * missing report fails the test as surely as a crash does.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

#define DBG (RF_MEMPOOL_DEBUG | RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET)

static const char *want_call, *want_what;
static char want_addr[32];

static void check_line(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	/* one line, to stderr for whoever reads the test log */
	dprintf(STDERR_FILENO, "report: %s\n", line);
	if (lvl != RF_LOG_ERR || strncmp(line, want_call, strlen(want_call)) != 0 ||
	    line[strlen(want_call)] != ':' || !strstr(line, want_what) ||
	    !strstr(line, want_addr) || !strstr(line, "pool 'dbg'") || strchr(line, '\n'))
		_exit(7);
}

static void expect_report(const char *call, const char *what, const void *buf)
{
	want_call = call;
	want_what = what;
	snprintf(want_addr, sizeof(want_addr), "buffer %p ", buf);
	rf_log_set_hook(check_line, NULL);
}

static struct rf_pktbuf_pool *dbg_pool(unsigned n)
{
	struct rf_pktbuf_pool *p = rf_pktbuf_pool_create("dbg", n, 256, 0, DBG);
	cr_assert_not_null(p);
	return p;
}

Test(pktbuf_debug, double_free_aborts_naming_the_call, .signal = SIGABRT)
{
	struct rf_pktbuf_pool *p = dbg_pool(8);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	rf_pktbuf_free(b);
	expect_report("rf_pktbuf_free", "already freed (double free)", b);
	rf_pktbuf_free(b); /* reads b->pool, poisoned by the first free: must not be trusted */
	_exit(8);          /* not reached */
}

Test(pktbuf_debug, double_free_in_a_bulk_aborts, .signal = SIGABRT)
{
	struct rf_pktbuf_pool *p = dbg_pool(8);
	struct rf_pktbuf *b[3];
	cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 3), 0);
	rf_pktbuf_free(b[1]);
	expect_report("rf_pktbuf_free_bulk", "already freed (double free)", b[1]);
	rf_pktbuf_free_bulk(b, 3);
	_exit(8);
}

Test(pktbuf_debug, write_after_free_aborts_at_the_next_alloc, .signal = SIGABRT)
{
	struct rf_pktbuf_pool *p = dbg_pool(1); /* one buffer: the next alloc hands it out */
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	char *data = rf_pktbuf_data(b);
	rf_pktbuf_free(b);
	data[3] = 'x'; /* a pointer kept past the free */
	expect_report("rf_pktbuf_alloc", "use after free", b);
	(void)rf_pktbuf_alloc(p);
	_exit(8);
}

Test(pktbuf_debug, check_of_a_freed_buffer_aborts, .signal = SIGABRT)
{
	struct rf_pktbuf_pool *p = dbg_pool(4);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	rf_pktbuf_free(b);
	expect_report("my_tx", "use after free", b);
	rf_pktbuf_debug_check(b, "my_tx");
	_exit(8);
}

Test(pktbuf_debug, overwritten_pool_pointer_aborts_at_free, .signal = SIGABRT)
{
	struct rf_pktbuf_pool *p = dbg_pool(4);
	struct rf_pktbuf *b = rf_pktbuf_alloc(p);
	cr_assert_not_null(b);
	b->pool = (struct rf_pktbuf_pool *)b; /* a stray write */
	expect_report("rf_pktbuf_free", "pool pointer was overwritten", b);
	rf_pktbuf_free(b);
	_exit(8);
}

/* Correct use of a debug pool: no report, every buffer comes back, alloc_bulk larger than
 * the internal chunk and frees of mixed pools work, and a buffer of a non-debug pool passes
 * the check untouched. */
Test(pktbuf_debug, correct_use_reports_nothing)
{
	struct rf_pktbuf_pool *p = dbg_pool(200), *q = dbg_pool(4);
	struct rf_pktbuf_pool *plain = rf_pktbuf_pool_create("plain", 4, 256, 0,
							     RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(plain);
	struct rf_pktbuf *b[200];
	for (int round = 0; round < 20; round++) {
		cr_assert_eq(rf_pktbuf_alloc_bulk(p, b, 150), 0);
		for (int i = 0; i < 150; i++) {
			rf_pktbuf_debug_check(b[i], "round");
			memset(rf_pktbuf_data(b[i]), round, 64);
		}
		b[150] = rf_pktbuf_alloc(q);
		b[151] = NULL;
		cr_assert_not_null(b[150]);
		rf_pktbuf_free_bulk(b, 152);
	}
	struct rf_pktbuf *x = rf_pktbuf_alloc(plain);
	cr_assert_not_null(x);
	rf_pktbuf_debug_check(x, "plain");
	rf_pktbuf_free(x);
	cr_assert_eq(rf_pktbuf_pool_avail(p), 200);
	cr_assert_eq(rf_pktbuf_pool_avail(q), 4);
	cr_assert_eq(rf_mempool_debug_errors(rf_pktbuf_pool_mempool(p)), 0);
	rf_pktbuf_pool_free(p);
	rf_pktbuf_pool_free(q);
	rf_pktbuf_pool_free(plain);
}
