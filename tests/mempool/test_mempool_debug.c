/*
 * tests/mempool/test_mempool_debug.c: debug mode catches misuse instead of corrupting the
 * pool: a double put and a put of a foreign pointer are reported on stderr and rejected (the
 * pool's count stays right), a write after put is reported at the next get.
 *
 * Debug mode is asked for with RF_MEMPOOL_DEBUG, so these run in every build; with
 * RF_DEBUG_CHECKS (make asan-test) the last test checks every pool is checked by default.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/mempool.h>

#define DBG (RF_MEMPOOL_DEBUG | RF_MEMPOOL_QUIET)

/* Runs with stderr sent to a temporary file; returns what was written (static buffer). */
static FILE *cap_file;
static int cap_saved = -1;

static void capture_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	cr_assert_not_null(cap_file);
	cap_saved = dup(STDERR_FILENO);
	dup2(fileno(cap_file), STDERR_FILENO);
}

static const char *capture_end(void)
{
	static char buf[4096];
	fflush(stderr);
	dup2(cap_saved, STDERR_FILENO);
	close(cap_saved);
	rewind(cap_file);
	size_t n = fread(buf, 1, sizeof(buf) - 1, cap_file);
	buf[n] = '\0';
	fclose(cap_file);
	return buf;
}

static void double_put_rejected(unsigned cache)
{
	struct rf_mempool *mp = rf_mempool_create("dbl", 8, 64, cache, DBG);
	void *a, *b;
	cr_assert_eq(rf_mempool_get(mp, &a), 0);
	cr_assert_eq(rf_mempool_get(mp, &b), 0);
	rf_mempool_put(mp, a);
	capture_begin();
	rf_mempool_put(mp, a);
	const char *out = capture_end();
	cr_assert(strstr(out, "mempool 'dbl': double put") != NULL, "message: %s", out);
	cr_assert_eq(rf_mempool_debug_errors(mp), 1);
	cr_assert_eq(rf_mempool_avail_count(mp), 7, "second put not counted (cache %u)", cache);
	/* The pool still hands out each object once: 7 distinct, then empty. */
	void *o[7];
	cr_assert_eq(rf_mempool_get_bulk(mp, o, 7), 0);
	for (unsigned i = 0; i < 7; i++) {
		cr_assert_neq(o[i], b);
		for (unsigned j = 0; j < i; j++)
			cr_assert_neq(o[i], o[j], "object handed out twice");
	}
	cr_assert_eq(rf_mempool_get(mp, &a), -ENOBUFS);
	rf_mempool_put_bulk(mp, o, 7);
	rf_mempool_put(mp, b);
	cr_assert_eq(rf_mempool_avail_count(mp), 8);
	cr_assert_eq(rf_mempool_debug_errors(mp), 1);
	rf_mempool_free(mp);
}

Test(mempool_debug, double_put_is_reported_and_rejected)
{
	double_put_rejected(0);
	double_put_rejected(4);
}

Test(mempool_debug, double_put_within_one_bulk_is_rejected)
{
	struct rf_mempool *mp = rf_mempool_create("dblbulk", 8, 64, 4, DBG);
	void *a[2];
	cr_assert_eq(rf_mempool_get_bulk(mp, a, 2), 0);
	void *again[3] = {a[0], a[1], a[0]};
	capture_begin();
	rf_mempool_put_bulk(mp, again, 3);
	const char *out = capture_end();
	cr_assert(strstr(out, "double put") != NULL, "message: %s", out);
	cr_assert_eq(rf_mempool_avail_count(mp), 8);
	rf_mempool_free(mp);
}

Test(mempool_debug, foreign_pointer_is_reported_and_rejected)
{
	struct rf_mempool *mp = rf_mempool_create("foreign", 8, 64, 4, DBG);
	struct rf_mempool *other = rf_mempool_create("other", 8, 64, 4, DBG);
	void *a, *theirs;
	char local[64];
	cr_assert_eq(rf_mempool_get(mp, &a), 0);
	cr_assert_eq(rf_mempool_get(other, &theirs), 0);
	void *bad[] = {local, (char *)a + 8, theirs, malloc(64)};
	capture_begin();
	for (unsigned i = 0; i < RF_ARRAY_SIZE(bad); i++)
		rf_mempool_put(mp, bad[i]);
	const char *out = capture_end();
	cr_assert(strstr(out, "mempool 'foreign': put of a pointer that is not one of its objects") !=
			  NULL,
		  "message: %s", out);
	cr_assert_eq(rf_mempool_debug_errors(mp), RF_ARRAY_SIZE(bad));
	cr_assert_eq(rf_mempool_avail_count(mp), 7, "nothing foreign entered the pool");
	free(bad[3]);
	rf_mempool_put(mp, a);
	rf_mempool_put(other, theirs);
	cr_assert_eq(rf_mempool_avail_count(mp), 8);
	cr_assert_eq(rf_mempool_debug_errors(other), 0);
	rf_mempool_free(other);
	rf_mempool_free(mp);
}

Test(mempool_debug, write_after_put_is_reported_at_next_get)
{
	struct rf_mempool *mp = rf_mempool_create("uaf", 1, 128, 0, DBG);
	void *a, *b;
	cr_assert_eq(rf_mempool_get(mp, &a), 0);
	cr_assert_eq(rf_mempool_debug_errors(mp), 0, "fresh objects carry the poison");
	rf_mempool_put(mp, a);
	((unsigned char *)a)[100] = 1; /* the bug: a write through a stale pointer */
	capture_begin();
	cr_assert_eq(rf_mempool_get(mp, &b), 0);
	const char *out = capture_end();
	cr_assert_eq(b, a);
	cr_assert(strstr(out, "written after it was put") != NULL, "message: %s", out);
	cr_assert_eq(rf_mempool_debug_errors(mp), 1);
	rf_mempool_put(mp, b);
	rf_mempool_free(mp);
}

Test(mempool_debug, free_objects_are_poisoned)
{
	struct rf_mempool *mp = rf_mempool_create("poison", 2, 100, 0, DBG);
	void *p;
	cr_assert_eq(rf_mempool_get(mp, &p), 0);
	unsigned char *a = p;
	memset(a, 0, 100);
	rf_mempool_put(mp, a);
	for (unsigned i = 0; i < 100; i++)
		cr_assert_eq(a[i], RF_MEMPOOL_POISON, "byte %u", i);
	rf_mempool_free(mp);
}

#ifdef RF_DEBUG_CHECKS
Test(mempool_debug, debug_checks_build_checks_every_pool)
{
	struct rf_mempool *mp = rf_mempool_create("default", 4, 64, 2, RF_MEMPOOL_QUIET);
	void *a;
	cr_assert_eq(mp->debug, 1u);
	cr_assert_eq(rf_mempool_get(mp, &a), 0);
	rf_mempool_put(mp, a);
	capture_begin();
	rf_mempool_put(mp, a);
	capture_end();
	cr_assert_eq(rf_mempool_debug_errors(mp), 1);
	cr_assert_eq(rf_mempool_avail_count(mp), 4);
	rf_mempool_free(mp);
}
#endif
