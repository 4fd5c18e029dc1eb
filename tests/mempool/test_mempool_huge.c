/*
 * tests/mempool/test_mempool_huge.c: both backing paths. As root the test reserves a few
 * 2 MiB hugepages itself (writing /proc/sys/vm/nr_hugepages; MAP_HUGETLB needs no hugetlbfs
 * mount) and gives them back afterwards; it also tries one 1 GiB page. The fallback path
 * runs when no hugepage is free for the pool: it must still work, on 4 KiB pages, and print
 * its one warning line naming /proc/sys/vm/nr_hugepages.
 *
 * The reservation is relative (+k, then -k) so that another process changing the count at
 * the same time is not undone; when nobody else touched it, the old value is restored.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringflow/mempool.h>

#define NR_2M "/proc/sys/vm/nr_hugepages"
#define NR_1G "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
#define FREE_2M "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
#define FREE_1G "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages"

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int rc = fprintf(f, "%ld\n", v) > 0 ? 0 : -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* Adds k pages to the pool at path; returns how many were really added (the kernel may
 * find fewer free). */
static long reserve(const char *path, long k)
{
	long before = read_long(path);
	if (before < 0 || write_long(path, before + k) != 0)
		return 0;
	long added = read_long(path) - before;
	return added > 0 ? added : 0;
}

static void release(const char *path, long k)
{
	if (k > 0)
		write_long(path, read_long(path) - k);
}

static void use_pool(struct rf_mempool *mp, unsigned n)
{
	void *o[64];
	for (unsigned round = 0; round < n / 64; round++) {
		cr_assert_eq(rf_mempool_get_bulk(mp, o, 64), 0);
		for (unsigned i = 0; i < 64; i++)
			memset(o[i], (int)i, 2048);
		rf_mempool_put_bulk(mp, o, 64);
	}
	cr_assert_eq(rf_mempool_avail_count(mp), n);
}

Test(mempool_huge, pool_on_2m_hugepages_when_reserved)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: reserves hugepages through " NR_2M);
	long added = reserve(NR_2M, 4);
	if (added < 2) {
		release(NR_2M, added);
		cr_skip_test("the kernel found no memory for 2 MiB hugepages (asked 4, got %ld)",
			     added);
	}
	/* 1500 x 2 KiB objects at a 2112 B stride: 3.02 MiB, two hugepages */
	struct rf_mempool *mp = rf_mempool_create("huge2m", 1500, 2048, 32, 0);
	cr_assert_not_null(mp);
	bool huge = rf_mempool_on_hugepages(mp);
	size_t page = rf_mempool_page_size(mp);
	void *base;
	size_t len, stride;
	rf_mempool_region(mp, &base, &len, &stride);
	if (huge)
		use_pool(mp, 1500);
	rf_mempool_free(mp);
	release(NR_2M, added);
	/* asserted after giving the pages back, so a failure does not leak them */
	cr_assert(huge, "hugepages were reserved but the pool fell back");
	cr_assert_eq(page, (size_t)2 << 20);
	cr_assert_eq((uintptr_t)base % ((size_t)2 << 20), 0, "region on a hugepage boundary");
	cr_assert_eq(len, (size_t)4 << 20);
	cr_assert_eq(stride, 2112);
}

Test(mempool_huge, pool_on_1g_page_when_asked_and_available)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: reserves a 1 GiB page through " NR_1G);
	if (read_long(NR_1G) < 0)
		cr_skip_test("this kernel has no 1 GiB hugepages (" NR_1G " missing)");
	long added = reserve(NR_1G, 1);
	if (added < 1 && read_long(FREE_1G) < 1)
		cr_skip_test("no 1 GiB page could be reserved (memory too fragmented or too small)");
	struct rf_mempool *mp = rf_mempool_create("huge1g", 1000, 2048, 0, RF_MEMPOOL_HUGE_1G);
	size_t page = rf_mempool_page_size(mp);
	if (mp && page == ((size_t)1 << 30))
		use_pool(mp, 1000);
	rf_mempool_free(mp);
	release(NR_1G, added);
	cr_assert_not_null(mp);
	cr_assert_eq(page, (size_t)1 << 30, "a 1 GiB page was free but not used");
}

Test(mempool_huge, fallback_to_normal_pages_warns_once)
{
	/* Ask for more 2 MiB pages than are free, so MAP_HUGETLB must fail. */
	long free_pages = read_long(FREE_2M);
	if (free_pages < 0)
		free_pages = 0;
	if (free_pages > 64)
		cr_skip_test("%ld hugepages free: a pool larger than them would be too big for a test",
			     free_pages);
	size_t want = (size_t)(free_pages + 1) * (2u << 20); /* bytes */
	unsigned n = (unsigned)(want / 2112 + 1);
	fflush(stderr);
	FILE *cap = tmpfile();
	int saved = dup(STDERR_FILENO);
	dup2(fileno(cap), STDERR_FILENO);
	struct rf_mempool *a = rf_mempool_create("fallback", n, 2048, 32, 0);
	struct rf_mempool *b = rf_mempool_create("fallback2", n, 2048, 32, 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	char out[1024];
	rewind(cap);
	size_t got = fread(out, 1, sizeof(out) - 1, cap);
	out[got] = '\0';
	fclose(cap);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	bool a_huge = rf_mempool_on_hugepages(a), b_huge = rf_mempool_on_hugepages(b);
	if (a_huge || b_huge) { /* someone reserved pages meanwhile: nothing to judge */
		rf_mempool_free(a);
		rf_mempool_free(b);
		cr_skip_test("hugepages appeared during the test (another process reserved them)");
	}
	cr_assert_eq(rf_mempool_page_size(a), 4096);
	use_pool(a, n);
	cr_assert(strstr(out, "echo") && strstr(out, "/proc/sys/vm/nr_hugepages"),
		  "warning says how to reserve: %s", out);
	cr_assert_eq(strchr(out, '\n'), out + strlen(out) - 1, "exactly one line: %s", out);
	rf_mempool_free(a);
	rf_mempool_free(b);
}

Test(mempool_huge, no_huge_and_quiet_do_not_warn)
{
	fflush(stderr);
	FILE *cap = tmpfile();
	int saved = dup(STDERR_FILENO);
	dup2(fileno(cap), STDERR_FILENO);
	struct rf_mempool *a = rf_mempool_create("nohuge", 64, 2048, 0, RF_MEMPOOL_NO_HUGE);
	struct rf_mempool *b = rf_mempool_create("quiet", 64, 2048, 0, RF_MEMPOOL_QUIET);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	long size = ftell(cap);
	fclose(cap);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_eq(size, 0, "no warning with RF_MEMPOOL_NO_HUGE or RF_MEMPOOL_QUIET");
	cr_assert_not(rf_mempool_on_hugepages(a));
	rf_mempool_free(a);
	rf_mempool_free(b);
}
