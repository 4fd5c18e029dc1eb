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

/*
 * Atomics in both languages (docs/abi.md). The headers spell an atomic member _Atomic(T): C11
 * reads that as the atomic type, and under C++ (before C++23 there is no _Atomic) it becomes
 * std::atomic<T>, whose size and alignment are checked below to be T's, so a struct has one
 * layout whichever language includes it. The static inline fast paths call the C names
 * (atomic_load_explicit, memory_order_acquire, ...), which C++'s <atomic> provides in std;
 * _Static_assert and _Thread_local get their C++ spellings.
 */
#ifdef __cplusplus
#include <atomic>
#ifndef _Atomic /* C++23's <stdatomic.h> defines it the same way */
#define _Atomic(T) std::atomic<T>
#endif
#ifndef _Static_assert
#define _Static_assert static_assert
#endif
#ifndef _Thread_local
#define _Thread_local thread_local
#endif
using std::memory_order;
using std::memory_order_relaxed;
using std::memory_order_consume;
using std::memory_order_acquire;
using std::memory_order_release;
using std::memory_order_acq_rel;
using std::memory_order_seq_cst;
using std::atomic_init;
using std::atomic_load;
using std::atomic_store;
using std::atomic_load_explicit;
using std::atomic_store_explicit;
using std::atomic_exchange_explicit;
using std::atomic_compare_exchange_weak_explicit;
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_sub_explicit;
using std::atomic_fetch_or_explicit;
using std::atomic_fetch_and_explicit;
using std::atomic_thread_fence;
using std::atomic_signal_fence;
#define RF_ATOMIC_SAME_LAYOUT(T)                                                              \
	static_assert(sizeof(std::atomic<T>) == sizeof(T) && alignof(std::atomic<T>) == alignof(T), \
		      "std::atomic<" #T "> must have the layout of C's _Atomic(" #T ")")
RF_ATOMIC_SAME_LAYOUT(uint32_t);
RF_ATOMIC_SAME_LAYOUT(uint64_t);
RF_ATOMIC_SAME_LAYOUT(unsigned);
RF_ATOMIC_SAME_LAYOUT(uintptr_t);
RF_ATOMIC_SAME_LAYOUT(void *);
#undef RF_ATOMIC_SAME_LAYOUT
#else
#include <stdatomic.h>
#endif

/*
 * Symbol visibility (docs/abi.md): the library is built with -fvisibility=hidden, and every
 * public header wraps its declarations in RF_API_BEGIN ... RF_API_END, so exactly what the
 * public headers declare is exported; ringflow.map then gives it a version node. A function
 * declared only in a private *_pvt.h stays inside the library.
 */
#define RF_API_BEGIN _Pragma("GCC visibility push(default)")
#define RF_API_END _Pragma("GCC visibility pop")

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

/* Asks for the cache line holding p in a writable state ahead of a store (x86 PREFETCHW,
 * which CPUs without it execute as a no-op; elsewhere the compiler's write prefetch). */
static inline void rf_prefetch_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
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
