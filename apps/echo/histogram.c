/*
 * apps/echo/histogram.c: the slow half of the log-bucket histogram (reset, percentiles,
 * merge). Recording is inline in histogram.h. See there for the bucket layout and error bound.
 */
#include "histogram.h"

#include <string.h>

void rf_hist_reset(struct rf_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t rf_hist_bucket_low(unsigned i)
{
	if (i < RF_HIST_SUB_COUNT)
		return i;
	unsigned octave = i / RF_HIST_SUB_COUNT; /* 1 for [2^7, 2^8), 2 for [2^8, 2^9), ... */
	uint64_t sub = i % RF_HIST_SUB_COUNT;
	return (RF_HIST_SUB_COUNT + sub) << (octave - 1u);
}

uint64_t rf_hist_bucket_width(unsigned i)
{
	return i < RF_HIST_SUB_COUNT ? 1 : (uint64_t)1 << (i / RF_HIST_SUB_COUNT - 1u);
}

uint64_t rf_hist_percentile(const struct rf_hist *h, double p)
{
	if (h->count == 0)
		return 0;
	if (!(p > 0.0)) /* also catches NaN */
		return h->min;
	if (p >= 100.0)
		return h->max;
	/* Nearest rank: the smallest rank r (1-based) with r >= p/100 * count. */
	double want = p / 100.0 * (double)h->count;
	want -= want * 1e-12; /* so that 0.0201 % of 10^6 is rank 201, not 202 by rounding */
	uint64_t rank = (uint64_t)want;
	if ((double)rank < want)
		rank++;
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < RF_HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			uint64_t v = rf_hist_bucket_low(i) + (rf_hist_bucket_width(i) - 1) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max; /* not reached while count equals the sum of the buckets */
}

double rf_hist_mean(const struct rf_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

void rf_hist_merge(struct rf_hist *dst, const struct rf_hist *src)
{
	for (unsigned i = 0; i < RF_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}
