/*
 * tests/ofswitch/test_sw_concurrent.c: the switch's flow table changed in place under
 * readers. One writer thread (the agent's role) adds, replaces and deletes flows over four
 * masks with few priorities (chains, ties, subtables coming and going), retires what it
 * removes and reclaims it in batches, as sw_agent.c does. Reader threads (the pollers'
 * role: QSBR-registered, each with its own core index and EMC, a quiescent state every few
 * lookups) look random keys up and log (key, answer, the writer's op numbers before and after).
 *
 * Checked afterwards by replaying the writer's history: every answer is a flow that was in
 * the table at some moment during its lookup and matches the key, and no flow that was in
 * the table during the whole lookup and matches has a higher priority (a "none" answer: no
 * such flow at all). Counts add up: each flow's per-core counters (bumped by the readers as
 * the datapath does, read by a destructor after the flow's grace period or at the end) equal
 * the readers' own tally of that flow. A flow is poisoned before it is freed and readers
 * check the poison, so a free while in use shows as a failed check (and under ASan/TSan as
 * a use after free or a race).
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringflow/qsbr.h>

#include "sw.h"

#define NKEYS 16
#define NMASKS 4
#define MAX_LIVE 48
#ifdef RF_TEST_STANDALONE
#define NOPS 6000 /* TSan: about ten times slower */
#else
#define NOPS 30000
#endif
#define READERS 2
#define LOG_CAP (1u << 22) /* lookups logged per reader */
#define DEAD 0xdeaddeaddeaddeadull
#define NONE UINT32_MAX

struct rec { /* one flow the writer ever made: cookie = its index */
	struct sw_key match, mask;
	uint16_t prio;
	uint32_t add_seq, rm_seq; /* in the table in states add_seq .. rm_seq - 1 */
};

struct logent {
	uint32_t key, id, t0, t1;
};

static struct sw_table *table;
static struct rec recs[NOPS + 1];
static uint32_t add_at[NOPS + 1], rm_at[NOPS + 1][2]; /* what op s added / removed */
static _Atomic uint32_t started, done; /* the writer's op numbers */
static atomic_bool writer_done;
static _Atomic uint64_t bad_poison, writer_errors;
static uint64_t final_pkts[NOPS + 1]; /* by the destructor (writer) or at the end (main) */
static uint32_t tally[READERS][NOPS + 1];
static struct logent *logs[READERS];
static uint32_t nlog[READERS];
static uint64_t lookups[READERS], hits[READERS];

static void key_of(unsigned i, struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1 + (i & 3);
	k->eth_dst[0] = 2;
	k->eth_dst[5] = (uint8_t)(i >> 2);
}

