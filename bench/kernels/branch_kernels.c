/*
 * bench/kernels/branch_kernels.c: the four ways to sum the bytes >= 128, and the data.
 * See branch_kernels.h for why each loop carries the barrier it carries.
 */
#include "branch_kernels.h"

#include <ringflow/common.h>

#include <string.h>

uint64_t br_sum_branchy(const uint8_t *a, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (a[i] >= BR_THRESHOLD) {
			/* Not speculable, so the compiler keeps the jump (no cmov, no SIMD). */
			__asm__ __volatile__("" : "+r"(sum));
			sum += a[i];
		}
	}
	return sum;
}

uint64_t br_sum_expect(const uint8_t *a, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (rf_likely(a[i] >= BR_THRESHOLD)) {
			__asm__ __volatile__("" : "+r"(sum));
			sum += a[i];
		}
	}
	return sum;
}

uint64_t br_sum_branchless(const uint8_t *a, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = a[i];
		sum += x & -(uint64_t)(x >= BR_THRESHOLD); /* all ones when taken, else zero */
		__asm__("" : "+r"(sum)); /* one element per iteration: keeps the loop scalar */
	}
	return sum;
}

uint64_t br_sum_compiler(const uint8_t *a, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] >= BR_THRESHOLD)
			sum += a[i];
	return sum;
}

void br_fill_random(uint8_t *a, size_t n, uint64_t seed)
{
	uint64_t x = seed ? seed : 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		a[i] = (uint8_t)(x >> 56);
	}
}

void br_sort_bytes(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t count[256] = {0};
	for (size_t i = 0; i < n; i++)
		count[src[i]]++;
	size_t at = 0;
	for (unsigned v = 0; v < 256; v++) {
		memset(dst + at, (int)v, count[v]);
		at += count[v];
	}
}
