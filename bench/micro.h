/*
 * bench/micro.h: what the teaching microbenchmarks (falseshare, branch, atomics, alloc) share
 * on top of the harness.
 *
 * The one idea: these benchmarks compare variants of one thing (a layout, a branch shape, a
 * memory order), not ringflow against a peer, so the figure that teaches is a ratio between
 * two variants measured in the same interleaved rounds. micro_case() runs rf_bench_case()
 * and keeps each variant's samples; micro_ratio() then records median(a) / median(b) as a
 * row of its own (unit "x", in the table and in the JSON lines).
 *
 * micro_run_threads() runs N pinned threads over one work function for a fixed time and
 * returns the CPU time they spent per operation, which stays meaningful when N exceeds the
 * CPU count (a descheduled thread spends no CPU time).
 */
#ifndef RINGFLOW_BENCH_MICRO_H
#define RINGFLOW_BENCH_MICRO_H

#include <ringflow/common.h>

#include "harness.h"

#define MICRO_MAX_SAMPLES 64
#define MICRO_MAX_THREADS 256

/* One variant of a case: the harness impl plus the samples micro_case() kept. */
struct micro_impl {
	const char *name;
	rf_bench_fn fn;
	void *arg;
	double samples[MICRO_MAX_SAMPLES];
	unsigned n;
};

/* rf_bench_case() over impls[0..n); keeps every measured sample in impls[i].samples.
 * Returns rf_bench_case()'s result (0, or -1 when the case was skipped). */
int micro_case(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
	       const char *unit, enum rf_better better, struct micro_impl *impls, unsigned n);

/* Median of the kept samples of the impl named `name`, or -1 when it has none. */
double micro_median(const struct micro_impl *impls, unsigned n, const char *name);

/* Records median(num) / median(den) in case_name as impl `label` (at most 14 characters,
 * e.g. "adjacent/pad64"), unit "x". Nothing when either side has no samples. Returns the
 * ratio or -1. */
double micro_ratio(const struct rf_bench_opts *opts, const char *bench, const char *case_name,
		   const struct micro_impl *impls, unsigned n, const char *num, const char *den,
		   const char *label);

/* Work done by thread `thread` of a micro_run_threads() run: perform about `chunk` operations
 * and return how many were done. Called again and again until the time is up. */
typedef uint64_t (*micro_work_fn)(void *arg, unsigned thread, uint64_t chunk);

struct micro_threads_result {
	uint64_t ops;    /* operations, all threads */
	uint64_t cpu_ns; /* CPU time spent in the work loop, all threads */
	uint64_t wall_ns;
};

/* Runs n threads (thread i pinned to CPU i % ncpus, all released at once by a barrier),
 * each calling fn(arg, i, chunk) for about `seconds`. Returns 0 or -errno. */
int micro_run_threads(unsigned n, double seconds, micro_work_fn fn, void *arg, uint64_t chunk,
		      struct micro_threads_result *out);

/* The same, with per-thread hooks run in each thread outside the timed loop: start() after
 * the barrier, before the first fn() call; stop() after the last (either may be NULL). For
 * work that needs per-thread setup, e.g. QSBR registration. */
int micro_run_threads_hooked(unsigned n, double seconds, micro_work_fn fn, void *arg,
			     uint64_t chunk, void (*start)(void *arg), void (*stop)(void *arg),
			     struct micro_threads_result *out);

/* A sample's self-check failed (counters that do not add up, a corrupted object): prints
 * the printf-style message to stderr and makes micro_exit_status() return 1, so the
 * subcommand exits non-zero and the smoke tests notice. */
void micro_check_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int micro_exit_status(void);

/* One-way latency (ns) of handing a cache line between CPUs a and b (a raw ping-pong for
 * about `seconds`), or -1 with one CPU. Cross-core figures depend on whether the two threads
 * really run at the same time (other processes on the CPUs, the host time-slicing the vCPUs)
 * and on where the host put the vCPUs; printing this beside them says which case it was. micro_note_placement() measures it and records it as case "placement". */
double micro_line_pingpong_ns(unsigned a, unsigned b, double seconds);
void micro_note_placement(const struct rf_bench_opts *opts, const char *bench);

#endif /* RINGFLOW_BENCH_MICRO_H */
