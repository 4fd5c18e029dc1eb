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
 * Implementations: ringflow and rte_mempool (per-lcore cache) on each one's default memory:
 * hugepages when the run has them, else 4 KiB pages (EAL --no-huge); when they are on
 * hugepages, ringflow_nohuge (RF_MEMPOOL_NO_HUGE) and rte_mempool_nohuge (anonymous 4 KiB
 * memory, rte_mempool_populate_anon) run beside them (the EAL starts only once a process); jemalloc (mallocx/sdallocx),
 * glibc (__libc_malloc/__libc_free: jemalloc, linked into this binary, replaces malloc).
 * As root the subcommand reserves the hugepages it needs and gives them back at the end;
 * otherwise the hugepage rows are skipped with the reason.
 */
#if RF_HAVE_JEMALLOC /* optional peers (RF_WITH_JEMALLOC, RF_WITH_DPDK): a missing one is "skipped" */
#include <jemalloc/jemalloc.h>
#endif
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if RF_HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#endif

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

/*
 * The caller's array of object pointers. Where it sits relative to the objects decides a lot
 * here: with the array at one place a loop ran at 140 M/s, 64 B further at 2000 M/s (loads
 * from the array falsely wait on the object stores whose addresses match in the low 12 bits,
 * "4K aliasing"). A stack array would draw one such position per process and implementation,
 * so each batch of iterations moves the array to the next of 16 positions across a page and
 * every implementation is measured over all of them.
 */
#define POSITIONS 16
static alignas(4096) void *ptr_page[4096 / sizeof(void *) + BULK];

/* Runs `body` (one get+put of `per_iter` objects, through the array `o`) until ctx->seconds
 * passed; returns M objects/s. */
#define RUN_LOOP(ctx, per_iter, body)                                                     \
	do {                                                                              \
		uint64_t t0 = rf_bench_now_ns(), t1, iters = 0;                           \
		uint64_t budget = (uint64_t)((ctx)->seconds * 1e9);                       \
		unsigned pos_ = 0;                                                        \
		do {                                                                      \
			void **o = &ptr_page[pos_ * (4096 / POSITIONS / sizeof(void *))]; \
			pos_ = (pos_ + 1) % POSITIONS;                                    \
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
	RUN_LOOP(ctx, 1, {
		if (rf_mempool_get(mp, o))
			return -1;
		touch(o[0], it_);
		rf_mempool_put(mp, o[0]);
	});
}

static double rf_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rf_mempool *mp = arg;
	if (!mp)
		return -1;
	RUN_LOOP(ctx, BULK, {
		if (rf_mempool_get_bulk(mp, o, BULK))
			return -1;
		for (unsigned i = 0; i < BULK; i++)
			touch(o[i], i);
		rf_mempool_put_bulk(mp, o, BULK);
	});
}

/* ---- rte_mempool ---- */
#if RF_HAVE_DPDK

static double rte_single(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rte_mempool *mp = arg;
	if (!mp)
		return -1;
	RUN_LOOP(ctx, 1, {
		if (rte_mempool_get(mp, o))
			return -1;
		touch(o[0], it_);
		rte_mempool_put(mp, o[0]);
	});
}

static double rte_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	struct rte_mempool *mp = arg;
	if (!mp)
		return -1;
	RUN_LOOP(ctx, BULK, {
		if (rte_mempool_get_bulk(mp, o, BULK))
			return -1;
		for (unsigned i = 0; i < BULK; i++)
			touch(o[i], i);
		rte_mempool_put_bulk(mp, o, BULK);
	});
}
#else /* built without DPDK: the rows say "skipped" */
struct rte_mempool;
static double rte_single(void *arg, const struct rf_bench_ctx *ctx) { (void)arg, (void)ctx; return -1; }
static double rte_bulk(void *arg, const struct rf_bench_ctx *ctx) { (void)arg, (void)ctx; return -1; }
#endif

/* ---- allocators ---- */
#if RF_HAVE_JEMALLOC

static double je_single(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	RUN_LOOP(ctx, 1, {
		o[0] = mallocx(OBJ_SIZE, 0);
		if (!o[0])
			return -1;
		touch(o[0], it_);
		sdallocx(o[0], OBJ_SIZE, 0);
	});
}

static double je_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
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
#else /* built without jemalloc: the rows say "skipped" */
static double je_single(void *arg, const struct rf_bench_ctx *ctx) { (void)arg, (void)ctx; return -1; }
static double je_bulk(void *arg, const struct rf_bench_ctx *ctx) { (void)arg, (void)ctx; return -1; }
#endif

