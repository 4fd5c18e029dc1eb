/*
 * tests/ofswitch/sw_pipe_bed.h: one poller's datapath over a real sw_table, for the pipeline's
 * tests (test_sw_pipe.c, test_sw_outcome.c) and test_sw_actions.c's sw_apply: a dp with three
 * ports and a pool, flows added and removed as the agent does (decoded, checked, their
 * programs stamped), and run(), what sw_dp_poll does with one frame. Frames sent stay in
 * core->tx until release_all(), which also checks that no buffer was lost.
 */
#ifndef RINGFLOW_TESTS_SW_PIPE_BED_H
#define RINGFLOW_TESTS_SW_PIPE_BED_H

#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/ring.h>

#include "sw.h"
#include "sw_group.h"

static struct sw_dp dp; /* large */
static struct sw_core *core;
static struct sw_table *table;
static unsigned pool_full;
static struct sw_flow *flows[1024];
static unsigned nflows;

static inline void pipe_setup(void)
{
	rf_qsbr_register();
	memset(&dp, 0, sizeof(dp));
	dp.nports = 3;
	dp.pool = rf_pktbuf_pool_create("sw_pipe_test", 64, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(dp.pool);
	dp.to_ctl = rf_ring_create("sw_pipe_to_ctl", 16, RF_RING_SC_DEQ);
	cr_assert_not_null(dp.to_ctl);
	core = &dp.cores[0];
	core->dp = &dp;
	pool_full = rf_pktbuf_pool_avail(dp.pool);
	table = sw_table_create(1);
	cr_assert_not_null(table);
	nflows = 0;
}

static inline void pipe_teardown(void)
{
	for (unsigned i = 0; i < nflows; i++) {
		if (!flows[i])
			continue;
		sw_table_remove(table, flows[i]);
		sw_table_retire(table, atomic_load_explicit(&flows[i]->actions, memory_order_relaxed),
				SW_RETIRE_FREE);
		sw_table_retire(table, flows[i], SW_RETIRE_FLOW);
	}
	sw_table_reclaim(table, 0, true);
	sw_table_free(table);
	void *b;
	while (rf_ring_dequeue_burst(dp.to_ctl, &b, 1, NULL) == 1)
		rf_pktbuf_free(b);
	rf_ring_free(dp.to_ctl);
	sw_groups_free(dp.groups); /* NULL: nothing */
	rf_pktbuf_pool_free(dp.pool);
	rf_qsbr_unregister();
}

/* A flow in table tbl: match m (and metadata md/mdm), priority, apply-actions a, the other
 * instructions in; decoded and checked as the agent does. */
static inline struct sw_flow *add(uint8_t tbl, const struct of_match *m, uint16_t prio,
			   const struct of_actions *a, const struct of_insts *in)
{
	struct of_flow_mod fm = {.table_id = tbl, .priority = prio};
	if (m)
		fm.match = *m;
	if (a)
		fm.actions = *a;
	if (in)
		fm.inst = *in;
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&fm.match, dp.nports, &ctx);
	ctx.groups = dp.groups; /* NULL unless a test made a group table */
	struct sw_actions *p = malloc(sizeof(*p));
	cr_assert_not_null(p);
	uint16_t et, ec;
	cr_assert_eq(sw_actions_decode(&fm.actions, &ctx, p, &et, &ec), 0);
	cr_assert_eq(sw_pipe_check(&fm, dp.nports, dp.groups, p, &et, &ec), 0, "error %u/%u", et, ec);
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert_not_null(f);
	sw_key_of_match(&fm.match, &f->match, &f->mask);
	f->fields = fm.match.fields;
	f->priority = prio;
	f->cookie = 0xc0000 + nflows;
	sw_pipe_flow_init(f, &fm);
	sw_actions_stamp(p); /* a flow's program, as the agent publishes it */
	atomic_init(&f->actions, p);
	cr_assert_eq(sw_table_add(table, f), 0);
	flows[nflows++] = f;
	return f;
}

static inline void del(struct sw_flow *f)
{
	for (unsigned i = 0; i < nflows; i++)
		if (flows[i] == f)
			flows[i] = NULL;
	sw_table_remove(table, f);
	sw_table_retire(table, atomic_load_explicit(&f->actions, memory_order_relaxed),
			SW_RETIRE_FREE);
	sw_table_retire(table, f, SW_RETIRE_FLOW);
}

/* What sw_dp_poll does with one frame from port index in. */
static inline void run(const uint8_t *fr, uint32_t n, unsigned in)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(dp.pool);
	cr_assert_not_null(b);
	memcpy(rf_pktbuf_data(b), fr, n);
	b->data_len = n;
	struct sw_key k;
	cr_assert_eq(sw_key_parse(rf_pktbuf_data(b), n, in + 1, &k), 0);
	struct sw_flow *f = sw_table_lookup(table, 0, &k);
	if (!f) {
		rf_pktbuf_free(b);
		return;
	}
	const struct sw_actions *acts = atomic_load_explicit(&f->actions, memory_order_acquire);
	if (sw_actions_pipeline(acts))
		sw_pipe_run(core, table, b, (int)in, &k, f, acts);
	else
		sw_dp_apply(core, b, (int)in, acts, f);
	rf_qsbr_quiescent();
}

static inline void release_all(void)
{
	for (unsigned pi = 0; pi < dp.nports; pi++) {
		rf_pktbuf_free_bulk(core->tx[pi], core->ntx[pi]);
		core->ntx[pi] = 0;
	}
	void *b;
	while (rf_ring_dequeue_burst(dp.to_ctl, &b, 1, NULL) == 1)
		rf_pktbuf_free(b);
	cr_assert_eq(rf_pktbuf_pool_avail(dp.pool), pool_full, "a buffer was lost or freed twice");
}

static inline struct of_match in_port(uint32_t p)
{
	struct of_match m = {.fields = OF_MATCH_IN_PORT, .in_port = p};
	return m;
}

static inline struct of_match md_match(uint64_t v, uint64_t mk)
{
	struct of_match m = {.has_metadata = true, .metadata = v, .metadata_mask = mk};
	return m;
}

static inline struct of_actions out_to(uint32_t port)
{
	struct of_actions a = {0};
	of_act_output(&a, port, 0xffff);
	return a;
}

#endif
