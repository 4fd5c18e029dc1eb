/*
 * bench/bench_mempool.c: `ringflow-bench mempool`, ringflow's mempool beside DPDK's
 * rte_mempool, jemalloc and glibc malloc, 2 KiB objects, all in one thread on --cpus A.
 *
 * Cases (DPDK's app/test/test_mempool_perf.c measures the same shapes):
 *   pair_single    get one object, write its first line, put it back
 *   pair_bulk32    get 32 (one get_bulk; 32 mallocs for the allocators), write the first
 *                  line of each, put all 32 back
 * The unit is objects through get+put per second (M/s). Writing one line per object is what a
 * driver does to a packet buffer, and it is where the layout shows: objects a power-of-two
 * apart pile into the same cache sets.
 *
 * Implementations: ringflow (hugepages when free), ringflow_nohuge (RF_MEMPOOL_NO_HUGE),
 * rte_mempool (EAL on hugepages, per-lcore cache), rte_mempool_nohuge (anonymous 4 KiB
 * memory: rte_mempool_populate_anon, what --no-huge gives), jemalloc (mallocx/sdallocx),
 * glibc (__libc_malloc/__libc_free: jemalloc, linked into this binary, replaces malloc).
 * As root the subcommand reserves the hugepages it needs and gives them back at the end;
 * otherwise the hugepage rows are skipped with the reason.
 */
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <ringflow/mempool.h>

#include "bench_eal.h"
#include "harness.h"

#define OBJ_SIZE 2048
#define POOL_N 8191 /* as DPDK's test: 2^13 - 1 */
#define CACHE 256
#define BULK 32
#define BATCH 256 /* iterations between clock reads */

void *__libc_malloc(size_t size);
void __libc_free(void *ptr);

static inline void touch(void *obj, uint64_t v)
{
	*(volatile uint64_t *)obj = v;
}

/* Runs `body` (one get+put of `per_iter` objects) until ctx->seconds passed; M objects/s. */
#define RUN_LOOP(ctx, per_iter, body)                                                     \
	do {                                                                              \
		uint64_t t0 = rf_bench_now_ns(), t1, iters = 0;                           \
		uint64_t budget = (uint64_t)((ctx)->seconds * 1e9);                       \
		do {                                                                      \
			for (unsigned it_ = 0; it_ < BATCH; it_++) {                      \
				body;                                                     \
			}                                                                 \
			iters += BATCH;                                                   \
			t1 = rf_bench_now_ns();                                           \
		} while (t1 - t0 < budget);                                               \
		return (double)iters * (per_iter) / ((double)(t1 - t0) / 1e3);            \
	} while (0)

/* ---- ringflow ---- */

static double rf_single(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rf_mempool *mp = arg;
	if (!mp)
		return -1;
	void *o;
	RUN_LOOP(ctx, 1, {
		if (rf_mempool_get(mp, &o))
			return -1;
		touch(o, it_);
		rf_mempool_put(mp, o);
	});
}

static double rf_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rf_mempool *mp = arg;
	if (!mp)
		return -1;
	void *o[BULK];
	RUN_LOOP(ctx, BULK, {
		if (rf_mempool_get_bulk(mp, o, BULK))
			return -1;
		for (unsigned i = 0; i < BULK; i++)
			touch(o[i], i);
		rf_mempool_put_bulk(mp, o, BULK);
	});
}

/* ---- rte_mempool ---- */

static double rte_single(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rte_mempool *mp = arg;
	if (!mp)
		return -1;
	void *o;
	RUN_LOOP(ctx, 1, {
		if (rte_mempool_get(mp, &o))
			return -1;
		touch(o, it_);
		rte_mempool_put(mp, o);
	});
}

static double rte_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rte_mempool *mp = arg;
	if (!mp)
		return -1;
	void *o[BULK];
	RUN_LOOP(ctx, BULK, {
		if (rte_mempool_get_bulk(mp, o, BULK))
			return -1;
		for (unsigned i = 0; i < BULK; i++)
			touch(o[i], i);
		rte_mempool_put_bulk(mp, o, BULK);
	});
}

/* ---- allocators ---- */

static double je_single(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	RUN_LOOP(ctx, 1, {
		void *o = mallocx(OBJ_SIZE, 0);
		if (!o)
			return -1;
		touch(o, it_);
		sdallocx(o, OBJ_SIZE, 0);
	});
}

static double je_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	void *o[BULK];
	RUN_LOOP(ctx, BULK, {
		for (unsigned i = 0; i < BULK; i++) {
			o[i] = mallocx(OBJ_SIZE, 0);
			if (!o[i])
				return -1;
			touch(o[i], i);
		}
		for (unsigned i = 0; i < BULK; i++)
			sdallocx(o[i], OBJ_SIZE, 0);
	});
}

static double glibc_single(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	RUN_LOOP(ctx, 1, {
		void *o = __libc_malloc(OBJ_SIZE);
		if (!o)
			return -1;
		touch(o, it_);
		__libc_free(o);
	});
}

static double glibc_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	void *o[BULK];
	RUN_LOOP(ctx, BULK, {
		for (unsigned i = 0; i < BULK; i++) {
			o[i] = __libc_malloc(OBJ_SIZE);
			if (!o[i])
				return -1;
			touch(o[i], i);
		}
		for (unsigned i = 0; i < BULK; i++)
			__libc_free(o[i]);
	});
}