static double glibc_single(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
	RUN_LOOP(ctx, 1, {
		o[0] = __libc_malloc(OBJ_SIZE);
		if (!o[0])
			return -1;
		touch(o[0], it_);
		__libc_free(o[0]);
	});
}

static double glibc_bulk(void *arg, const struct rf_bench_ctx *ctx)
{
	(void)arg;
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
#if RF_HAVE_DPDK

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
#endif

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
	/* "ringflow" and "rte_mempool" are each library's default memory: hugepages when this
	 * run has them, else 4 KiB pages; the _nohuge rows (4 KiB pages) are added beside them
	 * only when the default rows are on hugepages. */
	struct rf_mempool *rf_def = NULL, *rf_small = NULL;
	rf_def = rf_mempool_create("bench", POOL_N, OBJ_SIZE, CACHE, RF_MEMPOOL_QUIET);
	bool rf_huge = rf_def && rf_mempool_on_hugepages(rf_def);
	if (rf_huge)
		rf_small = rf_mempool_create("bench_small", POOL_N, OBJ_SIZE, CACHE,
					     RF_MEMPOOL_NO_HUGE);
	char why[160];
	int eal = rf_bench_eal_start(opts->cpu[0], added >= 0, why, sizeof(why));
	if (added < 0)
		rf_bench_note("hugepages: fewer than 80 x 2 MiB free and %s: hugepage rows skipped",
			      geteuid() == 0 ? "the kernel could not reserve more"
					     : "not root, so none reserved");
	rf_bench_note("%s", why);

	struct rte_mempool *rte_def = NULL, *rte_small = NULL;
#if RF_HAVE_DPDK
	if (eal >= 0) {
		rte_def = rte_mempool_create("rfb_pool", POOL_N, OBJ_SIZE, CACHE, 0, NULL, NULL, NULL,
					     NULL, SOCKET_ID_ANY, 0);
		if (!rte_def)
			rf_bench_note("rte_mempool_create failed: %s", rte_strerror(rte_errno));
	}
	if (eal == 1) {
		rte_small = rte_pool_anon();
		if (!rte_small)
			rf_bench_note("rte_mempool_populate_anon failed: %s", rte_strerror(rte_errno));
	}
#endif
	if (!RF_HAVE_JEMALLOC)
		rf_bench_note("jemalloc skipped: built without jemalloc (RF_WITH_JEMALLOC)");
	rf_bench_note("ringflow on %s, rte_mempool on %s", rf_huge ? "2 MiB hugepages" : "4 KiB pages",
		      eal == 1 ? "2 MiB hugepages" : eal == 0 ? "4 KiB pages" : "nothing (no EAL)");
	rf_bench_note("pool: %u objects of %u B, per-thread (per-lcore) cache %u; ringflow stride %zu B",
		      POOL_N, OBJ_SIZE, CACHE, rf_def ? rf_def->stride : 0);
	rf_bench_note("every object got is written (one cache line) before it is put back");

	const struct rf_bench_impl single[] = {
		{"ringflow", rf_single, rf_def},       {"ringflow_nohuge", rf_single, rf_small},
		{"rte_mempool", rte_single, rte_def},  {"rte_mempool_nohuge", rte_single, rte_small},
		{"jemalloc", je_single, NULL},         {"glibc", glibc_single, NULL}};
	const struct rf_bench_impl bulk[] = {
		{"ringflow", rf_bulk, rf_def},         {"ringflow_nohuge", rf_bulk, rf_small},
		{"rte_mempool", rte_bulk, rte_def},    {"rte_mempool_nohuge", rte_bulk, rte_small},
		{"jemalloc", je_bulk, NULL},           {"glibc", glibc_bulk, NULL}};
	rf_bench_case(opts, "mempool", "pair_single", "Mobj/s", RF_HIGHER_IS_BETTER, single,
		      RF_ARRAY_SIZE(single));
	rf_bench_case(opts, "mempool", "pair_bulk32", "Mobj/s", RF_HIGHER_IS_BETTER, bulk,
		      RF_ARRAY_SIZE(bulk));
	rf_bench_print_table(opts, "mempool");

	rf_mempool_free(rf_def);
	rf_mempool_free(rf_small);
#if RF_HAVE_DPDK
	rte_mempool_free(rte_def);
	rte_mempool_free(rte_small);
	if (eal >= 0)
		rf_bench_eal_stop();
#endif
	rf_bench_hugepages_release(added);
	return 0;
}

RF_BENCH_COMMAND("mempool", "mempool: get/put single and bulk 32 vs rte_mempool, jemalloc, glibc",
		 mempool_run, mempool_help)
