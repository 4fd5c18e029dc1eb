/*
 * bench/bench_atomics.c: `ringflow-bench atomics`, what atomic operations cost on this CPU.
 *
 * Cases:
 *   rmw_t1          fetch-add vs CAS loop on a counter only one thread touches (uncontended)
 *   rmw_tN          the same with N = 2..nproc threads on one counter (contended); the
 *                   cas_fail row is failed CAS attempts per increment
 *   store, load,    one thread, one line: seq_cst vs release/acquire/acq_rel vs relaxed
 *   rmw
 *   list_tN         ringflow's lock-free list (ringflow/lflist.h) vs a mutex list, N threads
 *                   running 90 % lookups, 5 % inserts, 5 % deletes over 256 keys
 * Unit: ns of CPU time per operation (summed over threads / operations done); the list cases
 * count Mops/s of wall time instead (a thread asleep on the mutex spends no CPU time).
 * bench/kernels/atomics_kernels.h has the loops; thread i runs on CPU i % nproc.
 */
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "kernels/atomics_kernels.h"
#include "kernels/list_kernels.h"
#include "micro.h"

#define CHUNK 4096

enum at_kind { K_FETCH_ADD, K_CAS, K_STORE, K_LOAD, K_RMW };
enum at_order { O_SEQ_CST, O_ACQ_REL, O_RELAXED }; /* acq_rel: release store, acquire load */

struct at_variant {
	enum at_kind kind;
	enum at_order order;
	unsigned threads;
	double *fail_per_op; /* K_CAS: where to leave failed attempts per increment */
};

struct at_run {
	RF_CACHE_ALIGNED _Atomic uint64_t counter;
	const struct at_variant *v;
	struct {
		RF_CACHE_ALIGNED uint64_t v; /* one line per thread: the slots must not share */
	} failures[MICRO_MAX_THREADS], sink[MICRO_MAX_THREADS];
};

static uint64_t at_work(void *arg, unsigned thread, uint64_t chunk)
{
	struct at_run *r = arg;
	_Atomic uint64_t *p = &r->counter;
	switch (r->v->kind) {
	case K_FETCH_ADD:
		at_fetch_add_loop(p, chunk);
		break;
	case K_CAS:
		r->failures[thread].v += at_cas_loop(p, chunk);
		break;
	case K_STORE:
		(r->v->order == O_SEQ_CST ? at_store_seq_cst
		 : r->v->order == O_ACQ_REL ? at_store_release
					    : at_store_relaxed)(p, chunk);
		break;
	case K_LOAD:
		r->sink[thread].v += (r->v->order == O_SEQ_CST ? at_load_seq_cst
				      : r->v->order == O_ACQ_REL ? at_load_acquire
								 : at_load_relaxed)(p, chunk);
		break;
	case K_RMW:
		(r->v->order == O_SEQ_CST ? at_rmw_seq_cst
		 : r->v->order == O_ACQ_REL ? at_rmw_acq_rel
					    : at_rmw_relaxed)(p, chunk);
		break;
	}
	return chunk;
}

static double at_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	const struct at_variant *v = arg;
	struct at_run *r = aligned_alloc(RF_CACHE_LINE, sizeof(*r));
	if (!r)
		return -1;
	memset(r, 0, sizeof(*r));
	r->v = v;
	struct micro_threads_result res;
	double ns = -1;
	if (micro_run_threads(v->threads, ctx->seconds, at_work, r, CHUNK, &res) == 0 && res.ops)
		ns = (double)res.cpu_ns / (double)res.ops;
	/* Increments must add up: a lost update would mean a broken CAS loop. */
	uint64_t got = atomic_load_explicit(&r->counter, memory_order_relaxed);
	if ((v->kind == K_FETCH_ADD || v->kind == K_CAS || v->kind == K_RMW) && got != res.ops) {
		micro_check_failed("atomics: counter %llu after %llu increments",
				   (unsigned long long)got, (unsigned long long)res.ops);
		ns = -1;
	}
	if (v->kind == K_CAS && v->fail_per_op && res.ops && ctx->round > 0) {
		uint64_t f = 0;
		for (unsigned i = 0; i < v->threads; i++)
			f += r->failures[i].v;
		*v->fail_per_op = (double)f / (double)res.ops;
	}
	free(r);
	return ns;
}

/* ---- the lock-free list vs the mutex list ---- */

#define LIST_KEYS 256
#define LIST_UPDATE_PCT 10

struct list_variant {
	bool lockfree;
	unsigned threads;
};

struct list_run {
	const struct list_ops *ops;
	void *list;
	bool lockfree;
	struct {
		RF_CACHE_ALIGNED uint64_t v;
	} rng[MICRO_MAX_THREADS];
};

static uint64_t list_work(void *arg, unsigned thread, uint64_t chunk)
{
	struct list_run *r = arg;
	list_mixed_ops(r->ops, r->list, &r->rng[thread].v, chunk, LIST_KEYS, LIST_UPDATE_PCT);
	if (r->lockfree)
		rf_qsbr_quiescent(); /* between operations: no node pointer held */
	return chunk;
}

static void list_thread_start(void *arg)
{
	if (((struct list_run *)arg)->lockfree)
		rf_qsbr_register();
}

static void list_thread_stop(void *arg)
{
	if (((struct list_run *)arg)->lockfree)
		rf_qsbr_unregister();
}