/* ---- set-up ---- */

static struct rte_mempool *rte_pool_anon(void)
{
	struct rte_mempool *mp = rte_mempool_create_empty("rfb_anon", POOL_N, OBJ_SIZE, CACHE, 0,
							  SOCKET_ID_ANY, 0);
	if (!mp)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, "ring_mp_mc", NULL) != 0 ||
	    rte_mempool_populate_anon(mp) != POOL_N) {
		rte_mempool_free(mp);
		return NULL;
	}
	return mp;
}

static void mempool_help(FILE *out)
{
	fprintf(out, "cases: pair_single pair_bulk32 (2 KiB objects, pool of %u, cache %u)\n"
		     "impls: ringflow, ringflow_nohuge, rte_mempool (hugepages), rte_mempool_nohuge,\n"
		     "       jemalloc, glibc\n"
		     "unit:  M objects/s through get + write one line + put\n"
		     "As root, reserves the 2 MiB hugepages it needs and releases them at exit.\n",
		POOL_N, CACHE);
}

static int mempool_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench mempool: unexpected argument '%s' (see --help)\n",
			argv[1]);
		return 2;
	}
	rf_bench_pin_self(opts->cpu[0]);
	/* 64 pages for the EAL's 128 MiB and 16 for our pool (8191 x 2112 B = 17 MB). */
	long added = rf_bench_hugepages_reserve(80);
	char why[160];
	int eal = rf_bench_eal_start(opts->cpu[0], added >= 0, why, sizeof(why));
	if (added < 0)
		rf_bench_note("hugepages: fewer than 80 x 2 MiB free and %s: hugepage rows skipped",
			      geteuid() == 0 ? "the kernel could not reserve more"
					     : "not root, so none reserved");
	rf_bench_note("%s", why);

	struct rf_mempool *rf_huge = NULL, *rf_small;
	if (added >= 0) {
		rf_huge = rf_mempool_create("bench_huge", POOL_N, OBJ_SIZE, CACHE, RF_MEMPOOL_QUIET);
		if (rf_huge && !rf_mempool_on_hugepages(rf_huge)) {
			rf_bench_note("ringflow: no hugepage was free for the pool; row skipped");
			rf_mempool_free(rf_huge);
			rf_huge = NULL;
		}
	}
	rf_small = rf_mempool_create("bench_small", POOL_N, OBJ_SIZE, CACHE, RF_MEMPOOL_NO_HUGE);
	struct rte_mempool *rte_huge = NULL, *rte_small = NULL;
	if (eal == 1)
		rte_huge = rte_mempool_create("rfb_huge", POOL_N, OBJ_SIZE, CACHE, 0, NULL, NULL, NULL,
					      NULL, SOCKET_ID_ANY, 0);
	if (eal >= 0)
		rte_small = rte_pool_anon();
	if (eal == 1 && !rte_huge)
		rf_bench_note("rte_mempool_create on hugepages failed: %s", rte_strerror(rte_errno));
	if (eal >= 0 && !rte_small)
		rf_bench_note("rte_mempool_populate_anon failed: %s", rte_strerror(rte_errno));
	rf_bench_note("pool: %u objects of %u B, per-thread (per-lcore) cache %u; ringflow stride %zu B",
		      POOL_N, OBJ_SIZE, CACHE, rf_small ? rf_small->stride : 0);
	rf_bench_note("every object got is written (one cache line) before it is put back");

	const struct rf_bench_impl single[] = {
		{"ringflow", rf_single, rf_huge},        {"ringflow_nohuge", rf_single, rf_small},
		{"rte_mempool", rte_single, rte_huge},   {"rte_mempool_nohuge", rte_single, rte_small},
		{"jemalloc", je_single, NULL},           {"glibc", glibc_single, NULL}};
	const struct rf_bench_impl bulk[] = {
		{"ringflow", rf_bulk, rf_huge},        {"ringflow_nohuge", rf_bulk, rf_small},
		{"rte_mempool", rte_bulk, rte_huge},   {"rte_mempool_nohuge", rte_bulk, rte_small},
		{"jemalloc", je_bulk, NULL},           {"glibc", glibc_bulk, NULL}};
	rf_bench_case(opts, "mempool", "pair_single", "Mobj/s", RF_HIGHER_IS_BETTER, single,
		      RF_ARRAY_SIZE(single));
	rf_bench_case(opts, "mempool", "pair_bulk32", "Mobj/s", RF_HIGHER_IS_BETTER, bulk,
		      RF_ARRAY_SIZE(bulk));
	rf_bench_print_table(opts, "mempool");

	rf_mempool_free(rf_huge);
	rf_mempool_free(rf_small);
	rte_mempool_free(rte_huge);
	rte_mempool_free(rte_small);
	if (eal >= 0)
		rte_eal_cleanup();
	rf_bench_hugepages_release(added);
	return 0;
}

RF_BENCH_COMMAND("mempool", "mempool: get/put single and bulk 32 vs rte_mempool, jemalloc, glibc",
		 mempool_run, mempool_help)
