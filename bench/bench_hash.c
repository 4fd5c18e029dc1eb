/*
 * bench/bench_hash.c: `ringflow-bench hash`, ringflow's bucketised hash beside liburcu
 * rculfhash (QSBR flavour), Concurrency Kit ck_ht (SPMC, direct 8-byte keys) and DPDK rte_hash
 * (lock-free reader/writer mode with its RCU defer queue), all holding 1M 8-byte keys.
 *
 * Cases:
 *   lookup_hit        one thread (--cpus A) looks up present keys in random order
 *   lookup_hit_writer the same while a writer on --cpus B inserts and deletes other keys
 *   insert_delete     one thread inserts a new key and deletes an older one, table at 1M;
 *                     ringflow_1w is a second table of ours created with
 *                     RF_HASH_SINGLE_WRITER, the mode that matches rte_hash's default one
 *   insert_delete_4w  four threads do the same at once, two on each of --cpus A and B
 *                     (oversubscribed: a writer preempted mid-call must not stall the rest),
 *                     each in its own key band; the figure is their sum. rte_hash_mw is a
 *                     second rte_hash in its multi-writer mode (MULTI_WRITER_ADD |
 *                     RW_CONCURRENCY_LF: writers take its spinlock), filled the same way.
 * Bulk variants (ringflow_bulk, rte_hash_bulk) look up 32 keys per call.
 *
 * Fairness: every table is built once with the same keys; rculfhash gets the same hash
 * function as ours (it takes the hash from the caller); readers of the QSBR tables (ours,
 * rculfhash, and rte_hash's own QSBR) pass a quiescent state every 1024 lookups, writers
 * every 64 operations (insert_delete's one writer every 256). Lookups that miss are counted
 * and reported: a hit case must hit.
 */
#if RF_HAVE_CK /* optional peers (RF_WITH_CK, RF_WITH_DPDK): a missing one is "skipped" */
#include <ck_ht.h>
#endif
#if RF_HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <urcu-qsbr.h>
#include <urcu/rculfhash.h>

#include <ringflow/hash.h>
#include <ringflow/mempool.h>

#include "bench_eal.h"
#include "harness.h"

#define NKEYS_FULL 1000000u
#define NKEYS_QUICK 100000u
#define WKEYS 32768u                    /* the writer's own keys */
#define WBASE ((uint64_t)1 << 40)       /* writer keys live above the table's keys */
#define BATCH 32
#define MW 4                            /* insert_delete_4w: writer threads */

static unsigned nkeys;
static uint64_t *order; /* the table's keys in random order */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ---- one interface over the four tables ---- */

struct table_ops {
	int (*insert)(void *t, uint64_t key, void *val);
	int (*del)(void *t, uint64_t key);
	void *(*lookup)(void *t, uint64_t key);
	unsigned (*bulk)(void *t, const uint64_t *keys, unsigned n, void **vals); /* may be NULL */
	void (*reader_begin)(void *t);
	void (*reader_quiescent)(void *t);
	void (*reader_end)(void *t);
};

static void qsbr_begin(void *t) { (void)t; rf_qsbr_register(); }
static void qsbr_quiescent(void *t) { (void)t; rf_qsbr_quiescent(); }
static void qsbr_end(void *t) { (void)t; rf_qsbr_unregister(); }
#if RF_HAVE_CK
static void nop(void *t) { (void)t; } /* ck_ht readers have nothing to announce */
#endif

/* ringflow */
static int rfh_insert(void *t, uint64_t k, void *v) { return rf_hash_insert(t, &k, v); }
static int rfh_del(void *t, uint64_t k) { return rf_hash_delete(t, &k, NULL); }
static void *rfh_lookup(void *t, uint64_t k) { return rf_hash_lookup(t, &k); }
static unsigned rfh_bulk(void *t, const uint64_t *keys, unsigned n, void **vals)
{
	const void *kp[BATCH];
	for (unsigned i = 0; i < n; i++)
		kp[i] = &keys[i];
	return rf_hash_lookup_bulk(t, kp, n, vals);
}
static const struct table_ops rfh_ops = {rfh_insert, rfh_del, rfh_lookup, rfh_bulk,
					 qsbr_begin, qsbr_quiescent, qsbr_end};

