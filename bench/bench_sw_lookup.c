/*
 * bench/bench_sw_lookup.c: `ringflow-bench switch-lookup`, ringflow-switch's flow lookup
 * alone (apps/ofswitch/sw_table.c + sw_emc.c), one thread on --cpus A: the per-core
 * exact-match cache in front of the tuple-space search, the search alone, and the design it
 * replaced (a priority-sorted array scanned in order) as the baseline.
 *
 * Cases (keys are 64-byte flow keys; each lookup is checked against the flow it must find):
 *   1flow          one flow (in_port), 64 keys
 *   1k_exact       1000 exact-match flows, their 1000 keys (fit the EMC)
 *   100k_10masks   100000 flows over 10 masks (eth_type IPv4 + ipv4_dst /18 .. /27, one
 *                  priority) + a table-miss flow; emc_hit: 4096 of their keys, emc_miss:
 *                  500000 keys (far more than the 8192-entry EMC holds, and more megaflows
 *                  than the 65536-entry megaflow cache holds), 50k_keys: 50000 of them
 *                  (as bench-switch's wild100k: more than the EMC, fewer than the megaflow
 *                  cache holds; run before emc_miss)
 *   100k_10masks_churn  as emc_hit, while a second thread (--cpus B) adds and deletes flows
 *                  at 10000 changes/s, each add a new highest-priority flow of its mask (the
 *                  worst case for the cache: every add invalidates it); impls: ringflow
 *                  (under churn) and no_churn (the same lookups, writer idle)
 * Impls: ringflow (sw_table_lookup: EMC, megaflow cache, then tuple-space search), tss_only
 * (sw_table_classify), linear_scan (the old design's miss path). Unit: million lookups/s.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/qsbr.h>

#include "harness.h"
#include "sw.h"

enum lk_mode { LK_EMC, LK_TSS, LK_LINEAR };

struct lk_table {
	struct sw_table *t;
	struct sw_flow **all, **sorted; /* sorted: priority descending (the linear baseline) */
	unsigned n;
};

struct lk_arg {
	struct lk_table *tab;
	const struct sw_key *keys;
	struct sw_flow *const *want; /* the flow each key must find */
	unsigned nkeys;
	enum lk_mode mode;
	bool churn; /* run while the churn writer works */
};

static atomic_bool churn_on, churn_stop;
static atomic_uint lk_bad;

static struct sw_flow *linear(const struct lk_table *tab, const struct sw_key *k)
{
	for (unsigned i = 0; i < tab->n; i++)
		if (sw_flow_matches(tab->sorted[i], k))
			return tab->sorted[i];
	return NULL;
}

static double lk_sample(void *arg, const struct rf_bench_ctx *ctx)
{
	struct lk_arg *a = arg;
	atomic_store(&churn_on, a->churn);
	uint64_t n = 0, i = 0, t0 = rf_bench_now_ns(), t1;
	uint64_t deadline = t0 + (uint64_t)(ctx->seconds * 1e9);
	unsigned chunk = a->mode == LK_LINEAR && a->tab->n > 10000 ? 4 : 1024;
	do {
		for (unsigned j = 0; j < chunk; j++) {
			unsigned x = (unsigned)(i++ % a->nkeys);
			struct sw_flow *f = a->mode == LK_EMC ? sw_table_lookup(a->tab->t, 0, &a->keys[x])
					    : a->mode == LK_TSS ? sw_table_classify(a->tab->t, &a->keys[x])
								: linear(a->tab, &a->keys[x]);
			if (f == NULL || f->priority != a->want[x]->priority)
				atomic_fetch_add(&lk_bad, 1);
		}
		n += chunk;
		rf_qsbr_quiescent(); /* a poll round */
		t1 = rf_bench_now_ns();
	} while (t1 < deadline);
	atomic_store(&churn_on, false);
	return (double)n / ((double)(t1 - t0) / 1e3); /* per us = millions per s */
}

static int by_prio(const void *x, const void *y)
{
	const struct sw_flow *a = *(struct sw_flow *const *)x, *b = *(struct sw_flow *const *)y;
	return a->priority > b->priority ? -1 : a->priority < b->priority;
}

static int lk_add(struct lk_table *tab, struct sw_flow *f)
{
	if (sw_table_add(tab->t, f) != 0)
		return -1;
	tab->all[tab->n] = f;
	tab->sorted[tab->n++] = f;
	return 0;
}

static struct lk_table *lk_table_new(unsigned cap)
{
	struct lk_table *tab = calloc(1, sizeof(*tab));
	if (!tab)
		return NULL;
	tab->t = sw_table_create(1);
	tab->all = calloc(cap, sizeof(*tab->all));
	tab->sorted = calloc(cap, sizeof(*tab->sorted));
	if (!tab->t || !tab->all || !tab->sorted) {
		sw_table_free(tab->t);
		free(tab->all);
		free(tab->sorted);
		free(tab);
		return NULL;
	}
	return tab;
}

static void lk_table_free(struct lk_table *tab)
{
	if (!tab)
		return;
	sw_table_free(tab->t);
	for (unsigned i = 0; i < tab->n; i++)
		free(tab->all[i]);
	free(tab->all);
	free(tab->sorted);
	free(tab);
}

