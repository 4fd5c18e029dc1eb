/*
 * tests/bench/test_alloc.c: the allocation kernels hand out real, writable objects of the
 * asked size and give every one back: the header sums come out right for every allocator
 * (ringflow mempool, glibc, jemalloc), pattern and size (the memset variants also add the
 * last byte, which must be 0).
 */
#include <criterion/criterion.h>

#include <ringflow/mempool.h>

#include "kernels/alloc_kernels.h"

static const size_t sizes[] = {8, 64, 256, 2048};

Test(bench_alloc, pairs_return_every_header)
{
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int zero = 0; zero < 2; zero++) {
			cr_assert_eq(al_glibc_pairs(sizes[i], 1000, zero), al_expected_sum(1000),
				     "glibc size %zu zero %d", sizes[i], zero);
#if RF_HAVE_JEMALLOC
			cr_assert_eq(al_jemalloc_pairs(sizes[i], 1000, zero), al_expected_sum(1000),
				     "jemalloc size %zu zero %d", sizes[i], zero);
#endif
		}
}

Test(bench_alloc, bursts_return_every_header)
{
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int zero = 0; zero < 2; zero++) {
			cr_assert_eq(al_glibc_bursts(sizes[i], 50, zero), al_expected_sum(50 * AL_BURST),
				     "glibc size %zu zero %d", sizes[i], zero);
#if RF_HAVE_JEMALLOC
			cr_assert_eq(al_jemalloc_bursts(sizes[i], 50, zero),
				     al_expected_sum(50 * AL_BURST), "jemalloc size %zu zero %d",
				     sizes[i], zero);
#endif
		}
}

Test(bench_alloc, expected_sum)
{
	cr_assert_eq(al_expected_sum(0), 0);
	cr_assert_eq(al_expected_sum(1), 0);
	cr_assert_eq(al_expected_sum(4), 6);
}

Test(bench_alloc, mempool_pairs_and_bursts_return_every_header)
{
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct rf_mempool *mp = rf_mempool_create("test_alloc", 256, sizes[i], 64,
							  RF_MEMPOOL_NO_HUGE);
		cr_assert_not_null(mp, "rf_mempool_create size %zu", sizes[i]);
		for (int zero = 0; zero < 2; zero++) {
			cr_assert_eq(al_mempool_pairs(mp, 1000, zero), al_expected_sum(1000),
				     "pairs size %zu zero %d", sizes[i], zero);
			cr_assert_eq(al_mempool_bursts(mp, 50, zero), al_expected_sum(50 * AL_BURST),
				     "bursts size %zu zero %d", sizes[i], zero);
		}
		/* every object came back */
		cr_assert_eq(rf_mempool_avail_count(mp), 256, "avail after size %zu", sizes[i]);
		rf_mempool_free(mp);
	}
}

Test(bench_alloc, mempool_burst_fails_cleanly_when_the_pool_is_too_small)
{
	struct rf_mempool *mp = rf_mempool_create("test_small", AL_BURST - 1, 64, 0,
						  RF_MEMPOOL_NO_HUGE);
	cr_assert_not_null(mp, "rf_mempool_create");
	cr_assert_eq(al_mempool_bursts(mp, 1, false), UINT64_MAX, "burst of 32 from 31 objects");
	cr_assert_eq(rf_mempool_avail_count(mp), AL_BURST - 1, "nothing taken");
	rf_mempool_free(mp);
}
