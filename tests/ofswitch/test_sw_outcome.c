/*
 * tests/ofswitch/test_sw_outcome.c: the pipeline's outcome cache (sw_outcome.c, issue 25).
 *
 *   - a three-table pipeline (output copy, write_metadata, the action set) answered from
 *     the cache from the second frame on, with the same frames out, the same flow and
 *     table counters, and one fill;
 *   - what a cached program could not repeat is never cached (a rewrite before a goto, a
 *     meter after table 0, a controller output before the last table), and still runs;
 *   - it is a megaflow cache: ten microflows that no flow tells apart (IPv4 sources) make
 *     one fill and nine hits; an add that beats the cached answer reaches microflows the
 *     cache never saw; a flow on one source (a new subtable) splits the megaflow;
 *   - a differential run: random flows in four tables and random changes (adds that beat
 *     cached answers, deletes, MODIFYs of programs, in every table), and after each change
 *     every frame run warm (through whatever the caches hold) and cold (the core's caches
 *     forgotten): the frames out, the frames to the controller and every counter must be
 *     the same, byte for byte, and the cache must have answered a good share of the runs.
 *     Half the frames differ from the other half only in the IPv4 source, which no flow
 *     matches: they are answered by the megaflows the others made.
 */
#include "rf_test.h"

#include <string.h>

#include "sw_frames.h"
#include "sw_pipe_bed.h"

/* Table 2's program in these tests: eth_dst 02:00:00:00:00:42, the TTL decremented. */
static struct of_actions route_actions(void)
{
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 0x42};
	struct of_actions a = {0};
	of_act_set_mac(&a, OF_OXM_ETH_DST, dst);
	of_act_simple(&a, OF_ACT_DEC_NW_TTL, 0);
	return a;
}

/* Three tables: table 0 copies to port 3 and writes metadata 7, table 1 (metadata 7) writes
 * output 2 into the action set and goes on, table 2 sets eth_dst and decrements the TTL. */
static void three_tables(void)
{
	struct of_actions copy = out_to(3);
	struct of_insts g0 = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_METADATA,
			      .goto_table = 1, .metadata = 7, .metadata_mask = 0xff};
	struct of_match m = in_port(1);
	add(0, &m, 5, &copy, &g0);
	struct of_insts g1 = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_ACTIONS,
			      .goto_table = 2};
	of_act_output(&g1.write, 2, 0xffff);
	m = md_match(7, 0xff);
	add(1, &m, 5, NULL, &g1);
	struct of_actions a2 = route_actions();
	m = (struct of_match){.fields = OF_MATCH_ETH_TYPE, .eth_type = 0x0800};
	add(2, &m, 0, &a2, NULL);
}

Test(outcome, repeats_come_from_the_cache, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	three_tables();
	for (unsigned i = 0; i < 20; i++)
		run(fr, n, 0);
	cr_assert_eq(core->out_fills, 1, "one fill: %lu", (unsigned long)core->out_fills);
	cr_assert_eq(core->out_hits, 19, "19 hits: %lu", (unsigned long)core->out_hits);
	cr_assert_eq(core->ntx[2], 20, "each frame's copy to port 3");
	cr_assert_eq(core->ntx[1], 20, "and the action set's output to port 2");
	for (unsigned i = 0; i < 20; i++) {
		cr_assert_eq(core->tx[2][i]->data_len, n);
		cr_assert_arr_eq(rf_pktbuf_data(core->tx[2][i]), fr, n, "the copy left as it came");
		const uint8_t *d = rf_pktbuf_data(core->tx[1][i]);
		cr_assert_eq(d[5], 0x42, "eth_dst set");
		cr_assert_eq(d[14 + 8], 63, "TTL decremented once");
		cr_assert_arr_eq(d, rf_pktbuf_data(core->tx[1][0]), n, "the same bytes every time");
	}
	for (unsigned i = 1; i < nflows; i++) /* table 0's flow is sw_dp_poll's to count */
		cr_assert_eq(flows[i]->ctr[0].pkts, 20, "flow %u counted every frame", i);
	cr_assert_eq(core->tlookup[1], 20);
	cr_assert_eq(core->tmatch[1], 20);
	cr_assert_eq(core->tlookup[2], 20);
	cr_assert_eq(core->tmatch[2], 20);
	release_all();
}