/* liburcu rculfhash */
struct lfnode {
	struct cds_lfht_node node;
	uint64_t key;
	void *val;
	struct rcu_head rcu;
};
static int lf_match(struct cds_lfht_node *n, const void *key)
{
	return ((struct lfnode *)n)->key == *(const uint64_t *)key;
}
static void lf_free(struct rcu_head *h)
{
	free((char *)h - offsetof(struct lfnode, rcu));
}
static int lf_insert(void *t, uint64_t k, void *v)
{
	struct lfnode *n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	cds_lfht_node_init(&n->node);
	n->key = k;
	n->val = v;
	rcu_read_lock();
	struct cds_lfht_node *r = cds_lfht_add_unique(t, mix64(k), lf_match, &k, &n->node);
	rcu_read_unlock();
	if (r != &n->node) {
		free(n);
		return -EEXIST;
	}
	return 0;
}
static int lf_del(void *t, uint64_t k)
{
	struct cds_lfht_iter it;
	rcu_read_lock();
	cds_lfht_lookup(t, mix64(k), lf_match, &k, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	int rc = n && cds_lfht_del(t, n) == 0 ? 0 : -ENOENT;
	if (rc == 0)
		call_rcu(&((struct lfnode *)n)->rcu, lf_free);
	rcu_read_unlock();
	return rc;
}
static void *lf_lookup(void *t, uint64_t k)
{
	struct cds_lfht_iter it;
	rcu_read_lock();
	cds_lfht_lookup(t, mix64(k), lf_match, &k, &it);
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
	void *v = n ? ((struct lfnode *)n)->val : NULL;
	rcu_read_unlock();
	return v;
}
static const struct table_ops lf_ops = {lf_insert, lf_del, lf_lookup, NULL,
					qsbr_begin, qsbr_quiescent, qsbr_end};

#if RF_HAVE_CK
/* Concurrency Kit ck_ht, SPMC (one writer, many readers), direct mode: 8-byte keys inline.
 * Keys 0 and ~0 are reserved by ck_ht; ours start at 1. Tables replaced on growth are freed
 * with `defer` set: we keep them until the end (no reader can be inside them then). */
struct ck_garbage {
	struct ck_garbage *next;
};
static struct ck_garbage *ck_deferred;
static void *ck_malloc_cb(size_t sz) { return malloc(sz); }
static void ck_free_cb(void *p, size_t sz, bool defer)
{
	(void)sz;
	if (defer && p) {
		struct ck_garbage *g = malloc(sizeof(*g) + sizeof(void *));
		if (g) {
			g->next = ck_deferred;
			memcpy(g + 1, &p, sizeof(p));
			ck_deferred = g;
			return;
		}
	}
	free(p);
}
static struct ck_malloc ck_alloc = {.malloc = ck_malloc_cb, .free = ck_free_cb};
static int ckh_insert(void *t, uint64_t k, void *v)
{
	ck_ht_entry_t e;
	ck_ht_hash_t h;
	ck_ht_hash_direct(&h, t, (uintptr_t)k);
	ck_ht_entry_set_direct(&e, h, (uintptr_t)k, (uintptr_t)v);
	return ck_ht_put_spmc(t, h, &e) ? 0 : -EEXIST;
}
static int ckh_del(void *t, uint64_t k)
{
	ck_ht_entry_t e;
	ck_ht_hash_t h;
	ck_ht_hash_direct(&h, t, (uintptr_t)k);
	ck_ht_entry_key_set_direct(&e, (uintptr_t)k);
	return ck_ht_remove_spmc(t, h, &e) ? 0 : -ENOENT;
}
static void *ckh_lookup(void *t, uint64_t k)
{
	ck_ht_entry_t e;
	ck_ht_hash_t h;
	ck_ht_hash_direct(&h, t, (uintptr_t)k);
	ck_ht_entry_key_set_direct(&e, (uintptr_t)k);
	return ck_ht_get_spmc(t, h, &e) ? (void *)ck_ht_entry_value_direct(&e) : NULL;
}
static const struct table_ops ck_ops = {ckh_insert, ckh_del, ckh_lookup, NULL, nop, nop, nop};
#else
static const struct table_ops ck_ops; /* never called: the table stays NULL */
#endif

#if RF_HAVE_DPDK
/* DPDK rte_hash: lock-free reader/writer mode; deleted slots are recycled through its RCU
 * defer queue, the reader reporting quiescent states as ours does. */
static struct rte_rcu_qsbr *rte_qsv;
static int rteh_insert(void *t, uint64_t k, void *v)
{
	return rte_hash_add_key_data(t, &k, v) == 0 ? 0 : -ENOSPC;
}
static int rteh_del(void *t, uint64_t k)
{
	return rte_hash_del_key(t, &k) >= 0 ? 0 : -ENOENT;
}
static void *rteh_lookup(void *t, uint64_t k)
{
	void *v;
	return rte_hash_lookup_data(t, &k, &v) >= 0 ? v : NULL;
}
static unsigned rteh_bulk(void *t, const uint64_t *keys, unsigned n, void **vals)
{
	const void *kp[BATCH];
	uint64_t hits = 0;
	for (unsigned i = 0; i < n; i++)
		kp[i] = &keys[i];
	rte_hash_lookup_bulk_data(t, kp, n, &hits, vals);
	return (unsigned)__builtin_popcountll(hits);
}
static void rteh_begin(void *t)
{
	(void)t;
	rte_rcu_qsbr_thread_register(rte_qsv, 0);
	rte_rcu_qsbr_thread_online(rte_qsv, 0);
}
static void rteh_quiescent(void *t) { (void)t; rte_rcu_qsbr_quiescent(rte_qsv, 0); }
static void rteh_end(void *t)
{
	(void)t;
	rte_rcu_qsbr_thread_offline(rte_qsv, 0);
	rte_rcu_qsbr_thread_unregister(rte_qsv, 0);
}
static const struct table_ops rte_ops = {rteh_insert, rteh_del, rteh_lookup, rteh_bulk,
					 rteh_begin, rteh_quiescent, rteh_end};
#else
static const struct table_ops rte_ops; /* never called: the table stays NULL */
#endif

/* ---- the tables ---- */

struct table {
	const char *name;
	const struct table_ops *ops;
	void *t;
	bool bulk;   /* this impl entry uses the bulk call */
	uint64_t wnext; /* the writer's next step (persists across samples) */
	uint64_t mwnext[MW]; /* insert_delete_4w: each writer's next step */
};

static char rte_why[160];

/* A second rte_hash for the multi-writer case (the EAL is up by then). */
static void *make_rte_mw(void)
{
#if !RF_HAVE_DPDK
	return NULL;
#else
	struct rte_hash_parameters p = {
		.name = "rfbench_mw", .entries = 2 * NKEYS_FULL, .key_len = 8,
		.hash_func = rte_hash_crc, .hash_func_init_val = 0, .socket_id = 0,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_MULTI_WRITER_ADD |
			      RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE};
	struct rte_hash *h = rte_hash_create(&p);
	if (!h)
		rf_bench_note("rte_hash_mw not measured: rte_hash_create failed: %s",
			      rte_strerror(rte_errno));
	return h;
#endif
}

static void *make_rte(void)
{
#if !RF_HAVE_DPDK
	snprintf(rte_why, sizeof(rte_why), "built without DPDK (RF_WITH_DPDK)");
	return NULL;
#else
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "rfbench_hash_%d", (int)getpid());
	char *argv[] = {"ringflow-bench", "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			"--file-prefix", prefix, "-l", "0", "--log-level", "lib.*:error", NULL};
	if (rte_eal_init((int)RF_ARRAY_SIZE(argv) - 1, argv) < 0) {
		snprintf(rte_why, sizeof(rte_why), "rte_eal_init failed: %s", rte_strerror(rte_errno));
		rf_bench_eal_remove_dir(); /* a failed init leaves its runtime directory */
		return NULL;
	}
	struct rte_hash_parameters p = {
		.name = "rfbench", .entries = 2 * NKEYS_FULL, .key_len = 8,
		.hash_func = rte_hash_crc, .hash_func_init_val = 0, .socket_id = 0,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE};
	struct rte_hash *h = rte_hash_create(&p);
	if (!h) {
		snprintf(rte_why, sizeof(rte_why), "rte_hash_create failed: %s", rte_strerror(rte_errno));
		return NULL;
	}
	size_t sz = rte_rcu_qsbr_get_memsize(4);
	rte_qsv = aligned_alloc(RTE_CACHE_LINE_SIZE, (sz + RTE_CACHE_LINE_SIZE - 1) & ~(size_t)(RTE_CACHE_LINE_SIZE - 1));
	struct rte_hash_rcu_config rc = {.v = rte_qsv, .mode = RTE_HASH_QSBR_MODE_DQ};
	if (!rte_qsv || rte_rcu_qsbr_init(rte_qsv, 4) != 0 || rte_hash_rcu_qsbr_add(h, &rc) != 0) {
		snprintf(rte_why, sizeof(rte_why), "rte_hash RCU setup failed");
		rte_hash_free(h);
		return NULL;
	}
	return h;
#endif
}

static bool fill(struct table *tb)
{
	for (unsigned i = 1; i <= nkeys; i++) {
		if (tb->ops->insert(tb->t, i, (void *)(uintptr_t)(i * 2 + 1)) != 0)
			return false;
		if ((i & 1023) == 0)
			rf_qsbr_quiescent(); /* the QSBR tables may free what growth replaced */
	}
	return true;
}

/* ---- samples ---- */

struct writer {
	struct table *tb;
	_Atomic int stop;
	uint64_t ops;
};

static void writer_step(struct table *tb)
{
	uint64_t i = tb->wnext++;
	uint64_t k = WBASE + (i / 2) % WKEYS;
	if (i & 1)
		tb->ops->del(tb->t, WBASE + ((i / 2) + WKEYS / 2) % WKEYS);
	else
		tb->ops->insert(tb->t, k, (void *)(uintptr_t)(k | 1));
}

/* The QSBR tables' reclamation callbacks (call_rcu) run on a helper thread pinned to the
 * writer's CPU, as a deployment would place it: liburcu's default helper floats and would
 * take the reader's CPU a share of the time. Same for ringflow and rculfhash. */
static struct call_rcu_data *writer_crdp;
static unsigned writer_cpu;

static void *writer_main(void *p)
{
	struct writer *w = p;
	bool qsbr = w->tb->ops == &rfh_ops || w->tb->ops == &lf_ops;
	if (qsbr) {
		rf_qsbr_register();
		if (!writer_crdp)
			writer_crdp = create_call_rcu_data(0, (int)writer_cpu);
		if (writer_crdp)
			set_thread_call_rcu_data(writer_crdp);
	}
	uint64_t n = 0;
	/* relaxed: a stop flag; the join orders the rest. */
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		writer_step(w->tb);
		if ((++n & 63) == 0 && qsbr)
			rf_qsbr_quiescent();
	}
	if (qsbr)
		rf_qsbr_unregister();
	w->ops = n;
	return NULL;
}

