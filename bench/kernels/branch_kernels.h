/*
 * bench/kernels/branch_kernels.h: the loops `ringflow-bench branch` times: the sum of the
 * bytes >= 128 of an array (the StackOverflow "sorted array" question seed 003 cites).
 *
 * The one idea: a conditional branch costs almost nothing when the predictor guesses it and
 * a pipeline flush (~15-20 cycles) when it does not; over random bytes it guesses wrong half
 * the time. Sorting the data makes the branch predictable; mask arithmetic removes it.
 *
 * Keeping the branchy version branchy: gcc -O2 turns `if (x >= 128) sum += x` into a cmov
 * and clang vectorises it, and then there is no branch to mispredict. br_sum_branchy() puts
 * an empty `__asm__ __volatile__` that takes `sum` in a register inside the taken side: a
 * volatile asm cannot be executed speculatively, so neither compiler may if-convert it, and
 * it costs no instruction. tests/bench/test_branch.c checks the disassembly. The other
 * variants carry a non-volatile register barrier on `sum` each iteration so that none is
 * vectorised: every variant is scalar, one element per iteration, and differs only in how
 * it decides. br_sum_compiler() is the plain C, whatever the compiler makes of it.
 */
#ifndef RINGFLOW_BENCH_BRANCH_KERNELS_H
#define RINGFLOW_BENCH_BRANCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define BR_THRESHOLD 128

/* Sum of the elements >= BR_THRESHOLD, four ways. All return the same value. */
uint64_t br_sum_branchy(const uint8_t *a, size_t n);    /* a real conditional jump */
uint64_t br_sum_expect(const uint8_t *a, size_t n);     /* the same with __builtin_expect */
uint64_t br_sum_branchless(const uint8_t *a, size_t n); /* sum += x & -(x >= 128) */
uint64_t br_sum_compiler(const uint8_t *a, size_t n);   /* plain C: cmov or SIMD at -O2 */

/* Fills a with bytes from a xorshift64 generator seeded with `seed` (same seed, same data). */
void br_fill_random(uint8_t *a, size_t n, uint64_t seed);

/* dst = src sorted ascending (counting sort, O(n)). */
void br_sort_bytes(uint8_t *dst, const uint8_t *src, size_t n);

#endif /* RINGFLOW_BENCH_BRANCH_KERNELS_H */
