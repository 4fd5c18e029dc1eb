/*
 * bench/bench_branch.c: `ringflow-bench branch`, seed 003's branch-prediction claim measured
 * here: the sum of the bytes >= 128 of a random array, unsorted vs sorted vs branchless vs
 * __builtin_expect, on 16 MiB (far beyond what any predictor can learn), 32 KiB and 4 KiB
 * (the same pattern repeated pass after pass: a predictor with long enough history starts
 * learning it, see docs/branch-prediction.md for where that happens on this CPU).
 *
 * Impls (bench/kernels/branch_kernels.h says how each loop is kept what it claims to be):
 *   branchy           real conditional jump, random data
 *   sorted            the same function over the sorted copy of the data
 *   branchless        mask arithmetic, random data
 *   expect            the branchy loop with __builtin_expect, random data
 *   compiler          plain C as the compiler optimises it (gcc: cmov; clang: SIMD)
 * Unit: ns per element. Every variant's sum is checked against the others on every pass.
 * Branch misses per element are printed when perf_event_open offers them.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/branch_kernels.h"
#include "kernels/perf_counter.h"
#include "micro.h"

typedef uint64_t (*br_fn)(const uint8_t *a, size_t n);

struct br_variant {
	br_fn fn;
	const uint8_t *data;
	size_t n;
	uint64_t want; /* the sum every variant must find */
	int *failed;
};

static double br_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	struct br_variant *v = arg;
	uint64_t t0 = rf_bench_now_ns(), t1, passes = 0;
	uint64_t deadline = t0 + (uint64_t)(ctx->seconds * 1e9);
	do {
		if (v->fn(v->data, v->n) != v->want)
			*v->failed = 1;
		passes++;
		t1 = rf_bench_now_ns();
	} while (t1 < deadline);
	return *v->failed ? -1 : (double)(t1 - t0) / ((double)passes * (double)v->n);
}

static void br_help(FILE *out)
{
	fprintf(out, "cases: 16MiB 32KiB 4KiB (array sizes; --quick: 1MiB instead of 16MiB)\n"
		     "impls: branchy sorted branchless expect compiler (see bench/kernels/branch_kernels.h)\n"
		     "unit:  ns per element; misses_SIZE cases give branch misses per element when\n"
		     "       perf_event_open has hardware counters\n");
}

/* Branch misses per element for each variant, one pass each, if the counters exist. */
static void br_misses(const struct rf_bench_opts *opts, const char *size_name,
		      const struct br_variant *v, const char *const *names, unsigned n, int fd)
{
	char case_name[32];
	snprintf(case_name, sizeof(case_name), "misses_%s", size_name);
	for (unsigned i = 0; i < n; i++) {
		perf_counter_start(fd);
		uint64_t s = v[i].fn(v[i].data, v[i].n);
		perf_counter_stop(fd);
		int64_t m = perf_counter_read(fd);
		if (m < 0 || s != v[i].want)
			continue;
		double per = (double)m / (double)v[i].n;
		rf_bench_record(opts, "branch", case_name, names[i], "miss/elem", RF_LOWER_IS_BETTER,
				per, per, 1);
	}
}

static int br_size_case(const struct rf_bench_opts *opts, const char *size_name, size_t n,
			int fd)
{
	uint8_t *random = malloc(n), *sorted = malloc(n);
	if (!random || !sorted) {
		free(random);
		free(sorted);
		fprintf(stderr, "ringflow-bench branch: cannot allocate 2 x %zu bytes\n", n);
		return -1;
	}
	br_fill_random(random, n, 42);
	br_sort_bytes(sorted, random, n);
	int failed = 0;
	uint64_t want = br_sum_compiler(random, n);
	struct br_variant v[] = {{br_sum_branchy, random, n, want, &failed},
				 {br_sum_branchy, sorted, n, want, &failed},
				 {br_sum_branchless, random, n, want, &failed},
				 {br_sum_expect, random, n, want, &failed},
				 {br_sum_compiler, random, n, want, &failed}};
	static const char *const names[] = {"branchy", "sorted", "branchless", "expect", "compiler"};
	struct micro_impl impls[RF_ARRAY_SIZE(v)];
	for (unsigned i = 0; i < RF_ARRAY_SIZE(v); i++)
		impls[i] = (struct micro_impl){.name = names[i], .fn = br_sample, .arg = &v[i]};
	if (micro_case(opts, "branch", size_name, "ns/elem", RF_LOWER_IS_BETTER, impls,
		       RF_ARRAY_SIZE(v)) == 0) {
		micro_ratio(opts, "branch", size_name, impls, RF_ARRAY_SIZE(v), "branchy", "sorted",
			    "branchy/sorted");
		micro_ratio(opts, "branch", size_name, impls, RF_ARRAY_SIZE(v), "branchy", "branchless",
			    "branchy/mask");
		if (fd >= 0)
			br_misses(opts, size_name, v, names, RF_ARRAY_SIZE(v), fd);
	}
	free(random);
	free(sorted);
	if (failed) {
		micro_check_failed("ringflow-bench branch: the variants disagree on the sum (a bug)");
		return -1;
	}
	return 0;
}

static int br_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench branch: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	rf_bench_pin_self(opts->cpu[0]);
	int fd = perf_counter_open_branch_misses();
	if (fd < 0)
		rf_bench_note("branch-miss counters not available here (%s)", perf_counter_why(-fd));
	int rc = 0;
	if (opts->quick)
		rc |= br_size_case(opts, "1MiB", 1u << 20, fd);
	else
		rc |= br_size_case(opts, "16MiB", 16u << 20, fd);
	rc |= br_size_case(opts, "32KiB", 32u << 10, fd);
	rc |= br_size_case(opts, "4KiB", 4u << 10, fd);
	if (fd >= 0)
		perf_counter_close(fd);
	rf_bench_note("random bytes 0..255, threshold %d: the branch is taken half the time",
		      BR_THRESHOLD);
	rf_bench_print_table(opts, "branch");
	return rc ? 1 : 0;
}

RF_BENCH_COMMAND("branch", "branch prediction: sum of bytes >= 128, unsorted vs sorted vs branchless",
		 br_run, br_help)
