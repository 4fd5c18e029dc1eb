/*
 * tests/ofswitch/test_sw_replace.c: an OpenFlow ADD over an identical flow replaces it in
 * place (sw_table_replace; issue 25: it used to be a remove then an add, and lookups between
 * the two fell to the table-miss flow).
 *
 * The unit test checks what a replace keeps (flow and subtable counts, the answer, a flow
 * below the head) and that the replaced flow is freed after its grace period. The concurrent
 * one has a writer replace the flow a key hits, and the flow below it on the same chain,
 * REPLACES times while reader threads (pollers: own EMC, quiescent states) look the key up
 * and count per flow: no lookup may answer the flow below, the table-miss flow or nothing
 * (remove-then-add did: 700K such lookups in one run, checked by hand), and each flow's
 * counters (read by the destructor after its grace period) must equal the readers' tally.
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"

#define READERS 2
#ifdef RF_TEST_STANDALONE
#define REPLACES 4000 /* TSan: about ten times slower */
#else
#define REPLACES 20000
#endif
#define MISS 1u     /* cookie of the table-miss flow */
#define HEAD 1000u  /* + i: the i-th version of the flow the key hits (priority 10) */
#define BELOW 2u    /* cookie of the versions of the flow below it (priority 5) */
#define NCOOKIES (HEAD + REPLACES + 1)

static struct sw_table *table;
static atomic_bool writer_done;
static _Atomic uint64_t misses, wrong, freed_pkts, freed_flows;
static uint64_t tally[READERS][NCOOKIES];
static _Atomic uint64_t rounds[READERS]; /* each reader's rounds of lookups so far */

/* Until every reader has done a round since *seen (so the replaces and the lookups really
 * interleave, however the threads are scheduled); quiescent meanwhile. */
static void wait_readers(uint64_t *seen)
{
	for (unsigned r = 0; r < READERS; r++) {
		uint64_t n;
		/* relaxed: a count; nothing is published through it */
		while ((n = atomic_load_explicit(&rounds[r], memory_order_relaxed)) == seen[r])
			rf_qsbr_quiescent();
		seen[r] = n;
	}
}

static struct sw_flow *flow(const struct sw_key *match, const struct sw_key *mask, uint16_t prio,
			    uint64_t cookie)
{
	struct sw_flow *f = sw_flow_alloc(READERS);
	if (!f)
		return NULL;
	f->mask = *mask;
	for (size_t i = 0; i < sizeof(f->match); i++)
		((uint8_t *)&f->match)[i] = ((const uint8_t *)match)[i] & ((const uint8_t *)mask)[i];
	f->priority = prio;
	f->cookie = cookie;
	return f;
}

static void key_of(struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	k->eth_type = 0x0800;
}

static void mask_port(struct sw_key *m)
{
	memset(m, 0, sizeof(*m));
	m->in_port = 0xffffffffu;
}

/* After a flow's grace period: its counts go to the total of freed flows (writer thread). */
static void dtor(struct sw_flow *f, void *arg)
{
	(void)arg;
	uint64_t p, b;
	sw_flow_counts(f, &p, &b);
	atomic_fetch_add(&freed_pkts, p);
	atomic_fetch_add(&freed_flows, 1);
}

Test(sw_replace, keeps_counts_answer_and_chain)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	sw_table_set_flow_dtor(t, dtor, NULL);
	struct sw_key k, m, none;
	key_of(&k);
	mask_port(&m);
	memset(&none, 0, sizeof(none));
	struct sw_flow *miss = flow(&k, &none, 0, MISS), *hi = flow(&k, &m, 10, HEAD),
		       *lo = flow(&k, &m, 5, BELOW);
	cr_assert(miss && hi && lo);
	cr_assert_eq(sw_table_add(t, miss), 0);
	cr_assert_eq(sw_table_add(t, hi), 0);
	cr_assert_eq(sw_table_add(t, lo), 0);
	cr_assert_eq(sw_table_lookup(t, 0, &k), hi);
	struct sw_flow *hi2 = flow(&k, &m, 10, HEAD + 1), *lo2 = flow(&k, &m, 5, BELOW);
	cr_assert(hi2 && lo2);
	sw_table_replace(t, lo, lo2); /* below the head: the answer stays hi */
	cr_assert_eq(sw_table_lookup(t, 0, &k), hi);
	sw_table_replace(t, hi, hi2);
	cr_assert_eq(sw_table_lookup(t, 0, &k), hi2, "the cached answer moved to the new flow");
	cr_assert_eq(sw_table_classify(t, &k), hi2);
	cr_assert_eq(sw_table_nflows(t), 3);
	cr_assert_eq(sw_table_nsubtables(t), 2);
	sw_table_remove(t, hi2); /* the chain below it is the replaced one's */
	sw_table_retire(t, hi2, SW_RETIRE_FLOW);
	cr_assert_eq(sw_table_lookup(t, 0, &k), lo2);
	sw_table_remove(t, lo2);
	sw_table_retire(t, lo2, SW_RETIRE_FLOW);
	cr_assert_eq(sw_table_lookup(t, 0, &k), miss);
	sw_table_reclaim(t, 0, true);
	cr_assert_eq(atomic_load(&freed_flows), 4, "replaced and removed flows are freed");
	cr_assert_eq(sw_table_nflows(t), 1);
	sw_table_remove(t, miss);
	sw_table_retire(t, miss, SW_RETIRE_FLOW);
	sw_table_reclaim(t, 0, true);
	sw_table_free(t);
	rf_qsbr_unregister();
}

