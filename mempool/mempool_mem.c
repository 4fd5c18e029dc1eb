/*
 * mempool/mempool_mem.c: the backing region of a pool. One anonymous mapping, tried on 1 GiB
 * pages (when asked), then 2 MiB hugepages (MAP_HUGETLB needs pages reserved in
 * /proc/sys/vm/nr_hugepages but no hugetlbfs mount), then normal pages. The mapping is
 * populated up front so the fast path never takes a page fault.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <ringflow/log.h>

#include "mempool_pvt.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB (30 << MAP_HUGE_SHIFT)
#endif

#define RF_MP_2M ((size_t)2 << 20)
#define RF_MP_1G ((size_t)1 << 30)
#define RF_MP_4K ((size_t)4096)

static atomic_flag rf_mp_warned = ATOMIC_FLAG_INIT;

static void *rf_mp_try_map(size_t len, int extra)
{
	int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | extra;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, fl, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t rf_mp_round(size_t len, size_t page)
{
	return (len + page - 1) / page * page;
}

void *rf_mp_map_region(const char *name, size_t len, unsigned flags, size_t *mapped,
		       size_t *page_size)
{
	void *p;
	int huge_errno = 0;
	if (!(flags & RF_MEMPOOL_NO_HUGE)) {
		if (flags & RF_MEMPOOL_HUGE_1G) {
			size_t l = rf_mp_round(len, RF_MP_1G);
			p = rf_mp_try_map(l, MAP_HUGETLB | MAP_HUGE_1GB);
			if (p) {
				*mapped = l;
				*page_size = RF_MP_1G;
				return p;
			}
		}
		size_t l = rf_mp_round(len, RF_MP_2M);
		p = rf_mp_try_map(l, MAP_HUGETLB | MAP_HUGE_2MB);
		if (p) {
			*mapped = l;
			*page_size = RF_MP_2M;
			return p;
		}
		huge_errno = errno;
	}
	size_t l = rf_mp_round(len, RF_MP_4K);
	p = rf_mp_try_map(l, 0);
	if (!p)
		return NULL; /* errno from mmap (ENOMEM) */
	if (!(flags & (RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET)) &&
	    !atomic_flag_test_and_set(&rf_mp_warned))
		rf_log(RF_LOG_WARN,
			"mempool '%s': no free 2 MiB hugepages (%s), using 4 KiB pages "
			"(slower); reserve some as root: echo %zu > /proc/sys/vm/nr_hugepages\n",
			name, strerror(huge_errno), rf_mp_round(len, RF_MP_2M) / RF_MP_2M + 8);
	*mapped = l;
	*page_size = RF_MP_4K;
	return p;
}

void rf_mp_unmap_region(void *base, size_t mapped)
{
	if (base)
		munmap(base, mapped);
}
