/*
 * bench/tools/workload.c: FNV-1a over a fixed buffer (see workload.h for why this job).
 */
#include "workload.h"

uint64_t rf_fnv1a64(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= RF_FNV1A_PRIME;
	}
	return h;
}

void rf_workload_fill(uint8_t *buf)
{
	/* A xorshift sequence from a fixed seed: the same bytes on every run and machine. */
	uint32_t x = 2463534242u;
	for (unsigned i = 0; i < RF_WORKLOAD_BUF; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}

uint64_t rf_workload_run(const uint8_t *buf, uint64_t passes)
{
	uint64_t h = RF_FNV1A_OFFSET;
	for (uint64_t p = 0; p < passes; p++)
		h = rf_fnv1a64(h, buf, RF_WORKLOAD_BUF);
	return h;
}