static uint64_t misses_seen;

static double run_lookups(struct table *tb, double seconds)
{
	const struct table_ops *o = tb->ops;
	o->reader_begin(tb->t);
	uint64_t done = 0, hits = 0, pos = (uint64_t)rand() % nkeys;
	void *vals[BATCH];
	uint64_t t0 = rf_bench_now_ns(), end = t0 + (uint64_t)(seconds * 1e9), t1;
	do {
		for (unsigned r = 0; r < 1024 / BATCH; r++) {
			if (pos + BATCH > nkeys)
				pos = 0;
			if (tb->bulk) {
				hits += o->bulk(tb->t, &order[pos], BATCH, vals);
			} else {
				for (unsigned i = 0; i < BATCH; i++)
					hits += o->lookup(tb->t, order[pos + i]) != NULL;
			}
			pos += BATCH;
		}
		done += 1024;
		o->reader_quiescent(tb->t);
	} while ((t1 = rf_bench_now_ns()) < end);
	o->reader_end(tb->t);
	misses_seen += done - hits;
	return (double)done / ((double)(t1 - t0) / 1e3); /* M lookups/s */
}

static double s_lookup(void *arg, const struct rf_bench_ctx *ctx)
{
	struct table *tb = arg;
	if (!tb->t)
		return -1;
	rf_bench_pin_self(ctx->opts->cpu[0]);
	return run_lookups(tb, ctx->seconds);
}