static void *writer(void *arg)
{
	struct sw_flow **cur = arg; /* [0]: the head, [1]: the one below */
	rf_qsbr_register();
	struct sw_key k, m;
	key_of(&k);
	mask_port(&m);
	uint64_t seen[READERS] = {0};
	for (uint32_t i = 1; i <= REPLACES; i++) {
		if (i % 64 == 1)
			wait_readers(seen);
		bool below = i % 4 == 0;
		struct sw_flow *f = below ? flow(&k, &m, 5, BELOW) : flow(&k, &m, 10, HEAD + i);
		if (!f) {
			atomic_fetch_add(&wrong, 1);
			break;
		}
		sw_table_replace(table, cur[below], f);
		cur[below] = f;
		sw_table_reclaim(table, (uint64_t)i * 100000u, false); /* a grace period every 20 */
	}
	/* release: pairs with the readers' acquire: they stop */
	atomic_store_explicit(&writer_done, true, memory_order_release);
	rf_qsbr_unregister();
	return NULL;
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	rf_qsbr_register();
	struct sw_key k;
	key_of(&k);
	/* acquire: pairs with the writer's release when it is done */
	while (!atomic_load_explicit(&writer_done, memory_order_acquire)) {
		for (unsigned r = 0; r < 16; r++) {
			struct sw_flow *f = sw_table_lookup(table, id, &k);
			uint64_t c = f ? f->cookie : 0;
			if (c == MISS || c == 0 || c == BELOW) { /* fell below the replaced flow */
				atomic_fetch_add(&misses, 1);
			} else if (c < HEAD || c >= NCOOKIES) {
				atomic_fetch_add(&wrong, 1);
			} else {
				/* relaxed: this core's own line, as the datapath counts */
				atomic_fetch_add_explicit(&f->ctr[id].pkts, 1, memory_order_relaxed);
				tally[id][c]++;
			}
		}
		atomic_fetch_add_explicit(&rounds[id], 1, memory_order_relaxed); /* a count */
		rf_qsbr_quiescent();
	}
	rf_qsbr_unregister();
	return NULL;
}

Test(sw_replace, replacing_under_lookups_never_misses)
{
	rf_qsbr_register();
	table = sw_table_create(READERS);
	cr_assert(table);
	sw_table_set_flow_dtor(table, dtor, NULL);
	atomic_store(&freed_pkts, 0);
	atomic_store(&freed_flows, 0);
	struct sw_key k, m, none;
	key_of(&k);
	mask_port(&m);
	memset(&none, 0, sizeof(none));
	struct sw_flow *miss = flow(&k, &none, 0, MISS);
	struct sw_flow *cur[2] = {flow(&k, &m, 10, HEAD), flow(&k, &m, 5, BELOW)};
	cr_assert(miss && cur[0] && cur[1]);
	cr_assert_eq(sw_table_add(table, miss), 0);
	cr_assert_eq(sw_table_add(table, cur[0]), 0);
	cr_assert_eq(sw_table_add(table, cur[1]), 0);
	rf_qsbr_offline(); /* the main thread only waits below */
	pthread_t w, rd[READERS];
	for (unsigned r = 0; r < READERS; r++)
		cr_assert_eq(pthread_create(&rd[r], NULL, reader, (void *)(uintptr_t)r), 0);
	cr_assert_eq(pthread_create(&w, NULL, writer, cur), 0);
	pthread_join(w, NULL);
	for (unsigned r = 0; r < READERS; r++)
		pthread_join(rd[r], NULL);
	rf_qsbr_online();
	cr_assert_eq(atomic_load(&wrong), 0, "an answer that was never in the table");
	cr_assert_eq(atomic_load(&misses), 0, "%llu lookups fell to the flow below or the table-miss flow",
		     (unsigned long long)atomic_load(&misses));
	cr_assert_eq(sw_table_nflows(table), 3);
	/* Counts: every version's counters equal the readers' tally (freed ones through the
	 * destructor, the last ones by removing them too). */
	uint64_t hits = 0, last = 0, lastp, b;
	for (unsigned r = 0; r < READERS; r++)
		for (uint32_t c = 0; c < NCOOKIES; c++)
			hits += tally[r][c];
	for (unsigned i = 0; i < 2; i++) {
		sw_flow_counts(cur[i], &lastp, &b);
		last += lastp;
	}
	sw_table_reclaim(table, 0, true);
	cr_assert_eq(atomic_load(&freed_flows), REPLACES, "every replaced version was freed");
	cr_assert_eq(atomic_load(&freed_pkts) + last, hits, "counters %llu + %llu, lookups %llu",
		     (unsigned long long)atomic_load(&freed_pkts), (unsigned long long)last,
		     (unsigned long long)hits);
	cr_assert_gt(hits, 0);
	cr_log_info("%u replaces, %llu lookups answered by the flow, none missed", REPLACES,
		    (unsigned long long)hits);
	struct sw_flow *all[3] = {miss, cur[0], cur[1]};
	for (unsigned i = 0; i < 3; i++) {
		sw_table_remove(table, all[i]);
		sw_table_retire(table, all[i], SW_RETIRE_FLOW);
	}
	sw_table_reclaim(table, 0, true);
	sw_table_free(table);
	rf_qsbr_unregister();
}
