/*
 * bench/bench_alloc.c: `ringflow-bench alloc`, seed 003's memory-pool claim measured here:
 * getting and returning packet-sized objects (64 B, 256 B, 2 KiB) from glibc malloc and
 * jemalloc, with and without initialising each object (memset), one thread on --cpus A.
 *
 * Cases: pairs_SIZE (get, write header, put; repeated) and burst32_SIZE (32 gets, then 32
 * puts). Unit: ns per object (one get + one put).
 * Impls: glibc, glibc+zero, jemalloc, jemalloc+zero (+zero: memset(0) after each get) (bench/kernels/alloc_kernels.h).
 */
#include <stdlib.h>
#include <string.h>

#include "kernels/alloc_kernels.h"
#include "micro.h"

typedef uint64_t (*al_fn)(size_t size, uint64_t n, bool zero);

struct al_variant {
	al_fn fn;
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
		uint64_t sum = v->fn(v->size, chunk, v->zero);
		if (sum != al_expected_sum(chunk * v->per_call)) {
			fprintf(stderr, "alloc: allocation failed or objects were corrupted\n");
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
		     "impls: glibc, glibc+zero, jemalloc, jemalloc+zero (+zero: memset(0) of each object)\n"
		     "unit:  ns per object (one get and one put)\n");
}

static void al_case(const struct rf_bench_opts *opts, bool burst, size_t size, const char *size_name)
{
	unsigned per = burst ? AL_BURST : 1;
	struct al_variant gl = {burst ? al_glibc_bursts : al_glibc_pairs, size, false, per},
			  glz = {burst ? al_glibc_bursts : al_glibc_pairs, size, true, per},
			  je = {burst ? al_jemalloc_bursts : al_jemalloc_pairs, size, false, per},
			  jez = {burst ? al_jemalloc_bursts : al_jemalloc_pairs, size, true, per};
	struct micro_impl impls[] = {{.name = "glibc", .fn = al_sample, .arg = &gl},
				     {.name = "glibc+zero", .fn = al_sample, .arg = &glz},
				     {.name = "jemalloc", .fn = al_sample, .arg = &je},
				     {.name = "jemalloc+zero", .fn = al_sample, .arg = &jez}};
	char name[32];
	snprintf(name, sizeof(name), "%s_%s", burst ? "burst32" : "pairs", size_name);
	unsigned n = RF_ARRAY_SIZE(impls);
	if (micro_case(opts, "alloc", name, "ns/obj", RF_LOWER_IS_BETTER, impls, n) == 0)
		micro_ratio(opts, "alloc", name, impls, n, "glibc+zero", "glibc",
			    "zero/plain");
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
	return 0;
}

RF_BENCH_COMMAND("alloc", "memory pools: packet-sized get/put vs glibc malloc and jemalloc",
		 al_run, al_help)