static double s_lookup_writer(void *arg, const struct rf_bench_ctx *ctx)
{
	struct table *tb = arg;
	if (!tb->t)
		return -1;
	rf_bench_pin_self(ctx->opts->cpu[0]);
	struct writer w = {.tb = tb};
	writer_cpu = ctx->opts->cpu[1];
	struct rf_bench_thread *th = rf_bench_thread_start(ctx->opts->cpu[1], writer_main, &w);
	if (!th)
		return -1;
	double v = run_lookups(tb, ctx->seconds);
	atomic_store_explicit(&w.stop, 1, memory_order_relaxed);
	rf_bench_thread_join(th);
	return v;
}

static double s_insert_delete(void *arg, const struct rf_bench_ctx *ctx)
{
	struct table *tb = arg;
	if (!tb->t)
		return -1;
	rf_bench_pin_self(ctx->opts->cpu[0]);
	bool qsbr = tb->ops == &rfh_ops || tb->ops == &lf_ops;
	if (qsbr)
		rf_qsbr_register();
	uint64_t n = 0, t0 = rf_bench_now_ns(), end = t0 + (uint64_t)(ctx->seconds * 1e9), t1;
	do {
		for (unsigned i = 0; i < 256; i++)
			writer_step(tb);
		n += 256;
		if (qsbr)
			rf_qsbr_quiescent();
	} while ((t1 = rf_bench_now_ns()) < end);
	if (qsbr)
		rf_qsbr_unregister();
	return (double)n / ((double)(t1 - t0) / 1e3);
}

