/*
 * bench/bench_falseshare.c: `ringflow-bench falseshare`, seed 003's false-sharing claim
 * measured here: N threads, each incrementing only its own counter, with the counters side
 * by side in one cache line, 64 B apart, or 128 B apart.
 *
 * Cases, for N = 1, 2, ... nproc and 2 x nproc (oversubscribed):
 *   atomic_tN   relaxed fetch-add (lock xadd) on each thread's own counter
 *   plain_tN    relaxed load + store (plain mov; every increment really stored)
 *   stats_tN    the real case: per-core packet counters (the 7 fields, 56 B, of the
 *               runtime's struct rf_core_counters) packed in an array vs one cache line per
 *               core as the runtime lays them out
 * Unit: ns of CPU time per increment (per packet for stats), summed over the threads and
 * divided by the increments done, so oversubscribed runs are not charged for waiting.
 * Ratio rows: adjacent/pad64 is what false sharing costs; pad128/pad64 whether the second
 * line buys anything.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/falseshare_kernels.h"
#include "micro.h"

#define CHUNK 4096 /* increments between two looks at the clock */

enum fs_op { OP_ATOMIC, OP_PLAIN, OP_STATS };

struct fs_variant {
	enum fs_op op;
	unsigned threads;
	size_t stride;
};

struct fs_run {
	struct fs_counters c;
	enum fs_op op;
	uint64_t next_packet[MICRO_MAX_THREADS]; /* per thread, only for OP_STATS */
};

static uint64_t fs_work(void *arg, unsigned thread, uint64_t chunk)
{
	struct fs_run *r = arg;
	_Atomic uint64_t *c = fs_counter(&r->c, thread);
	switch (r->op) {
	case OP_ATOMIC:
		fs_increment_atomic(c, chunk);
		break;
	case OP_PLAIN:
		fs_increment_plain(c, chunk);
		break;
	case OP_STATS:
		fs_stats_update((struct fs_stats *)(void *)c, r->next_packet[thread], chunk);
		r->next_packet[thread] += chunk;
		break;
	}
	return chunk;
}

static double fs_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	const struct fs_variant *v = arg;
	struct fs_run *r = calloc(1, sizeof(*r));
	if (!r || fs_counters_init(&r->c, v->threads, v->stride) != 0) {
		free(r);
		return -1;
	}
	r->op = v->op;
	struct micro_threads_result res;
	double ns = -1;
	if (micro_run_threads(v->threads, ctx->seconds, fs_work, r, CHUNK, &res) == 0 && res.ops)
		ns = (double)res.cpu_ns / (double)res.ops;
	/* The counters must add up (for stats the first word of each block is rx): a
	 * layout bug would show here before it shows in a figure. */
	uint64_t want = res.ops, got = 0;
	for (unsigned i = 0; i < v->threads; i++)
		got += atomic_load_explicit(fs_counter(&r->c, i), memory_order_relaxed);
	if (got != want) {
		micro_check_failed("falseshare: counters add up to %llu, expected %llu",
				   (unsigned long long)got, (unsigned long long)want);
		ns = -1;
	}
	fs_counters_fini(&r->c);
	free(r);
	return ns;
}

static void fs_help(FILE *out)
{
	fprintf(out,
		"cases: atomic_tN plain_tN stats_tN for N = 1..nproc and 2*nproc (oversubscribed)\n"
		"impls: adjacent (counters 8 B apart, one line), pad64, pad128; stats: packed (56 B\n"
		"       apart), aligned (alignas(RF_CACHE_LINE) per core, what ringflow does)\n"
		"unit:  ns of CPU time per increment (per packet update for stats)\n"
		"plain increments are relaxed atomic load + store (a plain mov the compiler must\n"
		"emit for every increment); atomic ones are relaxed fetch-add (lock xadd).\n"
		"thread i runs on CPU i %% nproc.\n");
}

static void fs_counter_case(const struct rf_bench_opts *opts, enum fs_op op, unsigned n)
{
	struct fs_variant adj = {op, n, 8}, p64 = {op, n, 64}, p128 = {op, n, 128};
	struct micro_impl impls[] = {{.name = "adjacent", .fn = fs_sample, .arg = &adj},
				     {.name = "pad64", .fn = fs_sample, .arg = &p64},
				     {.name = "pad128", .fn = fs_sample, .arg = &p128}};
	char name[32];
	snprintf(name, sizeof(name), "%s_t%u", op == OP_ATOMIC ? "atomic" : "plain", n);
	if (micro_case(opts, "falseshare", name, "ns/inc", RF_LOWER_IS_BETTER, impls, 3) == 0) {
		micro_ratio(opts, "falseshare", name, impls, 3, "adjacent", "pad64",
			    "adjacent/pad64");
		micro_ratio(opts, "falseshare", name, impls, 3, "pad128", "pad64", "pad128/pad64");
	}
}

static void fs_stats_case(const struct rf_bench_opts *opts, unsigned n)
{
	struct fs_variant packed = {OP_STATS, n, sizeof(struct fs_stats_packed)},
			  aligned = {OP_STATS, n, sizeof(struct fs_stats_aligned)};
	struct micro_impl impls[] = {{.name = "packed", .fn = fs_sample, .arg = &packed},
				     {.name = "aligned", .fn = fs_sample, .arg = &aligned}};
	char name[32];
	snprintf(name, sizeof(name), "stats_t%u", n);
	if (micro_case(opts, "falseshare", name, "ns/pkt", RF_LOWER_IS_BETTER, impls, 2) == 0)
		micro_ratio(opts, "falseshare", name, impls, 2, "packed", "aligned",
			    "packed/aligned");
}

static int fs_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench falseshare: unexpected argument '%s' (see --help)\n",
			argv[1]);
		return 2;
	}
	unsigned ncpus = rf_bench_ncpus();
	unsigned counts[MICRO_MAX_THREADS], n_counts = 0;
	for (unsigned n = 1; n <= ncpus && n_counts < 8; n = n < 4 ? n + 1 : n * 2)
		counts[n_counts++] = n;
	if (counts[n_counts - 1] != ncpus && ncpus <= MICRO_MAX_THREADS)
		counts[n_counts++] = ncpus;
	if (2 * ncpus <= MICRO_MAX_THREADS)
		counts[n_counts++] = 2 * ncpus;

	micro_note_placement(opts, "falseshare");
	for (unsigned i = 0; i < n_counts; i++)
		fs_counter_case(opts, OP_ATOMIC, counts[i]);
	for (unsigned i = 0; i < n_counts; i++)
		fs_counter_case(opts, OP_PLAIN, counts[i]);
	for (unsigned i = 0; i < n_counts; i++)
		fs_stats_case(opts, counts[i]);
	if (ncpus > 8)
		rf_bench_note("adjacent: more than 8 counters span several lines (8 per 64 B line)");
	rf_bench_note("%u CPUs online; the last thread count is oversubscribed (2 x nproc)", ncpus);
	rf_bench_print_table(opts, "falseshare");
	return micro_exit_status();
}

RF_BENCH_COMMAND("falseshare",
		 "false sharing: per-thread counters adjacent vs padded to 64/128 B, per-core stats",
		 fs_run, fs_help)