static void ip4_key(struct sw_key *k, uint32_t dst)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	k->eth_type = 0x0800;
	k->ip_proto = 17;
	k->nw_dst[0] = (uint8_t)(dst >> 24), k->nw_dst[1] = (uint8_t)(dst >> 16);
	k->nw_dst[2] = (uint8_t)(dst >> 8), k->nw_dst[3] = (uint8_t)dst;
	k->tp_src = 1234;
	k->tp_dst = 80;
}

/* Flow i of the 10-mask table: ipv4_dst/(18 + i % 10), a distinct prefix per i. */
static struct sw_flow *mask_flow(uint32_t i, uint16_t prio, uint32_t base, uint32_t *dst)
{
	struct sw_flow *f = sw_flow_alloc(1);
	if (!f)
		return NULL;
	unsigned plen = 18 + i % 10;
	uint32_t m = ~(0xffffffffu >> plen), d = base + ((i / 10) << (32 - plen));
	f->mask.eth_type = 0xffff;
	f->mask.nw_dst[0] = (uint8_t)(m >> 24), f->mask.nw_dst[1] = (uint8_t)(m >> 16);
	f->mask.nw_dst[2] = (uint8_t)(m >> 8), f->mask.nw_dst[3] = (uint8_t)m;
	struct sw_key k;
	ip4_key(&k, d);
	f->match.eth_type = 0x0800;
	for (unsigned b = 0; b < 4; b++)
		f->match.nw_dst[b] = k.nw_dst[b] & f->mask.nw_dst[b];
	f->priority = prio;
	*dst = d;
	return f;
}

/* The churn writer: 10000 changes/s while churn_on, alternating add and delete of flows
 * in another address range (new masked keys at priority 200: every add bumps the EMC). */
static void *churner(void *arg)
{
	struct lk_table *tab = arg;
	rf_qsbr_register();
	enum { POOL = 512 };
	struct sw_flow *live[POOL] = {0};
	uint64_t ops = 0, next = rf_bench_now_ns();
	uint32_t seq = 0;
	while (!atomic_load(&churn_stop)) {
		if (!atomic_load(&churn_on)) {
			rf_qsbr_offline();
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
			rf_qsbr_online();
			next = rf_bench_now_ns();
			continue;
		}
		uint64_t now = rf_bench_now_ns();
		if (now < next) {
			rf_qsbr_quiescent();
			continue;
		}
		next += 100000; /* 10000 per second */
		unsigned s = (unsigned)(ops / 2 % POOL);
		if (ops++ % 2 == 0 && !live[s]) {
			uint32_t d;
			live[s] = mask_flow(seq++ % 1000000, 200, 0xac100000u, &d); /* 172.16/12 */
			if (live[s] && sw_table_add(tab->t, live[s]) != 0) {
				free(live[s]);
				live[s] = NULL;
			}
		} else if (live[s]) {
			sw_table_remove(tab->t, live[s]);
			sw_table_retire(tab->t, live[s], SW_RETIRE_FLOW);
			live[s] = NULL;
		}
		sw_table_reclaim(tab->t, now, false);
		rf_qsbr_quiescent();
	}
	for (unsigned s = 0; s < POOL; s++)
		if (live[s]) {
			sw_table_remove(tab->t, live[s]);
			sw_table_retire(tab->t, live[s], SW_RETIRE_FLOW);
		}
	sw_table_reclaim(tab->t, 0, true);
	rf_qsbr_unregister();
	return NULL;
}

static void lk_case(const struct rf_bench_opts *opts, const char *name, struct lk_table *tab,
		    const struct sw_key *keys, struct sw_flow *const *want, unsigned nkeys,
		    bool with_linear)
{
	struct lk_arg emc = {tab, keys, want, nkeys, LK_EMC, false}, tss = emc, lin = emc;
	tss.mode = LK_TSS;
	lin.mode = LK_LINEAR;
	struct rf_bench_impl impls[] = {{"ringflow", lk_sample, &emc},
					{"tss_only", lk_sample, &tss},
					{"linear_scan", lk_sample, &lin}};
	rf_bench_case(opts, "switch-lookup", name, "Mlookup/s", RF_HIGHER_IS_BETTER, impls,
		      with_linear ? 3 : 2);
}

