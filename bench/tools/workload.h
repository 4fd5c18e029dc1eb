/*
 * bench/tools/workload.h: the fixed compute job ringflow-stolen times, in the role
 * `openssl speed` plays in seed 000: pure user-space work of a known size, no system calls,
 * so any system time or extra wall time it shows was taken from it by the kernel.
 *
 * The job is FNV-1a (64 bit) over a buffer that fits in L1, chained over `passes` passes:
 * one multiply per byte, a serial dependency the CPU cannot hide, and a checksum that proves
 * the same work was done every run.
 */
#ifndef RINGFLOW_BENCH_TOOLS_WORKLOAD_H
#define RINGFLOW_BENCH_TOOLS_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define RF_FNV1A_OFFSET UINT64_C(0xcbf29ce484222325)
#define RF_FNV1A_PRIME UINT64_C(0x100000001b3)
#define RF_WORKLOAD_BUF 16384 /* bytes hashed per pass */

/* FNV-1a 64 of `len` bytes, continuing from `h` (start with RF_FNV1A_OFFSET). */
uint64_t rf_fnv1a64(uint64_t h, const void *data, size_t len);

/* Fills buf (RF_WORKLOAD_BUF bytes) with the fixed pattern the workload hashes. */
void rf_workload_fill(uint8_t *buf);

/* Runs the workload: `passes` chained FNV-1a passes over buf. Returns the checksum. */
uint64_t rf_workload_run(const uint8_t *buf, uint64_t passes);

#endif /* RINGFLOW_BENCH_TOOLS_WORKLOAD_H */
