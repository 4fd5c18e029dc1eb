/*
 * bench/fwd/lat_hist.h: the one-way latency histogram the bed's sink keeps (xdp_sink.bpf.c)
 * and fwd_sinklat reads. A frame of ringflow-pktgen --timestamps carries its send time
 * (bpf_ktime_get_ns, CLOCK_MONOTONIC); the sink's XDP program takes the same clock on arrival,
 * on the same host, so the difference is the one-way delay GEN -> FWD -> SINK in ns.
 * Buckets are log-linear: 16 per power of two (each at most 1/16 = 6.25 % wide), exact below
 * 16 ns; LAT_HIST_BUCKETS covers every 64-bit value. Plain C with no headers, so that both the
 * BPF target and the host compiler take it.
 */
#ifndef RF_BENCH_LAT_HIST_H
#define RF_BENCH_LAT_HIST_H

#define LAT_HIST_SUB 16u           /* buckets per power of two */
#define LAT_HIST_BUCKETS 976u      /* (63 - 3) * 16 + 16: 2^64 - 1 falls in bucket 975 */

/* Index of the highest set bit of v (v > 0), without a loop (the BPF verifier likes it so). */
static inline unsigned lat_hist_msb(unsigned long long v)
{
	unsigned r = 0;
	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/* The bucket of a delay of ns nanoseconds. */
static inline unsigned lat_hist_index(unsigned long long ns)
{
	if (ns < LAT_HIST_SUB)
		return (unsigned)ns;
	unsigned m = lat_hist_msb(ns); /* 4..63 */
	return (m - 3) * LAT_HIST_SUB + (unsigned)((ns >> (m - 4)) & (LAT_HIST_SUB - 1));
}

/* The smallest delay (ns) that falls in bucket i; bucket i ends where bucket i + 1 starts. */
static inline unsigned long long lat_hist_low(unsigned i)
{
	if (i < LAT_HIST_SUB)
		return i;
	unsigned m = i / LAT_HIST_SUB + 3;
	return (unsigned long long)(LAT_HIST_SUB + i % LAT_HIST_SUB) << (m - 4);
}

#endif
