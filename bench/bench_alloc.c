/*
 * bench/bench_alloc.c: `ringflow-bench alloc`, seed 003's memory-pool claim measured here:
 * getting and returning packet-sized objects (64 B, 256 B, 2 KiB) from glibc malloc and
 * jemalloc, with and without initialising each object (memset), one thread on --cpus A.
 *
 * Cases: pairs_SIZE (get, write header, put; repeated) and burst32_SIZE (32 gets, then 32
 * puts). Unit: ns per object (one get + one put).
 * Impls: ringflow (rf_mempool with a 256-object per-thread cache; bursts use the bulk
 * calls), glibc, jemalloc, each also "+zero" (memset(0) of the object after the get);
 * the loops are in bench/kernels/alloc_kernels.h. The table's last column is how many times
 * faster ringflow's pool is than each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/mempool.h>

#include "kernels/alloc_kernels.h"
#include "micro.h"

typedef uint64_t (*al_fn)(size_t size, uint64_t n, bool zero);
typedef uint64_t (*al_pool_fn)(struct rf_mempool *mp, uint64_t n, bool zero);

struct al_variant {
	al_fn fn;          /* malloc-style allocators */
	al_pool_fn pool_fn; /* or ringflow's mempool, with mp */
	struct rf_mempool *mp;
	size_t size;
	bool zero;
	unsigned per_call; /* objects per unit of n: 1 for pairs, AL_BURST for bursts */
};

static double al_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	const struct al_variant *v = arg;
	uint64_t chunk = 4096 / v->per_call, objects = 0;
	uint64_t t0 = rf_bench_now_ns(), t1;
	uint64_t deadline = t0 + (uint64_t)(ctx->seconds * 1e9);
	do {
		uint64_t sum = v->pool_fn ? v->pool_fn(v->mp, chunk, v->zero)
					  : v->fn(v->size, chunk, v->zero);
		if (sum != al_expected_sum(chunk * v->per_call)) {
			micro_check_failed("alloc: allocation failed or objects were corrupted");
			return -1;
		}
		objects += chunk * v->per_call;
		t1 = rf_bench_now_ns();
	} while (t1 < deadline);
	return (double)(t1 - t0) / (double)objects;
}

static void al_help(FILE *out)
{
	fprintf(out, "cases: pairs_64B pairs_256B pairs_2KiB burst32_64B burst32_256B burst32_2KiB\n"
		     "impls: ringflow (rf_mempool, cache 256), glibc, jemalloc; each also +zero (memset(0)\n"
		     "       of each object after the get)\n"
		     "unit:  ns per object (one get and one put)\n");
}

static void al_case(const struct rf_bench_opts *opts, bool burst, size_t size, const char *size_name)
{
	/* Far more objects than a burst, a cache like a poller's: the common case is the cache. */
	static unsigned quiet; /* the normal-pages warning once is enough */
	struct rf_mempool *mp = rf_mempool_create("bench_alloc", 8192, size, 256, quiet);
	quiet = RF_MEMPOOL_QUIET;
	if (!mp)
		rf_bench_note("ringflow mempool not run: rf_mempool_create: %s", strerror(errno));
	else if (!rf_mempool_on_hugepages(mp))
		rf_bench_note("ringflow mempool on normal pages (no hugepages reserved)");
	unsigned per = burst ? AL_BURST : 1;
	al_fn gl_fn = burst ? al_glibc_bursts : al_glibc_pairs;
#if RF_HAVE_JEMALLOC
	al_fn je_fn = burst ? al_jemalloc_bursts : al_jemalloc_pairs;
#else
	al_fn je_fn = NULL; /* built without jemalloc: its rows say "skipped" */
#endif
	al_pool_fn rf_fn = burst ? al_mempool_bursts : al_mempool_pairs;
	struct al_variant rf = {NULL, rf_fn, mp, size, false, per},
			  rfz = {NULL, rf_fn, mp, size, true, per},
			  gl = {gl_fn, NULL, NULL, size, false, per},
			  glz = {gl_fn, NULL, NULL, size, true, per},
			  je = {je_fn, NULL, NULL, size, false, per},
			  jez = {je_fn, NULL, NULL, size, true, per};
	struct micro_impl impls[] = {{.name = "ringflow", .fn = al_sample, .arg = &rf},
				     {.name = "ringflow+zero", .fn = al_sample, .arg = &rfz},
				     {.name = "glibc", .fn = al_sample, .arg = &gl},
				     {.name = "glibc+zero", .fn = al_sample, .arg = &glz},
				     {.name = "jemalloc", .fn = al_sample, .arg = &je},
				     {.name = "jemalloc+zero", .fn = al_sample, .arg = &jez}};
	char name[32];
	snprintf(name, sizeof(name), "%s_%s", burst ? "burst32" : "pairs", size_name);
	/* Without a pool, leave ringflow's two rows out rather than report a failure. */
	struct micro_impl *first = mp ? impls : impls + 2;
	unsigned n = RF_ARRAY_SIZE(impls) - (mp ? 0 : 2) - (je_fn ? 0 : 2);
	micro_case(opts, "alloc", name, "ns/obj", RF_LOWER_IS_BETTER, first, n);
	if (!je_fn) {
		rf_bench_record_skipped(opts, "alloc", name, "jemalloc", "ns/obj");
		rf_bench_record_skipped(opts, "alloc", name, "jemalloc+zero", "ns/obj");
		rf_bench_note("jemalloc skipped: built without jemalloc (RF_WITH_JEMALLOC)");
	}
	rf_mempool_free(mp);
}

static int al_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench alloc: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	rf_bench_pin_self(opts->cpu[0]);
	static const struct {
		size_t size;
		const char *name;
	} sizes[] = {{64, "64B"}, {256, "256B"}, {2048, "2KiB"}};
	for (unsigned b = 0; b < 2; b++)
		for (unsigned i = 0; i < RF_ARRAY_SIZE(sizes); i++)
			al_case(opts, b == 1, sizes[i].size, sizes[i].name);
	rf_bench_note("one thread; every get writes an 8-byte header; +zero also memsets the whole object to 0");
	rf_bench_print_table(opts, "alloc");
	return micro_exit_status();
}

RF_BENCH_COMMAND("alloc", "memory pools: packet-sized get/put vs glibc malloc and jemalloc",
		 al_run, al_help)
