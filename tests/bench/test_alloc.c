/*
 * tests/bench/test_alloc.c: the allocation kernels hand out real, writable objects of the
 * asked size and give every one back: the header sums come out right for every allocator,
 * pattern and size (the memset variants also add the last byte, which must be 0).
 */
#include <criterion/criterion.h>

#include "kernels/alloc_kernels.h"

static const size_t sizes[] = {8, 64, 256, 2048};

Test(bench_alloc, pairs_return_every_header)
{
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int zero = 0; zero < 2; zero++) {
			cr_assert_eq(al_glibc_pairs(sizes[i], 1000, zero), al_expected_sum(1000),
				     "glibc size %zu zero %d", sizes[i], zero);
			cr_assert_eq(al_jemalloc_pairs(sizes[i], 1000, zero), al_expected_sum(1000),
				     "jemalloc size %zu zero %d", sizes[i], zero);
		}
}

Test(bench_alloc, bursts_return_every_header)
{
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int zero = 0; zero < 2; zero++) {
			cr_assert_eq(al_glibc_bursts(sizes[i], 50, zero), al_expected_sum(50 * AL_BURST),
				     "glibc size %zu zero %d", sizes[i], zero);
			cr_assert_eq(al_jemalloc_bursts(sizes[i], 50, zero),
				     al_expected_sum(50 * AL_BURST), "jemalloc size %zu zero %d",
				     sizes[i], zero);
		}
}

Test(bench_alloc, expected_sum)
{
	cr_assert_eq(al_expected_sum(0), 0);
	cr_assert_eq(al_expected_sum(1), 0);
	cr_assert_eq(al_expected_sum(4), 6);
}
