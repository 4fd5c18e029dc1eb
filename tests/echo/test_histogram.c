/*
 * tests/echo/test_histogram.c: the log-bucket histogram against inputs whose percentiles are
 * known (uniform, bimodal, a single value, empty), its bucket layout and error bound, and merge.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "histogram.h"

static struct rf_hist *new_hist(void)
{
	struct rf_hist *h = malloc(sizeof(*h));
	cr_assert_not_null(h);
	rf_hist_reset(h);
	return h;
}

/* |got - want| within the stated bound: want * 2^-(SUB_BITS+1), rounded up to whole units. */
static void assert_close(uint64_t got, uint64_t want, const char *what)
{
	uint64_t tol = (want >> (RF_HIST_SUB_BITS + 1)) + 1;
	uint64_t diff = got > want ? got - want : want - got;
	cr_assert_leq(diff, tol, "%s: got %llu, want %llu (tolerance %llu)", what,
		      (unsigned long long)got, (unsigned long long)want, (unsigned long long)tol);
}

Test(histogram, empty_reports_zero)
{
	struct rf_hist *h = new_hist();
	cr_assert_eq(h->count, 0);
	cr_assert_eq(rf_hist_percentile(h, 0), 0);
	cr_assert_eq(rf_hist_percentile(h, 50), 0);
	cr_assert_eq(rf_hist_percentile(h, 100), 0);
	cr_assert_float_eq(rf_hist_mean(h), 0.0, 1e-12);
	free(h);
}

Test(histogram, single_value_is_every_percentile)
{
	struct rf_hist *h = new_hist();
	for (int i = 0; i < 1000; i++)
		rf_hist_record(h, 123457);
	double ps[] = {0, 0.1, 1, 50, 90, 99, 99.9, 100};
	for (unsigned i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		cr_assert_eq(rf_hist_percentile(h, ps[i]), 123457, "p%g", ps[i]);
	cr_assert_eq(h->min, 123457);
	cr_assert_eq(h->max, 123457);
	cr_assert_float_eq(rf_hist_mean(h), 123457.0, 1e-6);
	free(h);
}

Test(histogram, uniform_percentiles_within_bound)
{
	/* 1..N once each: the nearest-rank p-th percentile is ceil(p/100 * N). */
	const uint64_t n = 1000000;
	struct rf_hist *h = new_hist();
	for (uint64_t v = 1; v <= n; v++)
		rf_hist_record(h, v);
	cr_assert_eq(h->count, n);
	cr_assert_eq(rf_hist_percentile(h, 0), 1);
	cr_assert_eq(rf_hist_percentile(h, 100), n);
	assert_close(rf_hist_percentile(h, 50), 500000, "p50");
	assert_close(rf_hist_percentile(h, 90), 900000, "p90");
	assert_close(rf_hist_percentile(h, 99), 990000, "p99");
	assert_close(rf_hist_percentile(h, 99.9), 999000, "p99.9");
	/* Below 2^(SUB_BITS+1) every value has its own bucket: exact. */
	cr_assert_eq(rf_hist_percentile(h, 0.01), 100);
	cr_assert_eq(rf_hist_percentile(h, 0.0201), 201);
	cr_assert_float_eq(rf_hist_mean(h), 500000.5, 1e-3);
	free(h);
}

Test(histogram, bimodal_splits_at_the_mode_boundary)
{
	/* 90 % at 20 us, 10 % at 3 ms (ns): p50 and p90 in the low mode, p91 and up in the high. */
	struct rf_hist *h = new_hist();
	for (int i = 0; i < 9000; i++)
		rf_hist_record(h, 20000);
	for (int i = 0; i < 1000; i++)
		rf_hist_record(h, 3000000);
	assert_close(rf_hist_percentile(h, 50), 20000, "p50");
	assert_close(rf_hist_percentile(h, 90), 20000, "p90");
	assert_close(rf_hist_percentile(h, 90.01), 3000000, "p90.01");
	assert_close(rf_hist_percentile(h, 99), 3000000, "p99");
	cr_assert_eq(rf_hist_percentile(h, 0), 20000);
	cr_assert_eq(rf_hist_percentile(h, 100), 3000000);
	cr_assert_float_eq(rf_hist_mean(h), (9000.0 * 20000 + 1000.0 * 3000000) / 10000, 1e-3);
	free(h);
}

Test(histogram, buckets_tile_the_range_with_bounded_width)
{
	/* Every bucket starts where the previous one ends, and width/low <= 2^-SUB_BITS. */
	for (unsigned i = 1; i < RF_HIST_BUCKETS; i++) {
		uint64_t low = rf_hist_bucket_low(i), prev_end = rf_hist_bucket_low(i - 1) +
								 rf_hist_bucket_width(i - 1);
		cr_assert_eq(low, prev_end, "bucket %u", i);
		cr_assert_eq(rf_hist_index(low), i);
		cr_assert_eq(rf_hist_index(low + rf_hist_bucket_width(i) - 1), i);
		if (i >= RF_HIST_SUB_COUNT)
			cr_assert_leq(rf_hist_bucket_width(i) << RF_HIST_SUB_BITS, low, "bucket %u", i);
	}
	cr_assert_eq(rf_hist_index(UINT64_MAX), RF_HIST_BUCKETS - 1);
	cr_assert_eq(rf_hist_bucket_low(RF_HIST_BUCKETS - 1) +
			     (rf_hist_bucket_width(RF_HIST_BUCKETS - 1) - 1), UINT64_MAX);
}

Test(histogram, huge_values_are_kept)
{
	struct rf_hist *h = new_hist();
	rf_hist_record(h, UINT64_MAX);
	rf_hist_record(h, 0);
	cr_assert_eq(rf_hist_percentile(h, 50), 0);
	cr_assert_eq(rf_hist_percentile(h, 100), UINT64_MAX);
	free(h);
}

Test(histogram, merge_equals_recording_everything_in_one)
{
	struct rf_hist *a = new_hist(), *b = new_hist(), *all = new_hist();
	uint64_t x = 88172645463325252ull; /* xorshift: a reproducible spread of values */
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x % 5000000;
		rf_hist_record(i % 3 ? a : b, v);
		rf_hist_record(all, v);
	}
	rf_hist_merge(a, b);
	cr_assert_eq(a->count, all->count);
	cr_assert_eq(a->min, all->min);
	cr_assert_eq(a->max, all->max);
	for (unsigned i = 0; i < RF_HIST_BUCKETS; i++)
		cr_assert_eq(a->bucket[i], all->bucket[i]);
	double ps[] = {1, 50, 99, 99.9};
	for (unsigned i = 0; i < 4; i++)
		cr_assert_eq(rf_hist_percentile(a, ps[i]), rf_hist_percentile(all, ps[i]));
	free(a);
	free(b);
	free(all);
}