static int lk_run(int argc, char **argv, const struct rf_bench_opts *opts)
{
	if (argc > 1) {
		fprintf(stderr, "ringflow-bench switch-lookup: unexpected argument '%s' (see --help)\n",
			argv[1]);
		return 2;
	}
	rf_bench_pin_self(opts->cpu[0]);
	rf_qsbr_register();
	int rc = 0;
	unsigned nbig = opts->quick ? 10000 : 100000, nmiss = opts->quick ? 50000 : 500000;
	struct sw_key *keys = calloc(nmiss, sizeof(*keys));
	struct sw_flow **want = calloc(nmiss, sizeof(*want));
	struct lk_table *tab = NULL;
	if (!keys || !want)
		goto nomem;

	/* 1 flow */
	if (!(tab = lk_table_new(1)))
		goto nomem;
	struct sw_flow *f = sw_flow_alloc(1);
	if (!f)
		goto nomem;
	f->mask.in_port = 0xffffffffu;
	f->match.in_port = 1;
	f->priority = 10;
	if (lk_add(tab, f)) {
		free(f);
		goto nomem;
	}
	for (unsigned i = 0; i < 64; i++) {
		ip4_key(&keys[i], 0x0a000000u + i);
		want[i] = f;
	}
	lk_case(opts, "1flow", tab, keys, want, 64, true);
	lk_table_free(tab);

	/* 1K exact-match flows */
	if (!(tab = lk_table_new(1000)))
		goto nomem;
	for (unsigned i = 0; i < 1000; i++) {
		struct sw_flow *g = sw_flow_alloc(1);
		if (!g)
			goto nomem;
		ip4_key(&keys[i], 0x0a000000u + i * 7);
		keys[i].tp_src = (uint16_t)(1000 + i);
		g->match = keys[i];
		memset(&g->mask, 0xff, sizeof(g->mask));
		g->priority = 10;
		want[i] = g;
		if (lk_add(tab, g)) {
			free(g);
			goto nomem;
		}
	}
	lk_case(opts, "1k_exact", tab, keys, want, 1000, true);
	lk_table_free(tab);

	/* 100K over 10 masks + table-miss */
	if (!(tab = lk_table_new(nbig + 1)))
		goto nomem;
	uint32_t *dsts = calloc(nbig, sizeof(*dsts));
	if (!dsts)
		goto nomem;
	for (uint32_t i = 0; i < nbig; i++) {
		struct sw_flow *g = mask_flow(i, 100, 0x64400000u, &dsts[i]); /* 100.64/10 up */
		if (!g || lk_add(tab, g)) {
			free(g);
			free(dsts);
			goto nomem;
		}
	}
	struct sw_flow *miss = sw_flow_alloc(1);
	if (!miss || lk_add(tab, miss)) {
		free(miss);
		free(dsts);
		goto nomem;
	}
	uint64_t r = 88172645463325252ull;
	for (unsigned i = 0; i < nmiss; i++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		uint32_t j = (uint32_t)(r % nbig);
		ip4_key(&keys[i], dsts[j] + (uint32_t)(r >> 40) % 32); /* inside flow j's prefix */
		keys[i].tp_src = (uint16_t)(r >> 20);
		want[i] = tab->all[j];
	}
	free(dsts);
	qsort(tab->sorted, tab->n, sizeof(*tab->sorted), by_prio);
	sw_table_rerank(tab->t);
	lk_case(opts, "100k_10masks_emc_hit", tab, keys, want, 4096, true);
	lk_case(opts, "100k_10masks_50k_keys", tab, keys, want, nmiss / 10, false);
	lk_case(opts, "100k_10masks_emc_miss", tab, keys, want, nmiss, false);
	/* churn */
	struct rf_bench_thread *th = rf_bench_thread_start(opts->cpu[1], churner, tab);
	if (th) {
		struct lk_arg ch = {tab, keys, want, 4096, LK_EMC, true}, quiet = ch;
		quiet.churn = false;
		struct rf_bench_impl impls[] = {{"ringflow", lk_sample, &ch},
						{"no_churn", lk_sample, &quiet}};
		rf_bench_case(opts, "switch-lookup", "100k_10masks_churn10k", "Mlookup/s",
			      RF_HIGHER_IS_BETTER, impls, 2);
		atomic_store(&churn_stop, true);
		rf_qsbr_offline();
		rf_bench_thread_join(th);
		rf_qsbr_online();
	} else {
		rf_bench_note("churn case not run: no writer thread");
	}
	lk_table_free(tab);
	tab = NULL;
	rf_bench_note("one reader thread on --cpus A%s; every answer checked (%u wrong)",
		      th ? ", the churn writer on --cpus B" : "", atomic_load(&lk_bad));
	rf_bench_note("linear_scan: the design before tuple-space search (priority-sorted array, "
		      "first match wins)");
	rf_bench_print_table(opts, "switch-lookup");
	if (atomic_load(&lk_bad))
		rc = 1;
	goto out;
nomem:
	fprintf(stderr, "ringflow-bench switch-lookup: out of memory building the tables\n");
	rc = 1;
	lk_table_free(tab);
out:
	free(keys);
	free(want);
	rf_qsbr_unregister();
	return rc;
}

static void lk_help(FILE *out)
{
	fprintf(out, "cases: 1flow 1k_exact 100k_10masks_emc_hit 100k_10masks_50k_keys "
		     "100k_10masks_emc_miss 100k_10masks_churn10k\n"
		     "impls: ringflow (EMC, megaflow cache, tuple-space search), tss_only, "
		     "linear_scan (the old design); churn: ringflow vs no_churn\n"
		     "unit:  million lookups per second, one thread\n");
}

RF_BENCH_COMMAND("switch-lookup", "ringflow-switch flow lookup: EMC + tuple-space search",
		 lk_run, lk_help)