/* fr's IPv4 source with last byte x (no flow of these tests matches the source: a new
 * microflow of the same megaflow), its checksums set again. */
static void set_src(uint8_t *fr, uint8_t x)
{
	fr[14 + 15] = x;
	frame_csums(fr);
}

/* Ten microflows from sources first..first+9 into port 1, through the three tables; checks
 * each frame's copy (as it came) and its action-set output (its own source, eth_dst set,
 * TTL 63), and returns how many went back out of port 1 too. */
static unsigned ten_sources(uint8_t first)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	for (unsigned i = 0; i < 10; i++) {
		set_src(fr, (uint8_t)(first + i));
		run(fr, n, 0);
		cr_assert_eq(core->ntx[2], i + 1);
		cr_assert_arr_eq(rf_pktbuf_data(core->tx[2][i]), fr, n, "the copy left as it came");
		const uint8_t *d = rf_pktbuf_data(core->tx[1][i]);
		cr_assert_eq(d[14 + 15], first + i, "its own source");
		cr_assert_eq(d[5], 0x42, "eth_dst set");
		cr_assert_eq(d[14 + 8], 63, "TTL decremented once");
	}
	unsigned to1 = core->ntx[0];
	release_all();
	return to1;
}

Test(outcome, a_microflow_never_seen_is_answered_by_its_megaflow, .init = pipe_setup,
     .fini = pipe_teardown)
{
	three_tables();
	cr_assert_eq(ten_sources(2), 0);
	cr_assert_eq(core->out_fills, 1, "one fill for ten sources: %lu",
		     (unsigned long)core->out_fills);
	cr_assert_eq(core->out_hits, 9, "nine hits: %lu", (unsigned long)core->out_hits);
	/* An add in a subtable already listed (table 2's eth_type) that beats the cached answer
	 * for every source, also those the cache has not seen: each takes it (the first
	 * table-2 flow's actions and a copy back to port 1, the in_port). */
	struct of_actions o = route_actions();
	of_act_output(&o, OFPP_IN_PORT, 0xffff);
	struct of_match m = {.fields = OF_MATCH_ETH_TYPE, .eth_type = 0x0800};
	add(2, &m, 5, &o, NULL);
	unsigned to1 = ten_sources(40);
	cr_assert_eq(to1, 10, "every new source took the new flow: %u", to1);
	uint64_t fills = core->out_fills;
	cr_assert_eq(ten_sources(60), 10);
	cr_assert_eq(core->out_fills, fills, "and its megaflow answered them");
	/* A flow on one source (a new subtable: the mask widens to the source) doing what the
	 * first table-2 flow does: that source alone loses the copy to port 1. */
	o = route_actions();
	m.fields |= OF_MATCH_IPV4_SRC;
	m.ipv4_src = 0xc0a80105u; /* 192.168.1.5 */
	add(2, &m, 9, &o, NULL);
	cr_assert_eq(ten_sources(2), 9, "every source but .5 still to port 1");
	release_all();
}