/* insert_delete_4w: writer `id` works in its own band of WKEYS keys above the others'. */
struct mwriter {
	struct table *tb;
	unsigned id;
	_Atomic int *go, *stop;
	uint64_t ops;
};

static void *mwriter_main(void *p)
{
	struct mwriter *w = p;
	struct table *tb = w->tb;
	bool qsbr = tb->ops == &rfh_ops || tb->ops == &lf_ops;
	if (qsbr)
		rf_qsbr_register();
#if RF_HAVE_DPDK
	if (tb->ops == &rte_ops)
		rte_thread_register(); /* rte_hash's multi-writer mode wants an lcore id */
#endif
	uint64_t base = WBASE + (uint64_t)(w->id + 1) * 2 * WKEYS, n = 0;
	/* The step counter lives in a register while the writers run: tb->mwnext's four slots
	 * share a cache line, and writers on both CPUs bumping it each op would measure false
	 * sharing (bench falseshare), not the table. */
	uint64_t i = tb->mwnext[w->id];
	/* relaxed (go, stop): start/stop flags; the join orders the counts. */
	while (!atomic_load_explicit(w->go, memory_order_relaxed))
		sched_yield();
	while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
		for (unsigned r = 0; r < 64; r++, i++) {
			if (i & 1)
				tb->ops->del(tb->t, base + ((i / 2) + WKEYS / 2) % WKEYS);
			else
				tb->ops->insert(tb->t, base + (i / 2) % WKEYS,
						(void *)(uintptr_t)((base + i / 2) | 1));
		}
		n += 64;
		if (qsbr)
			rf_qsbr_quiescent();
	}
#if RF_HAVE_DPDK
	if (tb->ops == &rte_ops)
		rte_thread_unregister();
#endif
	if (qsbr)
		rf_qsbr_unregister();
	tb->mwnext[w->id] = i; /* the next sample goes on from here */
	w->ops = n;
	return NULL;
}

static double s_insert_delete_mw(void *arg, const struct rf_bench_ctx *ctx)
{
	struct table *tb = arg;
	if (!tb->t)
		return -1;
	_Atomic int go = 0, stop = 0;
	struct mwriter w[MW];
	struct rf_bench_thread *th[MW];
	for (unsigned i = 0; i < MW; i++) {
		w[i] = (struct mwriter){.tb = tb, .id = i, .go = &go, .stop = &stop};
		th[i] = rf_bench_thread_start(ctx->opts->cpu[i % 2], mwriter_main, &w[i]);
		if (!th[i]) {
			atomic_store(&stop, 1);
			atomic_store(&go, 1);
			for (unsigned j = 0; j < i; j++)
				rf_bench_thread_join(th[j]);
			return -1;
		}
	}
	uint64_t t0 = rf_bench_now_ns();
	atomic_store_explicit(&go, 1, memory_order_relaxed); /* as in mwriter_main */
	struct timespec ts = {(time_t)ctx->seconds,
			      (long)((ctx->seconds - (double)(time_t)ctx->seconds) * 1e9)};
	nanosleep(&ts, NULL);
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	uint64_t n = 0;
	for (unsigned i = 0; i < MW; i++) {
		rf_bench_thread_join(th[i]);
		n += w[i].ops;
	}
	uint64_t t1 = rf_bench_now_ns();
	return (double)n / ((double)(t1 - t0) / 1e3);
}

