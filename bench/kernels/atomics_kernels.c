/*
 * bench/kernels/atomics_kernels.c: one loop per operation and memory order. The orders are
 * what is measured, not what a caller needs: nothing is published through these variables
 * (the tests and the benchmark read them only after joining the threads).
 */
#include "atomics_kernels.h"

void at_fetch_add_loop(_Atomic uint64_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		atomic_fetch_add_explicit(p, 1, memory_order_relaxed);
}

uint64_t at_cas_loop(_Atomic uint64_t *p, uint64_t n)
{
	uint64_t failures = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t old = atomic_load_explicit(p, memory_order_relaxed);
		/* On failure `old` is reloaded with the current value: retry from there. */
		while (!atomic_compare_exchange_weak_explicit(p, &old, old + 1, memory_order_relaxed,
							      memory_order_relaxed))
			failures++;
	}
	return failures;
}

#define AT_STORE(name, order)                                  \
	void at_store_##name(_Atomic uint64_t *p, uint64_t n)  \
	{                                                      \
		for (uint64_t i = 1; i <= n; i++)              \
			atomic_store_explicit(p, i, order);    \
	}

#define AT_LOAD(name, order)                                       \
	uint64_t at_load_##name(_Atomic uint64_t *p, uint64_t n)   \
	{                                                          \
		uint64_t sum = 0;                                  \
		for (uint64_t i = 0; i < n; i++)                   \
			sum += atomic_load_explicit(p, order);     \
		return sum;                                        \
	}

#define AT_RMW(name, order)                                       \
	void at_rmw_##name(_Atomic uint64_t *p, uint64_t n)       \
	{                                                         \
		for (uint64_t i = 0; i < n; i++)                  \
			atomic_fetch_add_explicit(p, 1, order);   \
	}

AT_STORE(seq_cst, memory_order_seq_cst)
AT_STORE(release, memory_order_release)
AT_STORE(relaxed, memory_order_relaxed)
AT_LOAD(seq_cst, memory_order_seq_cst)
AT_LOAD(acquire, memory_order_acquire)
AT_LOAD(relaxed, memory_order_relaxed)
AT_RMW(seq_cst, memory_order_seq_cst)
AT_RMW(acq_rel, memory_order_acq_rel)
AT_RMW(relaxed, memory_order_relaxed)