Test(outcome, what_it_cannot_repeat_is_not_cached, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	/* port 1: a rewrite before the goto; port 2: a controller output before it */
	static const uint8_t src[6] = {2, 0, 0, 0, 0, 0x55};
	struct of_actions rw = {0}, tc = out_to(OFPP_CONTROLLER);
	of_act_set_mac(&rw, OF_OXM_ETH_SRC, src);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	struct of_match m = in_port(1);
	add(0, &m, 5, &rw, &g);
	m = in_port(2);
	add(0, &m, 5, &tc, &g);
	struct of_actions o = out_to(3);
	add(1, NULL, 0, &o, NULL);
	for (unsigned i = 0; i < 5; i++) {
		run(fr, n, 0);
		run(fr, n, 1);
	}
	cr_assert_eq(core->out_fills, 0);
	cr_assert_eq(core->out_hits, 0);
	cr_assert_eq(core->ntx[2], 10, "every frame still forwarded");
	cr_assert_eq(memcmp((const uint8_t *)rf_pktbuf_data(core->tx[2][0]) + 6, src, 6), 0);
	release_all();
}

/* ---- the differential run ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (unsigned)(rng >> 11) % n;
}

/* A random program for a flow of table tbl (0..3); goto only to tbl + 1. */
static void random_prog(unsigned tbl, struct of_actions *a, struct of_insts *in)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 0x31};
	memset(a, 0, sizeof(*a));
	memset(in, 0, sizeof(*in));
	bool more = tbl < 3 && rnd(4) != 0;
	if (more) {
		in->present |= OF_INST_GOTO_TABLE;
		in->goto_table = (uint8_t)(tbl + 1);
	}
	switch (rnd(12)) {
	case 0: /* a plain copy */
		of_act_output(a, 1 + rnd(3), 0xffff);
		break;
	case 1: /* into the action set */
		in->present |= OF_INST_WRITE_ACTIONS;
		of_act_output(&in->write, 1 + rnd(3), 0xffff);
		if (rnd(2))
			of_act_simple(&in->write, OF_ACT_DEC_NW_TTL, 0);
		break;
	case 2:
		of_act_simple(a, OF_ACT_DEC_NW_TTL, 0);
		of_act_output(a, 1 + rnd(3), 0xffff);
		break;
	case 3:
		in->present |= OF_INST_WRITE_METADATA;
		in->metadata = rnd(3);
		in->metadata_mask = 0xff;
		break;
	case 4: /* a rewrite (before a goto: never cached) */
		of_act_set_mac(a, OF_OXM_ETH_SRC, mac);
		of_act_output(a, 1 + rnd(3), 0xffff);
		break;
	case 5:
		of_act_output(a, OFPP_CONTROLLER, 0xffff);
		break;
	case 6:
		in->present |= OF_INST_CLEAR_ACTIONS;
		break;
	default: /* nothing (5 in 12): the frame goes on or dies */
		break;
	}
}

/* A random match for table tbl, on IPv4 and: nothing more (at priority 0), an in_port, a
 * metadata value, the IP protocol or the IPv4 destination. */
static struct of_match random_match(unsigned tbl, uint16_t *prio)
{
	struct of_match m = {0};
	*prio = (uint16_t)(1 + rnd(40));
	switch (rnd(tbl ? 5 : 3)) {
	case 0:
		*prio = 0;
		break;
	case 1:
		m = in_port(1 + rnd(3));
		break;
	case 2:
		m.fields = OF_MATCH_IP_PROTO;
		m.ip_proto = rnd(2) ? 6 : 17;
		break;
	case 3:
		m = md_match(rnd(3), 0xff);
		break;
	default:
		m.fields = OF_MATCH_IPV4_DST;
		m.ipv4_dst = 0x0a00fe07u + rnd(2);
		break;
	}
	m.fields |= OF_MATCH_ETH_TYPE; /* IPv4 always: the TTL actions need it */
	m.eth_type = 0x0800;
	return m;
}

/* Every counter a run moves, in one array: each flow's (by its place in flows[]), each
 * table's lookups and matches, the core's drops and frames to the controller. */