static void hash_help(FILE *out)
{
	fprintf(out, "cases: lookup_hit lookup_hit_writer insert_delete insert_delete_4w\n"
		     "       (1M 8-byte keys; --quick: 100K; 4w: four writers, two per CPU)\n"
		     "impls: ringflow, ringflow_bulk (32 per call), ringflow_1w (insert_delete:\n"
		     "       RF_HASH_SINGLE_WRITER), rculfhash (liburcu, QSBR), ck_ht\n"
		     "       (SPMC, direct keys), rte_hash, rte_hash_bulk (32 per call; DPDK EAL with\n"
		     "       --no-huge --no-pci --no-shconf -m 512), rte_hash_mw (multi-writer mode)\n"
		     "units: M lookups/s, M ops/s (insert_delete: inserts + deletes)\n"
		     "As root, reserves 2 MiB hugepages for ringflow's table and gives them back at the\n"
		     "end; RF_BENCH_HASH_4K=1 keeps it on 4 KiB pages like rte_hash's (EAL --no-huge).\n");
}

static int hash_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench hash: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	nkeys = opts->quick ? NKEYS_QUICK : NKEYS_FULL;
	order = malloc(sizeof(*order) * nkeys);
	if (!order) {
		fprintf(stderr, "ringflow-bench hash: out of memory for %u keys\n", nkeys);
		return 1;
	}
	for (unsigned i = 0; i < nkeys; i++)
		order[i] = i + 1;
	srand(12345);
	for (unsigned i = nkeys - 1; i > 0; i--) { /* Fisher-Yates */
		unsigned j = (unsigned)(((uint64_t)rand() << 16 ^ (uint64_t)rand()) % (i + 1));
		uint64_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}

	/* As root, 2 MiB hugepages for our tables (64 MiB each at 1M keys, plus the smaller tables
	 * they replaced until their grace period ends); given back at the end. Without them a
	 * table is on 4 KiB pages with a THP hint, and the note below says so. */
	/* RF_BENCH_HASH_4K=1: no hugepages for our table either (rte_hash's EAL is --no-huge),
	 * to see how much of the gap is page size. */
	const char *four_k = getenv("RF_BENCH_HASH_4K");
	bool huge_ok = !(four_k && four_k[0] == '1');
	long huge_added = huge_ok ? rf_bench_hugepages_reserve(opts->quick ? 16 : 128) : 0;
	rf_qsbr_register(); /* the building thread */
	static struct table rf_t = {"ringflow", &rfh_ops}, lf_t = {"rculfhash", &lf_ops},
			    ck_t = {"ck_ht", &ck_ops}, rte_t = {"rte_hash", &rte_ops},
			    rtemw_t = {"rte_hash_mw", &rte_ops}, rf1_t = {"ringflow_1w", &rfh_ops};
	rf_t.t = rf_hash_create("bench", 8, NKEYS_FULL + 4 * WKEYS, huge_ok ? 0 : RF_MEMPOOL_NO_HUGE);
	bool want_1w = !opts->filter || strstr("insert_delete", opts->filter);
	if (want_1w)
		rf1_t.t = rf_hash_create("bench1w", 8, NKEYS_FULL + 4 * WKEYS,
					 RF_HASH_SINGLE_WRITER | (huge_ok ? 0 : RF_MEMPOOL_NO_HUGE));
	lf_t.t = cds_lfht_new(1u << 20, 1u << 20, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
#if RF_HAVE_CK
	static ck_ht_t ckh;
	if (ck_ht_init(&ckh, CK_HT_MODE_DIRECT, NULL, &ck_alloc, 4u << 20, 6602834))
		ck_t.t = &ckh;
#else
	rf_bench_note("ck_ht skipped: built without Concurrency Kit (RF_WITH_CK)");
#endif
	rte_t.t = make_rte();
	bool want_mw = !opts->filter || strstr("insert_delete_4w", opts->filter);
	if (rte_t.t && want_mw)
		rtemw_t.t = make_rte_mw();
	struct table *all[] = {&rf_t, &lf_t, &ck_t, &rte_t, &rtemw_t, &rf1_t};
	for (unsigned i = 0; i < RF_ARRAY_SIZE(all); i++) {
		if (all[i]->t && !fill(all[i])) {
			rf_bench_note("%s: filling %u keys failed; not measured", all[i]->name, nkeys);
			all[i]->t = NULL;
		}
	}
	if (!rte_t.t)
		rf_bench_note("rte_hash not measured: %s", rte_why);
	rf_qsbr_unregister(); /* samples (re)register the threads that run them */
	struct table rfb_t = rf_t, rteb_t = rte_t;
	rfb_t.bulk = rteb_t.bulk = true;

	const struct rf_bench_impl look[] = {
		{"ringflow", s_lookup, &rf_t},       {"ringflow_bulk", s_lookup, &rfb_t},
		{"rculfhash", s_lookup, &lf_t},      {"ck_ht", s_lookup, &ck_t},
		{"rte_hash", s_lookup, &rte_t},      {"rte_hash_bulk", s_lookup, &rteb_t}};
	const struct rf_bench_impl lookw[] = {
		{"ringflow", s_lookup_writer, &rf_t},  {"ringflow_bulk", s_lookup_writer, &rfb_t},
		{"rculfhash", s_lookup_writer, &lf_t}, {"ck_ht", s_lookup_writer, &ck_t},
		{"rte_hash", s_lookup_writer, &rte_t}, {"rte_hash_bulk", s_lookup_writer, &rteb_t}};
	const struct rf_bench_impl insdel[] = {
		{"ringflow", s_insert_delete, &rf_t}, {"ringflow_1w", s_insert_delete, &rf1_t},
		{"rculfhash", s_insert_delete, &lf_t}, {"ck_ht", s_insert_delete, &ck_t},
		{"rte_hash", s_insert_delete, &rte_t}};
	const struct rf_bench_impl insdel_mw[] = {
		{"ringflow", s_insert_delete_mw, &rf_t},
		{"rculfhash", s_insert_delete_mw, &lf_t},
		{"rte_hash_mw", s_insert_delete_mw, &rtemw_t}};

	rf_bench_case(opts, "hash", "lookup_hit", "Mlookups/s", RF_HIGHER_IS_BETTER, look, 6);
	rf_bench_case(opts, "hash", "lookup_hit_writer", "Mlookups/s", RF_HIGHER_IS_BETTER, lookw, 6);
	rf_bench_case(opts, "hash", "insert_delete", "Mops/s", RF_HIGHER_IS_BETTER, insdel, 5);
	rf_bench_case(opts, "hash", "insert_delete_4w", "Mops/s", RF_HIGHER_IS_BETTER, insdel_mw, 3);
	if (misses_seen)
		rf_bench_note("WARNING: %lu lookups of present keys missed", (unsigned long)misses_seen);
	rf_bench_note("%u keys; writer: insert/delete over %u other keys on CPU %u; readers quiescent every 1024 lookups",
		      nkeys, WKEYS, opts->cpu[1]);
	rf_bench_note("insert_delete: ringflow_1w is our table with RF_HASH_SINGLE_WRITER (writer calls "
		      "never overlap), like rte_hash's default mode; ringflow is the lock-free "
		      "multi-writer table with one writer");
	rf_bench_note("insert_delete_4w: %u writers, two per CPU (%u, %u), %u keys each, quiescent every 64 ops; "
		      "compare with insert_delete (one writer)",
		      MW, opts->cpu[0], opts->cpu[1], WKEYS);
	rf_bench_note("memory: ringflow's table on %s; rte_hash: EAL --no-huge (4 KiB pages); "
		      "ck_ht, rculfhash: malloc",
		      rf_t.t && rf_hash_on_hugepages(rf_t.t) ? "2 MiB hugepages"
		      : huge_ok ? "4 KiB pages (no free 2 MiB hugepages; THP hint)"
				: "4 KiB pages (RF_BENCH_HASH_4K=1; THP hint)");
	rf_bench_print_table(opts, "hash");
	free(order);
	if (rf_t.t || rf1_t.t) {
		rf_qsbr_register();
		rf_hash_free(rf_t.t); /* gives the hugepages back before we release them */
		rf_hash_free(rf1_t.t);
		rf_qsbr_unregister();
	}
	rf_bench_hugepages_release(huge_added);
	/* The other tables are left to process exit; the EAL's runtime directory is removed now. */
#if RF_HAVE_DPDK
	if (rte_t.t)
		rf_bench_eal_stop();
#endif
	return 0;
}

RF_BENCH_COMMAND("hash", "hash tables, 1M 8-byte keys: lookups (alone, with a writer), insert/delete vs rculfhash, ck_ht, rte_hash",
		 hash_run, hash_help)
