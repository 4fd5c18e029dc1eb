/*
 * apps/echo/histogram.h: a log-bucket latency histogram (HdrHistogram's idea, simplified).
 *
 * The one idea: a latency sample is only ever needed to within a fixed *relative* error, so
 * values are counted in buckets whose width grows with the value. Values below 2^RF_HIST_SUB_BITS
 * get a bucket each (exact); above that, every power-of-two octave [2^e, 2^(e+1)) is split into
 * 2^RF_HIST_SUB_BITS equal buckets of width 2^(e - RF_HIST_SUB_BITS). Recording is a few shifts
 * and one increment; percentiles walk the bucket counts, never sort samples; two histograms
 * merge by adding counts. Memory is fixed (RF_HIST_BUCKETS counters, ~58 KiB), whatever the rate.
 *
 * Error bound: a percentile is reported as the midpoint of the bucket holding the sample of that
 * rank, clamped to the exact recorded [min, max]. So the reported value v' of a true sample v
 * satisfies |v' - v| <= v * 2^-(RF_HIST_SUB_BITS + 1), i.e. within 0.4 % (RF_HIST_SUB_BITS = 7),
 * and is exact for values below 128. min, max, count and the sum (for the mean) are exact.
 *
 * Percentile rank: nearest-rank, the smallest recorded value such that at least p % of the
 * samples are <= it (p = 0 gives min, p = 100 gives max). An empty histogram reports 0.
 *
 * Units: the caller's (the load generator records nanoseconds). Values use the full uint64_t
 * range. Not thread-safe: one writer per histogram; merge per-thread histograms afterwards.
 */
#ifndef RINGFLOW_APPS_ECHO_HISTOGRAM_H
#define RINGFLOW_APPS_ECHO_HISTOGRAM_H

#include <stdint.h>

#define RF_HIST_SUB_BITS 7u
#define RF_HIST_SUB_COUNT (1u << RF_HIST_SUB_BITS)
/* Octaves RF_HIST_SUB_BITS..63 plus the exact range below 2^RF_HIST_SUB_BITS. */
#define RF_HIST_BUCKETS ((64u - RF_HIST_SUB_BITS + 1u) * RF_HIST_SUB_COUNT)

struct rf_hist {
	uint64_t count;
	uint64_t min; /* UINT64_MAX when empty */
	uint64_t max;
	double sum;   /* for the mean; a double so that hours of nanoseconds cannot overflow */
	uint64_t bucket[RF_HIST_BUCKETS];
};

/* Bucket index of value v (0 .. RF_HIST_BUCKETS-1). */
static inline unsigned rf_hist_index(uint64_t v)
{
	if (v < RF_HIST_SUB_COUNT)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);   /* 2^e <= v < 2^(e+1), e >= SUB_BITS */
	unsigned sub = (unsigned)(v >> (e - RF_HIST_SUB_BITS)) - RF_HIST_SUB_COUNT;
	return (e - RF_HIST_SUB_BITS + 1u) * RF_HIST_SUB_COUNT + sub;
}

/* Adds one sample of value v. */
static inline void rf_hist_record(struct rf_hist *h, uint64_t v)
{
	h->bucket[rf_hist_index(v)]++;
	h->count++;
	h->sum += (double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* Empties h (count 0, min UINT64_MAX, max 0). */
void rf_hist_reset(struct rf_hist *h);

/* Lowest value that falls into bucket i, and the bucket's width (1 below 2^SUB_BITS). */
uint64_t rf_hist_bucket_low(unsigned i);
uint64_t rf_hist_bucket_width(unsigned i);

/* The value at percentile p (0..100, clamped), nearest rank; 0 when h is empty. */
uint64_t rf_hist_percentile(const struct rf_hist *h, double p);

/* Mean of the samples; 0 when empty. */
double rf_hist_mean(const struct rf_hist *h);

/* Adds every sample of src into dst. */
void rf_hist_merge(struct rf_hist *dst, const struct rf_hist *src);

#endif /* RINGFLOW_APPS_ECHO_HISTOGRAM_H */