static void mask_of(unsigned m, struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	if (m & 1)
		k->in_port = 0xffffffffu;
	if (m & 2)
		memset(k->eth_dst, 0xff, 6);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* After a flow's grace period (writer thread): its final counts, then the poison. */
static void dtor(struct sw_flow *f, void *arg)
{
	(void)arg;
	uint64_t p, b;
	sw_flow_counts(f, &p, &b);
	final_pkts[f->cookie] = p;
	f->cookie = DEAD;
}

static void *writer(void *arg)
{
	(void)arg;
	rf_qsbr_register();
	uint64_t rng = 12345;
	struct sw_flow *live[MAX_LIVE];
	unsigned n = 0;
	for (uint32_t s = 1; s <= NOPS; s++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		/* release: a reader that sees any effect of op s loads started >= s after it */
		atomic_store_explicit(&started, s, memory_order_release);
		add_at[s] = NONE;
		rm_at[s][0] = rm_at[s][1] = NONE;
		if (n < MAX_LIVE && (rng >> 20) % 100 < 55) {
			struct rec *r = &recs[s];
			struct sw_key k;
			key_of((unsigned)(rng >> 8) % NKEYS, &k);
			mask_of((unsigned)(rng >> 16) % NMASKS, &r->mask);
			for (unsigned i = 0; i < sizeof(k); i++)
				((uint8_t *)&r->match)[i] = ((uint8_t *)&k)[i] & ((uint8_t *)&r->mask)[i];
			r->prio = (uint16_t)((rng >> 40) % 6);
			r->add_seq = s;
			r->rm_seq = UINT32_MAX;
			struct sw_flow *f = sw_flow_alloc(READERS);
			if (!f) {
				atomic_fetch_add(&writer_errors, 1);
				break;
			}
			f->match = r->match;
			f->mask = r->mask;
			f->priority = r->prio;
			f->cookie = s;
			for (unsigned i = 0; i < n; i++) { /* an ADD replaces the identical flow */
				struct sw_flow *g = live[i];
				if (g->priority == f->priority && !memcmp(&g->mask, &f->mask, sizeof(f->mask)) &&
				    !memcmp(&g->match, &f->match, sizeof(f->match))) {
					sw_table_remove(table, g);
					recs[g->cookie].rm_seq = s;
					rm_at[s][0] = (uint32_t)g->cookie;
					sw_table_retire(table, g, SW_RETIRE_FLOW);
					live[i] = live[--n];
					break;
				}
			}
			if (sw_table_add(table, f) != 0) {
				atomic_fetch_add(&writer_errors, 1);
				free(f);
				break;
			}
			add_at[s] = s;
			live[n++] = f;
		} else if (n) {
			unsigned i = (unsigned)(rng >> 24) % n;
			struct sw_flow *g = live[i];
			sw_table_remove(table, g);
			recs[g->cookie].rm_seq = s;
			rm_at[s][1] = (uint32_t)g->cookie;
			sw_table_retire(table, g, SW_RETIRE_FLOW);
			live[i] = live[--n];
		}
		/* release: pairs with the readers' acquire before a lookup: op s is complete */
		atomic_store_explicit(&done, s, memory_order_release);
		sw_table_reclaim(table, now_ns(), false);
		if (s % 1000 == 0)
			sw_table_rerank(table);
	}
	atomic_store_explicit(&writer_done, true, memory_order_release);
	/* Flows still in: their counts once the readers are gone (main thread, after join). */
	rf_qsbr_unregister();
	return NULL;
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	rf_qsbr_register();
	uint64_t rng = 777 + id;
	struct sw_key keys[NKEYS];
	for (unsigned i = 0; i < NKEYS; i++)
		key_of(i, &keys[i]);
	/* acquire: pairs with the writer's final release (every op is done) */
	while (!atomic_load_explicit(&writer_done, memory_order_acquire)) {
		for (unsigned round = 0; round < 16; round++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			unsigned k = (unsigned)(rng >> 11) % NKEYS;
			/* acquire: pairs with the writer's release of done: ops <= t0 are complete */
			uint32_t t0 = atomic_load_explicit(&done, memory_order_acquire);
			struct sw_flow *f = sw_table_lookup(table, id, &keys[k]);
			uint32_t fid = NONE;
			if (f) {
				uint64_t c = f->cookie;
				if (c == DEAD || c == 0 || c > NOPS) {
					atomic_fetch_add(&bad_poison, 1);
				} else {
					fid = (uint32_t)c;
					/* relaxed: this core's own line, as the datapath counts */
					atomic_fetch_add_explicit(&f->ctr[id].pkts, 1, memory_order_relaxed);
					tally[id][fid]++;
					hits[id]++;
				}
			}
			/* acquire: after the lookup's loads (see the writer's release of started) */
			uint32_t t1 = atomic_load_explicit(&started, memory_order_acquire);
			lookups[id]++;
			if (nlog[id] < LOG_CAP)
				logs[id][nlog[id]++] = (struct logent){k, fid, t0, t1};
		}
		rf_qsbr_quiescent(); /* the end of a poll round */
	}
	rf_qsbr_unregister();
	return NULL;
}

/* The flows in the table in state s (after op s), kept as the replay moves forward. */
struct live {
	uint32_t id[NOPS + 1];
	unsigned n;
	uint32_t at; /* state */
};

static void advance(struct live *l, uint32_t to)
{
	while (l->at < to) {
		uint32_t s = ++l->at;
		for (unsigned j = 0; j < 2; j++)
			if (rm_at[s][j] != NONE)
				for (unsigned i = 0; i < l->n; i++)
					if (l->id[i] == rm_at[s][j]) {
						l->id[i] = l->id[--l->n];
						break;
					}
		if (add_at[s] != NONE)
			l->id[l->n++] = add_at[s];
	}
}

static bool matches(const struct rec *r, const struct sw_key *k)
{
	const uint8_t *a = (const uint8_t *)k, *m = (const uint8_t *)&r->mask,
		      *v = (const uint8_t *)&r->match;
	for (size_t i = 0; i < sizeof(*k); i++)
		if ((a[i] & m[i]) != v[i])
			return false;
	return true;
}

Test(sw_concurrent, answers_valid_counts_add_up_under_churn)
{
	rf_qsbr_register();
	table = sw_table_create(READERS);
	cr_assert(table);
	sw_table_set_flow_dtor(table, dtor, NULL);
	for (unsigned r = 0; r < READERS; r++) {
		logs[r] = malloc(LOG_CAP * sizeof(struct logent));
		cr_assert(logs[r]);
	}
	rf_qsbr_offline(); /* the main thread waits below */
	pthread_t w, rd[READERS];
	for (unsigned r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&rd[r], NULL, reader, (void *)(uintptr_t)r), 0);
	cr_assert_eq(pthread_create(&w, NULL, writer, NULL), 0);
	pthread_join(w, NULL);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	rf_qsbr_online();
	cr_assert_eq(atomic_load(&bad_poison), 0, "a reader saw a freed (poisoned) flow");

	/* Counts: live flows' counters now; the others' were taken by the destructor. The
	 * retire list is flushed first (a grace period), so every removed flow is counted. */
	sw_table_reclaim(table, 0, true);
	cr_assert_eq(atomic_load(&writer_errors), 0, "the writer failed an add or an allocation");
	struct sw_key keys[NKEYS];
	for (unsigned i = 0; i < NKEYS; i++)
		key_of(i, &keys[i]);

	/* Replay: each reader's log is in t0 order (done only grows). */
	uint64_t checked = 0, none = 0;
	static struct live l;
	for (unsigned r = 0; r < READERS; r++) {
		memset(&l, 0, sizeof(l));
		for (uint32_t i = 0; i < nlog[r]; i++) {
			const struct logent *e = &logs[r][i];
			cr_assert_leq(e->t0, e->t1);
			cr_assert_geq(e->t0, l.at, "t0 went backwards");
			advance(&l, e->t0);
			const struct sw_key *k = &keys[e->key];
			int need = -1; /* highest priority in the table throughout the lookup */
			for (unsigned j = 0; j < l.n; j++) {
				const struct rec *g = &recs[l.id[j]];
				if (g->rm_seq > e->t1 && matches(g, k) && g->prio > need)
					need = g->prio;
			}
			if (e->id == NONE) {
				cr_assert_eq(need, -1, "reader %u lookup %u: none answered, priority %d "
					     "was in throughout [%u, %u]", r, i, need, e->t0, e->t1);
				none++;
			} else {
				const struct rec *a = &recs[e->id];
				cr_assert(e->id <= NOPS && add_at[e->id] == e->id, "not a flow");
				cr_assert(a->add_seq <= e->t1 && a->rm_seq > e->t0,
					  "reader %u lookup %u: flow %u (in %u..%u) not in the table during "
					  "[%u, %u]", r, i, e->id, a->add_seq, a->rm_seq, e->t0, e->t1);
				cr_assert(matches(a, k), "the answer does not match the key");
				cr_assert_geq((int)a->prio, need, "priority %u answered, %d was in "
					      "throughout", a->prio, need);
			}
			checked++;
		}
	}
	cr_assert_gt(checked, 1000, "too few lookups to check (%llu)", (unsigned long long)checked);

	/* Final counts of the flows still in: walk the writer's history for them. */
	uint64_t sum_final = 0, sum_tally = 0;
	unsigned live_end = 0;
	for (uint32_t s = 1; s <= NOPS; s++) {
		if (add_at[s] == NONE)
			continue;
		uint64_t t = 0;
		for (unsigned r = 0; r < READERS; r++)
			t += tally[r][s];
		sum_tally += t;
		if (recs[s].rm_seq == UINT32_MAX) {
			live_end++;
			continue; /* checked through the table below */
		}
		cr_assert_eq(final_pkts[s], t, "flow %u: counters %llu, readers counted %llu", s,
			     (unsigned long long)final_pkts[s], (unsigned long long)t);
		sum_final += final_pkts[s];
	}
	cr_assert_eq(sw_table_nflows(table), live_end, "flow count after the churn");
	/* the live ones: lookups of every key reach only live flows; take their counts by
	 * removing and retiring them, which runs the destructor after a grace period */
	for (unsigned k = 0; k < NKEYS; k++) {
		struct sw_flow *f;
		while ((f = sw_table_classify(table, &keys[k])) != NULL) {
			uint32_t id = (uint32_t)f->cookie;
			cr_assert_eq(recs[id].rm_seq, UINT32_MAX, "a removed flow answers");
			recs[id].rm_seq = 0; /* counted below */
			sw_table_remove(table, f);
			sw_table_retire(table, f, SW_RETIRE_FLOW);
		}
	}
	sw_table_reclaim(table, 0, true);
	for (uint32_t s = 1; s <= NOPS; s++)
		if (add_at[s] != NONE && recs[s].rm_seq == 0) {
			uint64_t t = 0;
			for (unsigned r = 0; r < READERS; r++)
				t += tally[r][s];
			cr_assert_eq(final_pkts[s], t, "live flow %u: counters %llu, readers %llu", s,
				     (unsigned long long)final_pkts[s], (unsigned long long)t);
			sum_final += final_pkts[s];
		}
	cr_assert_eq(sw_table_nflows(table), 0, "a flow no key reaches was left (%u)",
		     sw_table_nflows(table));
	uint64_t h = 0;
	for (unsigned r = 0; r < READERS; r++)
		h += hits[r];
	cr_assert_eq(sum_final, h, "counters %llu, answers %llu", (unsigned long long)sum_final,
		     (unsigned long long)h);
	cr_assert_eq(sum_tally, h);
	cr_log_info("%llu lookups checked (%llu none), %u ops, %u flows left",
		    (unsigned long long)checked, (unsigned long long)none, NOPS, live_end);
	sw_table_free(table);
	for (unsigned r = 0; r < READERS; r++)
		free(logs[r]);
	rf_qsbr_unregister();
}