#define NCTR (2 * 1024 + 2 * SW_N_TABLES + 4)
static void counters(uint64_t *c)
{
	memset(c, 0, NCTR * sizeof(*c));
	for (unsigned i = 0; i < nflows; i++)
		if (flows[i]) {
			c[2 * i] = flows[i]->ctr[0].pkts;
			c[2 * i + 1] = flows[i]->ctr[0].bytes;
		}
	for (unsigned t = 0; t < SW_N_TABLES; t++) {
		c[2048 + t] = core->tlookup[t];
		c[2048 + SW_N_TABLES + t] = core->tmatch[t];
	}
	uint64_t *d = &c[2048 + 2 * SW_N_TABLES];
	d[0] = core->drop_act, d[1] = core->act_skip, d[2] = core->drop_tx, d[3] = core->to_ctl;
}

/* Everything one run of a frame leaves behind, to compare: the frames out per port, the
 * frames to the controller (with their flow word and cookie), what every counter moved. */
struct trace {
	uint8_t bytes[16384];
	size_t n;
	uint64_t ctr[NCTR];
};

static void put(struct trace *t, const void *p, size_t n)
{
	cr_assert_leq(t->n + n, sizeof(t->bytes));
	memcpy(t->bytes + t->n, p, n);
	t->n += n;
}

static void run_traced(const uint8_t *fr, uint32_t n, unsigned in, struct trace *t)
{
	static uint64_t after[NCTR];
	counters(t->ctr);
	run(fr, n, in);
	counters(after);
	for (unsigned i = 0; i < NCTR; i++)
		t->ctr[i] = after[i] - t->ctr[i];
	t->n = 0;
	for (unsigned p = 0; p < dp.nports; p++) {
		put(t, &core->ntx[p], sizeof(core->ntx[p]));
		for (unsigned i = 0; i < core->ntx[p]; i++)
			put(t, rf_pktbuf_data(core->tx[p][i]), core->tx[p][i]->data_len);
	}
	void *x;
	while (rf_ring_dequeue_burst(dp.to_ctl, &x, 1, NULL) == 1) {
		struct rf_pktbuf *b = x;
		put(t, &b->flow, sizeof(b->flow));
		put(t, &b->timestamp_ns, sizeof(b->timestamp_ns));
		put(t, rf_pktbuf_data(b), b->data_len);
		rf_pktbuf_free(b);
	}
	release_all();
}

static void same(const struct trace *w, const struct trace *c, unsigned step, unsigned i,
		 const char *when)
{
	cr_assert_eq(w->n, c->n, "step %u frame %u %s: cached and uncached differ", step, i, when);
	cr_assert_arr_eq(w->bytes, c->bytes, w->n,
			 "step %u frame %u %s: cached and uncached send different frames", step, i,
			 when);
	cr_assert_arr_eq(w->ctr, c->ctr, sizeof(w->ctr),
			 "step %u frame %u %s: cached and uncached count differently", step, i, when);
}

/* A MODIFY, as the agent's: a new program (stamped) swapped in, the old one retired. */
static void modify(struct sw_flow *f, const struct of_actions *a, const struct of_insts *in)
{
	struct of_flow_mod fm = {.table_id = f->table_id, .priority = f->priority};
	fm.match.fields = OF_MATCH_ETH_TYPE; /* every flow here matches IPv4 (random_match) */
	fm.match.eth_type = 0x0800;
	fm.actions = *a;
	fm.inst = *in;
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&fm.match, dp.nports, &ctx);
	struct sw_actions *p = malloc(sizeof(*p));
	cr_assert_not_null(p);
	uint16_t et, ec;
	cr_assert_eq(sw_actions_decode(&fm.actions, &ctx, p, &et, &ec), 0);
	cr_assert_eq(sw_pipe_check(&fm, dp.nports, dp.groups, p, &et, &ec), 0);
	sw_actions_stamp(p);
	struct sw_actions *old = atomic_exchange(&f->actions, p);
	sw_table_retire(table, old, SW_RETIRE_FREE);
}

