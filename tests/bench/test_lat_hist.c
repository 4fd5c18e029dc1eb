/* tests/bench/test_lat_hist.c: the bed's one-way latency buckets (bench/fwd/lat_hist.h), which
 * the sink's XDP program fills and fwd_sinklat reads back: every bucket's lowest value maps to
 * it, the value below to the bucket before, and no bucket is wider than 1/16 of its start. */
#include <criterion/criterion.h>

#include "lat_hist.h"

Test(lat_hist, buckets_tile_the_range)
{
	for (unsigned i = 1; i < LAT_HIST_BUCKETS; i++) {
		unsigned long long lo = lat_hist_low(i);
		cr_assert_eq(lat_hist_index(lo), i, "bucket %u starts at %llu, which maps to %u", i, lo,
			     lat_hist_index(lo));
		cr_assert_eq(lat_hist_index(lo - 1), i - 1, "the value before bucket %u's start", i);
		if (i + 1 < LAT_HIST_BUCKETS && i >= LAT_HIST_SUB)
			cr_assert_leq(lat_hist_low(i + 1) - lo, lo / LAT_HIST_SUB, "bucket %u is too wide", i);
	}
	cr_assert_eq(lat_hist_index(0), 0u);
	cr_assert_eq(lat_hist_index(~0ull), LAT_HIST_BUCKETS - 1);
}

Test(lat_hist, known_values)
{
	cr_assert_eq(lat_hist_index(15), 15u);
	cr_assert_eq(lat_hist_index(16), 16u);          /* 2^4: the first log bucket */
	cr_assert_eq(lat_hist_index(1000), 6u * 16 + 15); /* 2^9 = 512 .. 1023: 1000 in the last 32 ns slice */
	cr_assert_eq(lat_hist_low(6u * 16 + 15), 992ull);
	cr_assert_eq(lat_hist_msb(1), 0u);
	cr_assert_eq(lat_hist_msb(1ull << 63), 63u);
}
