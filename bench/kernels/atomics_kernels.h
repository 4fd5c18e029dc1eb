/*
 * bench/kernels/atomics_kernels.h: the loops `ringflow-bench atomics` times.
 *
 * The one idea: on x86-64 every read-modify-write is a locked instruction (lock xadd,
 * lock cmpxchg) whatever memory order C asks for, and a seq_cst store is the only plain
 * access that costs a fence (gcc and clang emit xchg); loads and release stores are plain
 * movs. What really costs is contention: a CAS loop that loses has to reload and retry, a
 * fetch-add never retries. Each kernel is one loop with the order fixed at compile time,
 * so the benchmark times exactly the instruction the order produces.
 */
#ifndef RINGFLOW_BENCH_ATOMICS_KERNELS_H
#define RINGFLOW_BENCH_ATOMICS_KERNELS_H

#include <stdatomic.h>
#include <stdint.h>

/* n increments of *p with fetch-add (relaxed: a counter, nothing published through it). */
void at_fetch_add_loop(_Atomic uint64_t *p, uint64_t n);

/* n increments of *p with a compare-exchange loop (weak CAS, relaxed). Returns how many CAS
 * attempts failed (another thread changed *p in between, or a spurious failure). */
uint64_t at_cas_loop(_Atomic uint64_t *p, uint64_t n);

/* n stores of 1..n to *p with the named order. */
void at_store_seq_cst(_Atomic uint64_t *p, uint64_t n);
void at_store_release(_Atomic uint64_t *p, uint64_t n);
void at_store_relaxed(_Atomic uint64_t *p, uint64_t n);

/* n loads of *p with the named order; returns their sum. */
uint64_t at_load_seq_cst(_Atomic uint64_t *p, uint64_t n);
uint64_t at_load_acquire(_Atomic uint64_t *p, uint64_t n);
uint64_t at_load_relaxed(_Atomic uint64_t *p, uint64_t n);

/* n fetch-adds of 1 to *p with the named order. */
void at_rmw_seq_cst(_Atomic uint64_t *p, uint64_t n);
void at_rmw_acq_rel(_Atomic uint64_t *p, uint64_t n);
void at_rmw_relaxed(_Atomic uint64_t *p, uint64_t n);

#endif /* RINGFLOW_BENCH_ATOMICS_KERNELS_H */