static double list_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	const struct list_variant *v = arg;
	struct list_run *r = aligned_alloc(RF_CACHE_LINE, sizeof(*r));
	struct lf_list lf;
	struct ml_list ml;
	if (!r || (!v->lockfree && ml_init(&ml) != 0)) {
		free(r);
		return -1;
	}
	memset(r, 0, sizeof(*r));
	if (v->lockfree)
		lf_init(&lf);
	r->lockfree = v->lockfree;
	r->ops = v->lockfree ? &lf_ops : &ml_ops;
	r->list = v->lockfree ? (void *)&lf : (void *)&ml;
	for (unsigned i = 0; i < v->threads; i++)
		r->rng[i].v = 0x9e3779b97f4a7c15ull * (i + 1);
	for (uint64_t k = 0; k < LIST_KEYS; k += 2) /* half full, as the updates keep it */
		r->ops->insert(r->list, k);
	struct micro_threads_result res;
	double mops = -1;
	if (micro_run_threads_hooked(v->threads, ctx->seconds, list_work, r, 256, list_thread_start,
				     list_thread_stop, &res) == 0 && res.wall_ns)
		mops = (double)res.ops * 1e3 / (double)res.wall_ns;
	unsigned left = v->lockfree ? lf_count(&lf) : ml_count(&ml);
	if (left > LIST_KEYS) {
		micro_check_failed("atomics: list holds %u keys of %u possible", left, LIST_KEYS);
		mops = -1;
	}
	if (v->lockfree)
		lf_fini(&lf);
	else
		ml_fini(&ml);
	free(r);
	return mops;
}

static void at_list_case(const struct rf_bench_opts *opts, unsigned n)
{
	struct list_variant lf = {true, n}, ml = {false, n};
	struct micro_impl impls[] = {{.name = "ringflow", .fn = list_sample, .arg = &lf},
				     {.name = "mutex", .fn = list_sample, .arg = &ml}};
	char name[32];
	snprintf(name, sizeof(name), "list_t%u", n);
	micro_case(opts, "atomics", name, "Mops/s", RF_HIGHER_IS_BETTER, impls, 2);
}

static void at_help(FILE *out)
{
	fprintf(out, "cases: rmw_t1 (uncontended), rmw_tN for N = 2..nproc (contended), store, load, rmw\n"
		     "       list_tN for N = 1, nproc, 2*nproc\n"
		     "impls: fetch_add, cas_loop (rmw_tN); seq_cst, release/acquire/acq_rel, relaxed;\n"
		     "       lists: ringflow (lock-free rf_lflist), mutex (one pthread mutex)\n"
		     "unit:  ns of CPU time per operation; cas_fail = failed CAS attempts per increment;\n"
		     "       lists: Mops/s (wall time, all threads), 90%% lookups over 256 keys\n");
}

static void at_rmw_case(const struct rf_bench_opts *opts, unsigned n)
{
	double fail = -1;
	struct at_variant fa = {K_FETCH_ADD, O_RELAXED, n, NULL}, cas = {K_CAS, O_RELAXED, n, &fail};
	struct micro_impl impls[] = {{.name = "fetch_add", .fn = at_sample, .arg = &fa},
				     {.name = "cas_loop", .fn = at_sample, .arg = &cas}};
	char name[32];
	snprintf(name, sizeof(name), "rmw_t%u", n);
	if (micro_case(opts, "atomics", name, "ns/op", RF_LOWER_IS_BETTER, impls, 2) != 0)
		return;
	micro_ratio(opts, "atomics", name, impls, 2, "cas_loop", "fetch_add",
		    "cas/fetch_add");
	if (fail >= 0) /* from the last measured round */
		rf_bench_record(opts, "atomics", name, "cas_fail", "fail/op", RF_LOWER_IS_BETTER,
				fail, fail, 1);
}

static void at_order_case(const struct rf_bench_opts *opts, enum at_kind kind, const char *name,
			  const char *mid_name)
{
	struct at_variant sc = {kind, O_SEQ_CST, 1, NULL}, ar = {kind, O_ACQ_REL, 1, NULL},
			  rx = {kind, O_RELAXED, 1, NULL};
	struct micro_impl impls[] = {{.name = "seq_cst", .fn = at_sample, .arg = &sc},
				     {.name = mid_name, .fn = at_sample, .arg = &ar},
				     {.name = "relaxed", .fn = at_sample, .arg = &rx}};
	if (micro_case(opts, "atomics", name, "ns/op", RF_LOWER_IS_BETTER, impls, 3) == 0)
		micro_ratio(opts, "atomics", name, impls, 3, "seq_cst", "relaxed",
			    "seq_cst/relax");
}

static int at_run_cmd(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench atomics: unexpected argument '%s' (see --help)\n",
			argv[1]);
		return 2;
	}
	unsigned ncpus = rf_bench_ncpus();
	micro_note_placement(opts, "atomics");
	at_rmw_case(opts, 1);
	unsigned n = 2;
	for (; n <= ncpus && n <= MICRO_MAX_THREADS; n *= 2)
		at_rmw_case(opts, n);
	if (n / 2 != ncpus && ncpus > 1 && ncpus <= MICRO_MAX_THREADS)
		at_rmw_case(opts, ncpus); /* e.g. 6 CPUs: 2, 4, then 6 */
	at_order_case(opts, K_STORE, "store", "release");
	at_order_case(opts, K_LOAD, "load", "acquire");
	at_order_case(opts, K_RMW, "rmw", "acq_rel");
	at_list_case(opts, 1);
	if (ncpus > 1)
		at_list_case(opts, ncpus);
	if (2 * ncpus <= MICRO_MAX_THREADS)
		at_list_case(opts, 2 * ncpus);
	rf_bench_note("all CAS and fetch-add loops are relaxed; on x86-64 every RMW is a locked "
		      "instruction whatever the order");
	rf_bench_print_table(opts, "atomics");
	return micro_exit_status();
}

RF_BENCH_COMMAND("atomics", "atomics: CAS vs fetch-add, memory orders, lock-free vs mutex list",
		 at_run_cmd, at_help)
