/*
 * tests/ofswitch/test_sw_pipe_concurrent.c: the pipeline's lookups (a table other than 0,
 * with metadata; table 0 through the EMC) under a writer that adds and removes flows of
 * several tables and metadata matches at once (issue 25).
 *
 * Table 1 holds one floor flow per metadata value 0..3 (metadata exact, any key, priority 1)
 * that is never removed; the writer (the agent's role) adds and removes flows in tables 0, 1
 * and 2 with metadata exact or masked and keys on in_port, retiring and reclaiming them in
 * batches as sw_agent.c does. Readers (the pollers' role: QSBR-registered, their own core
 * index, a quiescent state every few lookups) look keys up in table 1 with each metadata
 * value and in table 0 (the EMC). Every answer must be a live flow (the destructor poisons a
 * flow after its grace period) of the table asked, whose metadata match takes the metadata
 * asked and whose match takes the key; table 1 must never answer "none" (its floor flows are
 * always there). The counts of checked lookups add up.
 */
#include "rf_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"

#ifdef RF_TEST_STANDALONE
#define NOPS 4000 /* TSan: about ten times slower */
#else
#define NOPS 20000
#endif
#define READERS 2
#define MAX_LIVE 32
#define DEAD 0xdeaddeaddeaddeadull

static struct sw_table *table;
static atomic_bool writer_done;
static _Atomic uint64_t bad, checked[READERS], misses;

static void poison(struct sw_flow *f, void *arg)
{
	(void)arg;
	f->cookie = DEAD; /* after its grace period: no reader may still hold it */
	f->table_id = 0xee;
}

static struct sw_flow *mk(uint8_t tbl, uint64_t md, uint64_t mdm, uint32_t in_port,
			  uint16_t prio)
{
	struct sw_flow *f = sw_flow_alloc(READERS);
	cr_assert_not_null(f);
	if (in_port) {
		f->match.in_port = in_port;
		f->mask.in_port = UINT32_MAX;
	}
	f->table_id = tbl;
	f->md = md;
	f->md_mask = mdm;
	f->priority = prio;
	f->cookie = (uint64_t)tbl << 32 | prio;
	struct sw_actions *a = calloc(1, sizeof(*a));
	cr_assert_not_null(a);
	atomic_init(&f->actions, a);
	return f;
}

static void *writer(void *arg)
{
	(void)arg;
	rf_qsbr_register();
	struct sw_flow *live[MAX_LIVE] = {0};
	uint64_t rng = 0x12345678u, now = 0;
	for (unsigned op = 0; op < NOPS; op++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		unsigned i = (unsigned)(rng % MAX_LIVE);
		if (live[i]) {
			sw_table_remove(table, live[i]);
			sw_table_retire(table, atomic_load_explicit(&live[i]->actions,
								    memory_order_relaxed),
					SW_RETIRE_FREE);
			sw_table_retire(table, live[i], SW_RETIRE_FLOW);
			live[i] = NULL;
		} else {
			uint8_t tbl = (uint8_t)(rng >> 8 & 3) % 3;
			bool masked = rng >> 12 & 1;
			uint64_t mdm = masked ? 0x1 : ~0ull, md = (rng >> 16 & 3) & mdm;
			/* the slot decides priority and port, so no two live flows share an identity */
			struct sw_flow *f = mk(tbl, md, mdm, 1 + i % 3, (uint16_t)(2 + i));
			if (sw_table_add(table, f) == 0) {
				live[i] = f;
			} else {
				free(atomic_load_explicit(&f->actions, memory_order_relaxed));
				free(f);
			}
		}
		now += 500000; /* a reclaim every few ops, as the agent's timer */
		sw_table_reclaim(table, now, false);
		if (op % 512 == 0)
			sw_table_rerank(table);
	}
	for (unsigned i = 0; i < MAX_LIVE; i++)
		if (live[i]) {
			sw_table_remove(table, live[i]);
			sw_table_retire(table, atomic_load_explicit(&live[i]->actions,
								    memory_order_relaxed),
					SW_RETIRE_FREE);
			sw_table_retire(table, live[i], SW_RETIRE_FLOW);
		}
	atomic_store_explicit(&writer_done, true, memory_order_release);
	sw_table_reclaim(table, 0, true);
	rf_qsbr_unregister();
	return NULL;
}

static void check(const struct sw_flow *f, unsigned tbl, uint64_t md, const struct sw_key *k)
{
	bool ok = f->cookie != DEAD && f->table_id == tbl && (md & f->md_mask) == f->md &&
		  sw_flow_matches(f, k);
	if (!ok)
		atomic_fetch_add_explicit(&bad, 1, memory_order_relaxed);
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	rf_qsbr_register();
	uint64_t n = 0;
	uint32_t rng = 0x9e3779b9u * (id + 1);
	/* acquire: pairs with the writer's release at its end */
	while (!atomic_load_explicit(&writer_done, memory_order_acquire)) {
		for (unsigned j = 0; j < 16; j++) {
			rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
			struct sw_key k;
			memset(&k, 0, sizeof(k));
			k.in_port = 1 + rng % 4;
			uint64_t md = rng >> 8 & 3;
			struct sw_flow *f = sw_table_lookup_md(table, id, 1, md, &k);
			if (!f)
				atomic_fetch_add_explicit(&misses, 1, memory_order_relaxed);
			else
				check(f, 1, md, &k);
			f = sw_table_lookup(table, id, &k); /* table 0, the EMC */
			if (f)
				check(f, 0, 0, &k);
			n++;
		}
		rf_qsbr_quiescent();
	}
	atomic_store_explicit(&checked[id], n, memory_order_relaxed);
	rf_qsbr_unregister();
	return NULL;
}

Test(sw_pipe_concurrent, later_tables_answer_right_under_churn)
{
	rf_qsbr_register();
	table = sw_table_create(READERS);
	cr_assert_not_null(table);
	sw_table_set_flow_dtor(table, poison, NULL);
	struct sw_flow *floor[4];
	for (unsigned m = 0; m < 4; m++) {
		floor[m] = mk(1, m, ~0ull, 0, 1);
		cr_assert_eq(sw_table_add(table, floor[m]), 0);
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
	cr_assert_eq(atomic_load(&bad), 0, "%lu answers of a wrong table, metadata or key, or freed",
		     (unsigned long)atomic_load(&bad));
	cr_assert_eq(atomic_load(&misses), 0, "table 1 answered none %lu times",
		     (unsigned long)atomic_load(&misses));
	uint64_t total = 0;
	for (unsigned r = 0; r < READERS; r++)
		total += atomic_load(&checked[r]);
	cr_assert_gt(total, 0, "the readers ran");
	for (unsigned m = 0; m < 4; m++) {
		sw_table_remove(table, floor[m]);
		sw_table_retire(table, atomic_load_explicit(&floor[m]->actions, memory_order_relaxed),
				SW_RETIRE_FREE);
		sw_table_retire(table, floor[m], SW_RETIRE_FLOW);
	}
	sw_table_reclaim(table, 0, true);
	sw_table_free(table);
	rf_qsbr_unregister();
}