static void add_random(unsigned tbl)
{
	uint16_t prio;
	struct of_match m = random_match(tbl, &prio);
	struct of_actions a;
	struct of_insts in;
	random_prog(tbl, &a, &in);
	struct sw_key k, mk;
	sw_key_of_match(&m, &k, &mk);
	uint64_t mdm = m.has_metadata ? m.metadata_mask : 0;
	for (unsigned i = 0; i < nflows; i++) {
		if (!flows[i] || flows[i]->table_id != tbl || flows[i]->priority != prio)
			continue;
		if (!memcmp(&k, &flows[i]->match, sizeof(k)) &&
		    !memcmp(&mk, &flows[i]->mask, sizeof(mk)) && flows[i]->md_mask == mdm &&
		    flows[i]->md == (m.metadata & mdm))
			return modify(flows[i], &a, &in); /* the same flow: an ADD replaces */
		return; /* two overlapping flows of one priority: either may answer (OpenFlow
			   leaves it undefined), so none is added */
	}
	add((uint8_t)tbl, &m, prio, &a, &in);
}

Test(outcome, warm_runs_equal_cold_runs_through_every_change, .init = pipe_setup,
     .fini = pipe_teardown)
{
	enum { NF = 16 };
	uint8_t fr[NF][128];
	uint32_t len[NF];
	unsigned inp[NF];
	for (unsigned i = 0; i < NF; i++) { /* TCP and UDP, two destinations, from ports 1-3; */
		len[i] = frame(fr[i], i & 1 ? 6 : 17);
		fr[i][14 + 19] = (uint8_t)(7 + (i >> 1 & 1));
		if (i >= 8) /* frames 8-15 as 0-7 from another source, which no flow matches: */
			set_src(fr[i], 99); /* another microflow, the same megaflow */
		inp[i] = i % 3;
	}
	for (unsigned t = 0; t < 4; t++)
		for (unsigned i = 0; i < 4; i++)
			add_random(t);
	static struct trace warm[NF], cold[NF], again[NF];
	unsigned runs = 0;
	for (unsigned step = 0; step < 400; step++) {
		unsigned what = rnd(10), t = rnd(4);
		if (what < 5) {
			add_random(t);
		} else if (what < 8) {
			unsigned live = 0, pick;
			for (unsigned i = 0; i < nflows; i++)
				live += flows[i] != NULL;
			pick = live ? rnd(live) : 0;
			for (unsigned i = 0; i < nflows; i++)
				if (flows[i] && pick-- == 0) {
					del(flows[i]);
					break;
				}
		} else {
			for (unsigned i = 0; i < nflows; i++)
				if (flows[i] && rnd(8) == 0) {
					struct of_actions a;
					struct of_insts in;
					random_prog(flows[i]->table_id, &a, &in);
					modify(flows[i], &a, &in);
					break;
				}
		}
		if (nflows > 900)
			break;
		/* Warm: through whatever the caches kept from the last step's runs; then cold
		 * (every cache forgotten before each frame); then warm again (fills, and frames
		 * 8-15 answered by the megaflows frames 0-7 made). */
		for (unsigned i = 0; i < NF; i++)
			run_traced(fr[i], len[i], inp[i], &warm[i]);
		for (unsigned i = 0; i < NF; i++) {
			sw_table_cache_forget(table, 0);
			run_traced(fr[i], len[i], inp[i], &cold[i]);
		}
		for (unsigned i = 0; i < NF; i++)
			run_traced(fr[i], len[i], inp[i], &again[i]);
		for (unsigned i = 0; i < NF; i++) {
			same(&warm[i], &cold[i], step, i, "after the change");
			same(&again[i], &cold[i], step, i, "refilled");
		}
		runs += 2 * NF;
		sw_table_reclaim(table, 0, true);
	}
	cr_assert_gt(core->out_hits, runs / 8, "the cache answered %lu of %u warm runs",
		     (unsigned long)core->out_hits, runs);
	cr_assert_gt(core->out_fills, 20);
}
