/*
 * ringflow/common.h: the few definitions every module shares.
 *
 * The one idea: state written by different cores must live on different cache lines.
 * RF_CACHE_LINE is the unit of that separation; RF_CACHE_ALIGNED puts a member or a type
 * on its own line. 64 B is the line size on x86-64 and most ARMv8 parts; the adjacent-line
 * prefetcher can pull pairs of lines, so a few hot structures are measured with 128 B too
 * (see docs/false-sharing.md and `ringflow-bench ring`).
 */
#ifndef RINGFLOW_COMMON_H
#define RINGFLOW_COMMON_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#define RF_CACHE_LINE 64
#define RF_CACHE_ALIGNED alignas(RF_CACHE_LINE)

#define rf_likely(x) __builtin_expect(!!(x), 1)
#define rf_unlikely(x) __builtin_expect(!!(x), 0)

/* Spin-wait hint: lets the sibling hyperthread run and saves power in busy-poll loops. */
static inline void rf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* True when x is a non-zero power of two. */
static inline int rf_is_power_of_2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

/* Smallest power of two >= x (x > 0, x <= 2^63). */
static inline uint64_t rf_align_pow2_u64(uint64_t x)
{
	return x <= 1 ? 1 : (uint64_t)1 << (64 - __builtin_clzll(x - 1));
}

#define RF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif /* RINGFLOW_COMMON_H */
