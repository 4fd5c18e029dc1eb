/*
 * tests/ofswitch/test_sw_group.c: groups (issue 25), from the wire to the frame.
 *
 *   - parsing (of_group.c): a GROUP_MOD survives build -> parse unchanged; every lying
 *     length is its ERROR (BAD_LEN, BAD_BUCKET, OUT_OF_BUCKETS, an action's BAD_LEN), never a
 *     read past the message; the group multipart requests; the GROUP action round-trips;
 *   - GROUP_MOD's checks (sw_group.c): each GROUP_MOD_FAILED code, LOOP and chain length,
 *     a flow naming a missing group refused (BAD_OUT_GROUP), a refused change leaves the
 *     table as it was;
 *   - running (sw_group_dp.c through sw_dp_apply): all, indirect, select (weighted spread,
 *     one flow stays on one bucket, dead buckets skipped), fast failover on port down and
 *     on a watched group going dead, chaining; a deleted group's flows are orphaned (the
 *     cascade's test) and an old program meeting the new slot drops; counters and the
 *     multipart replies; no buffer lost.
 */
#include "rf_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>

#include "of_group.h"
#include "sw.h"
#include "sw_frames.h"
#include "sw_group.h"

/* ---- building GROUP_MODs ---- */

static struct of_group_mod gm; /* large */

static void gm_start(uint16_t cmd, uint8_t type, uint32_t id)
{
	memset(&gm, 0, sizeof(gm));
	gm.xid = 7;
	gm.command = cmd;
	gm.type = type;
	gm.group_id = id;
}

/* A bucket with weight w, watches wp/wg, output to port (0: none), then GROUP next (0: none). */
static void gm_bucket(uint16_t w, uint32_t wp, uint32_t wg, uint32_t port, uint32_t next)
{
	struct of_bucket *b = &gm.buckets[gm.nbuckets++];
	memset(b, 0, sizeof(*b));
	b->weight = w;
	b->watch_port = wp;
	b->watch_group = wg;
	if (port)
		of_act_output(&b->actions, port, 0);
	if (next)
		of_act_simple(&b->actions, OF_ACT_GROUP, next);
}

static uint8_t wire[OF_MAX_MSG_LEN];

Test(of_group, group_mod_round_trips)
{
	gm_start(OFPGC_ADD, OFPGT_SELECT, 42);
	gm_bucket(1, OFPP_ANY, OFPG_ANY, 2, 0);
	gm_bucket(2, 3, OFPG_ANY, 3, 0);
	of_act_set_field(&gm.buckets[1].actions, OF_OXM_IPV4_DST, 0x0a000001);
	gm_bucket(0, OFPP_ANY, 9, 0, 9);
	ssize_t n = of_group_mod_build(&gm, wire, sizeof(wire));
	cr_assert_gt(n, 16);
	static struct of_group_mod back;
	struct of_fault f;
	cr_assert_eq(of_group_mod_parse(wire, (size_t)n, &back, &f), 0, "%s", f.why);
	cr_assert_eq(back.command, OFPGC_ADD);
	cr_assert_eq(back.type, OFPGT_SELECT);
	cr_assert_eq(back.group_id, 42);
	cr_assert_eq(back.nbuckets, 3);
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(back.buckets[i].weight, gm.buckets[i].weight);
		cr_assert_eq(back.buckets[i].watch_port, gm.buckets[i].watch_port);
		cr_assert_eq(back.buckets[i].watch_group, gm.buckets[i].watch_group);
		cr_assert_eq(back.buckets[i].actions.n, gm.buckets[i].actions.n);
		cr_assert_eq(memcmp(back.buckets[i].actions.a, gm.buckets[i].actions.a,
				    gm.buckets[i].actions.n * sizeof(struct of_action)), 0);
	}
	uint8_t again[4096];
	cr_assert_eq(of_group_mod_build(&back, again, sizeof(again)), n);
	cr_assert_eq(memcmp(again, wire, (size_t)n), 0);
}

static void expect_fault(const uint8_t *b, size_t n, uint16_t type, uint16_t code)
{
	static struct of_group_mod m;
	struct of_fault f;
	cr_assert_eq(of_group_mod_parse(b, n, &m, &f), -EBADMSG);
	cr_assert_eq(f.type, type, "type %u, want %u (%s)", f.type, type, f.why);
	cr_assert_eq(f.code, code, "code %u, want %u (%s)", f.code, code, f.why);
	cr_assert(!f.close);
}

Test(of_group, lying_lengths_are_errors)
{
	gm_start(OFPGC_ADD, OFPGT_ALL, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	ssize_t n = of_group_mod_build(&gm, wire, sizeof(wire));
	cr_assert_eq(n, 16 + 16 + 16);
	/* Each copy goes to an exact-size heap buffer (ASan sees any over-read). */
	uint8_t *b = malloc((size_t)n);
	memcpy(b, wire, (size_t)n);
	b[16] = 0, b[17] = 64; /* bucket claims more than the message */
	expect_fault(b, (size_t)n, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET);
	b[17] = 8; /* under its header */
	expect_fault(b, (size_t)n, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET);
	b[17] = 28; /* not a multiple of 8 */
	expect_fault(b, (size_t)n, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET);
	b[17] = 32;
	b[32 + 3] = 24; /* the action claims past its bucket */
	expect_fault(b, (size_t)n, OFPET_BAD_ACTION, OFPBAC_BAD_LEN);
	free(b);
	/* a header cut short, a header length that disagrees */
	b = malloc(12);
	memcpy(b, wire, 12);
	b[2] = 0, b[3] = 12;
	expect_fault(b, 12, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN);
	free(b);
	b = malloc((size_t)n - 8);
	memcpy(b, wire, (size_t)n - 8); /* the header still says n: a bucket cut short */
	expect_fault(b, (size_t)n - 8, OFPET_BAD_REQUEST, OFPBRC_BAD_LEN);
	b[3] = (uint8_t)(n - 8);
	expect_fault(b, (size_t)n - 8, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET);
	free(b);
	/* a bucket header cut short (8 bytes left after the fixed part) */
	b = malloc(24);
	memcpy(b, wire, 24);
	b[3] = 24;
	expect_fault(b, 24, OFPET_GROUP_MOD_FAILED, OFPGMFC_BAD_BUCKET);
	free(b);
	/* more buckets than kept */
	gm_start(OFPGC_ADD, OFPGT_ALL, 1);
	for (unsigned i = 0; i < OF_MAX_BUCKETS; i++)
		gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	n = of_group_mod_build(&gm, wire, sizeof(wire));
	cr_assert_gt(n, 0);
	memcpy(wire + n, wire + 16, 32); /* one more bucket */
	n += 32;
	wire[2] = (uint8_t)(n >> 8), wire[3] = (uint8_t)n;
	expect_fault(wire, (size_t)n, OFPET_GROUP_MOD_FAILED, OFPGMFC_OUT_OF_BUCKETS);
}

Test(of_group, multipart_requests)
{
	uint8_t r[24] = {4, 18, 0, 24, 0, 0, 0, 9, 0, OFPMP13_GROUP, 0, 0, 0, 0, 0, 0,
			 0, 0, 0, 5, 0, 0, 0, 0};
	uint16_t t;
	uint32_t id;
	struct of_fault f;
	cr_assert_eq(of_group_mp_parse(r, 24, &t, &id, &f), 0);
	cr_assert_eq(t, OFPMP13_GROUP);
	cr_assert_eq(id, 5);
	cr_assert_eq(of_group_mp_parse(r, 16, &t, &id, &f), -EBADMSG); /* body missing */
	cr_assert_eq(f.code, OFPBRC_BAD_LEN);
	r[9] = OFPMP13_GROUP_DESC;
	cr_assert_eq(of_group_mp_parse(r, 16, &t, &id, &f), 0);
	cr_assert_eq(of_group_mp_parse(r, 24, &t, &id, &f), -EBADMSG);
	r[9] = OFPMP13_GROUP_FEATURES;
	cr_assert_eq(of_group_mp_parse(r, 16, &t, &id, &f), 0);
	r[9] = 1; /* FLOW: not ours */
	cr_assert_eq(of_group_mp_parse(r, 16, &t, &id, &f), -ENOENT);
}

Test(of_group, group_action_round_trips_in_a_flow_mod)
{
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 1};
	m.u.flow_mod.buffer_id = OFP_NO_BUFFER;
	m.u.flow_mod.out_port = OFPP_ANY;
	m.u.flow_mod.out_group = OFPG_ANY;
	of_act_simple(&m.u.flow_mod.actions, OF_ACT_GROUP, 77);
	ssize_t n = of_serialize(&m, wire, sizeof(wire));
	cr_assert_gt(n, 0);
	struct of_msg back;
	struct of_fault f;
	cr_assert_eq(of_parse(wire, (size_t)n, &back, &f), 0);
	cr_assert_eq(back.u.flow_mod.actions.n, 1);
	cr_assert_eq(back.u.flow_mod.actions.n_skipped, 0);
	cr_assert_eq(back.u.flow_mod.actions.a[0].type, OF_ACT_GROUP);
	cr_assert_eq(back.u.flow_mod.actions.a[0].value, 77);
}

/* ---- the table and its checks ---- */

static struct sw_dp dp; /* large */
static struct sw_core *core;
static unsigned pool_full;

static void setup(void)
{
	memset(&dp, 0, sizeof(dp));
	dp.nports = 3;
	dp.ncores = 1;
	dp.pool = rf_pktbuf_pool_create("sw_group_test", 128, 2048, 0, RF_MEMPOOL_QUIET);
	cr_assert_not_null(dp.pool);
	dp.to_ctl = rf_ring_create("sw_group_to_ctl", 16, RF_RING_SC_DEQ);
	cr_assert_not_null(dp.to_ctl);
	dp.groups = sw_groups_create(&dp); /* no table: retired programs are freed at once */
	cr_assert_not_null(dp.groups);
	core = &dp.cores[0];
	core->dp = &dp;
	pool_full = rf_pktbuf_pool_avail(dp.pool);
}

static void teardown(void)
{
	void *b;
	while (rf_ring_dequeue_burst(dp.to_ctl, &b, 1, NULL) == 1)
		rf_pktbuf_free(b);
	rf_ring_free(dp.to_ctl);
	sw_groups_free(dp.groups);
	rf_pktbuf_pool_free(dp.pool);
}

/* Carries out gm: 0, or the GROUP_MOD_FAILED / other code (type in *et). */
static int mod(uint16_t *et)
{
	bool deleted;
	uint16_t t = 0, c = 0;
	if (sw_group_mod(dp.groups, &gm, 1000, &deleted, &t, &c) == 0)
		return 0;
	if (et)
		*et = t;
	else
		cr_assert_eq(t, OFPET_GROUP_MOD_FAILED, "error type %u code %u", t, c);
	return c;
}

static void add_ok(void)
{
	int c = mod(NULL);
	cr_assert_eq(c, 0, "GROUP_MOD refused: code %d", c);
}

static void expect_code(int code)
{
	int c = mod(NULL);
	cr_assert_eq(c, code, "code %d, want %d", c, code);
}

TestSuite(sw_group, .init = setup, .fini = teardown);

Test(sw_group, group_mod_failed_codes)
{
	gm_start(OFPGC_ADD, OFPGT_ALL, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	add_ok();
	expect_code(OFPGMFC_GROUP_EXISTS);
	gm.group_id = OFPG_MAX + 1;
	expect_code(OFPGMFC_INVALID_GROUP);
	gm.group_id = 2;
	gm.command = 9;
	expect_code(OFPGMFC_BAD_COMMAND);
	gm.command = OFPGC_ADD;
	gm.type = 4;
	expect_code(OFPGMFC_BAD_TYPE);
	gm_start(OFPGC_MODIFY, OFPGT_ALL, 2);
	expect_code(OFPGMFC_UNKNOWN_GROUP);
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 2); /* indirect: exactly one bucket */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	expect_code(OFPGMFC_INVALID_GROUP);
	gm_start(OFPGC_ADD, OFPGT_ALL, 2); /* a weight outside select */
	gm_bucket(3, OFPP_ANY, OFPG_ANY, 2, 0);
	expect_code(OFPGMFC_BAD_BUCKET);
	gm_start(OFPGC_ADD, OFPGT_FF, 2); /* fast failover without a watch */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	expect_code(OFPGMFC_BAD_WATCH);
	gm_start(OFPGC_ADD, OFPGT_FF, 2); /* a port that does not exist */
	gm_bucket(0, 9, OFPG_ANY, 2, 0);
	expect_code(OFPGMFC_BAD_WATCH);
	gm_start(OFPGC_ADD, OFPGT_FF, 2); /* a group that does not exist */
	gm_bucket(0, OFPP_ANY, 55, 2, 0);
	expect_code(OFPGMFC_BAD_WATCH);
	gm_start(OFPGC_ADD, OFPGT_ALL, 2); /* an output port that does not exist */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 9, 0);
	uint16_t et;
	cr_assert_eq(mod(&et), OFPBAC_BAD_OUT_PORT);
	cr_assert_eq(et, OFPET_BAD_ACTION);
	gm_start(OFPGC_ADD, OFPGT_ALL, 2); /* chaining to a group that does not exist */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, 55);
	cr_assert_eq(mod(&et), OFPBAC_BAD_OUT_GROUP);
	cr_assert_eq(et, OFPET_BAD_ACTION);
	cr_assert_eq(dp.groups->n, 1, "refused GROUP_MODs changed nothing");
	gm_start(OFPGC_DELETE, OFPGT_ALL, 99); /* deleting an absent group is no error */
	add_ok();
	cr_assert_eq(dp.groups->n, 1);
}

Test(sw_group, loops_and_chains)
{
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	add_ok();
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 2); /* 2 -> 1 */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, 1);
	add_ok();
	gm_start(OFPGC_MODIFY, OFPGT_INDIRECT, 1); /* 1 -> 2 -> 1 */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, 2);
	expect_code(OFPGMFC_LOOP);
	gm_start(OFPGC_MODIFY, OFPGT_INDIRECT, 1); /* 1 -> 1 */
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, 1);
	expect_code(OFPGMFC_LOOP);
	gm_start(OFPGC_MODIFY, OFPGT_FF, 1); /* a watch loop is a loop too */
	gm_bucket(0, OFPP_ANY, 2, 2, 0);
	expect_code(OFPGMFC_LOOP);
	gm_start(OFPGC_DELETE, OFPGT_ALL, 1); /* 2 forwards to 1 */
	expect_code(OFPGMFC_CHAINED_GROUP);
	/* a chain of SW_GROUP_MAX_DEPTH groups is fine, one more is not */
	for (uint32_t id = 3; id <= SW_GROUP_MAX_DEPTH; id++) { /* group id: a chain of id */
		gm_start(OFPGC_ADD, OFPGT_INDIRECT, id);
		gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, id - 1);
		add_ok();
	}
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, SW_GROUP_MAX_DEPTH + 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, SW_GROUP_MAX_DEPTH);
	expect_code(OFPGMFC_CHAINING_UNSUPPORTED);
	gm_start(OFPGC_DELETE, OFPGT_ALL, OFPG_ALL);
	add_ok();
	cr_assert_eq(dp.groups->n, 0);
}

Test(sw_group, out_of_groups)
{
	for (uint32_t id = 0; id < SW_MAX_GROUPS; id++) {
		gm_start(OFPGC_ADD, OFPGT_ALL, id);
		add_ok();
	}
	gm_start(OFPGC_ADD, OFPGT_ALL, SW_MAX_GROUPS);
	expect_code(OFPGMFC_OUT_OF_GROUPS);
}

/* ---- running ---- */

static struct rf_pktbuf *make(const uint8_t *f, uint32_t n)
{
	struct rf_pktbuf *b = rf_pktbuf_alloc(dp.pool);
	cr_assert_not_null(b);
	memcpy(rf_pktbuf_data(b), f, n);
	b->data_len = n;
	return b;
}

static void release_all(void)
{
	for (unsigned pi = 0; pi < dp.nports; pi++) {
		rf_pktbuf_free_bulk(core->tx[pi], core->ntx[pi]);
		core->ntx[pi] = 0;
	}
	cr_assert_eq(rf_pktbuf_pool_avail(dp.pool), pool_full, "a buffer was lost or freed twice");
}

/* A flow's program: [GROUP id], or refused (-1 with *code). */
static int prog_group(uint32_t id, struct sw_actions *p, uint16_t *code)
{
	struct of_match any = {0};
	struct of_actions a = {0};
	of_act_simple(&a, OF_ACT_GROUP, id);
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&any, dp.nports, &ctx);
	ctx.groups = dp.groups;
	uint16_t et;
	return sw_actions_decode(&a, &ctx, p, &et, code);
}

/* Sends frame f (n bytes) from port index 0 through group id; the port indices it went out
 * of, as a bitmap of counts in out[3] (cleared first). */
static void through(uint32_t id, const uint8_t *f, uint32_t n, unsigned out[3])
{
	struct sw_actions p;
	uint16_t code;
	cr_assert_eq(prog_group(id, &p, &code), 0, "refused: %u", code);
	sw_dp_apply(core, make(f, n), 0, &p, NULL);
	for (unsigned pi = 0; pi < 3; pi++)
		out[pi] = core->ntx[pi];
	release_all();
}

Test(sw_group, flow_naming_a_missing_group_is_refused)
{
	struct sw_actions p;
	uint16_t code = 0;
	cr_assert_eq(prog_group(5, &p, &code), -1);
	cr_assert_eq(code, OFPBAC_BAD_OUT_GROUP);
}

Test(sw_group, all_and_indirect)
{
	uint8_t f[128];
	uint32_t n = frame(f, 6);
	unsigned out[3];
	gm_start(OFPGC_ADD, OFPGT_ALL, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	through(1, f, n, out);
	cr_assert(out[0] == 0 && out[1] == 1 && out[2] == 1, "all: %u %u %u", out[0], out[1],
		  out[2]);
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 2);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	through(2, f, n, out);
	cr_assert(out[1] == 0 && out[2] == 1);
	/* MODIFY: the same group id now sends to port 2 */
	gm_start(OFPGC_MODIFY, OFPGT_INDIRECT, 2);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	add_ok();
	through(2, f, n, out);
	cr_assert(out[1] == 1 && out[2] == 0);
	/* a bucket's rewrite reaches only its own copy */
	gm_start(OFPGC_MODIFY, OFPGT_ALL, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 0, 0);
	of_act_set_field(&gm.buckets[0].actions, OF_OXM_IPV4_DST, 0x0a0000fe);
	of_act_output(&gm.buckets[0].actions, 2, 0);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	struct sw_actions p;
	uint16_t code;
	cr_assert_eq(prog_group(1, &p, &code), 0);
	sw_dp_apply(core, make(f, n), 0, &p, NULL);
	cr_assert_eq(core->ntx[1], 1);
	cr_assert_eq(core->ntx[2], 1);
	const uint8_t *a = rf_pktbuf_data(core->tx[1][0]), *b = rf_pktbuf_data(core->tx[2][0]);
	cr_assert_eq(a[14 + 19], 0xfe, "bucket 0 rewrote its copy");
	cr_assert_eq(memcmp(b, f, n), 0, "bucket 1 got the frame as it came");
	cr_assert_eq(at16(a + 14 + 10), ip_csum(a + 14), "IPv4 checksum fixed");
	cr_assert_eq(at16(a + 34 + 16), l4_csum(a + 14, 16), "TCP checksum fixed");
	release_all();
}

/* The frame of flow i: TCP with source port 1000 + i, destination 80. */
static uint32_t flow_frame(uint8_t *f, unsigned i)
{
	uint32_t n = frame(f, 6);
	f[34] = (uint8_t)((1000 + i) >> 8);
	f[35] = (uint8_t)(1000 + i);
	return n;
}

/* The port index flow i's frame leaves by through group id (-1: none). */
static int port_of(uint32_t id, unsigned i)
{
	uint8_t f[128];
	uint32_t n = flow_frame(f, i);
	unsigned out[3];
	through(id, f, n, out);
	int port = -1;
	for (unsigned pi = 0; pi < 3; pi++)
		if (out[pi]) {
			cr_assert_eq(out[pi], 1);
			cr_assert_eq(port, -1, "one bucket only");
			port = (int)pi;
		}
	return port;
}

Test(sw_group, select_spreads_by_weight_and_sticks)
{
	gm_start(OFPGC_ADD, OFPGT_SELECT, 1);
	gm_bucket(1, OFPP_ANY, OFPG_ANY, 2, 0);
	gm_bucket(2, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	enum { FLOWS = 3000 };
	static int first[FLOWS];
	unsigned to[3] = {0};
	for (unsigned i = 0; i < FLOWS; i++) {
		first[i] = port_of(1, i);
		cr_assert(first[i] == 1 || first[i] == 2);
		to[first[i]]++;
	}
	/* 1:2 within a few percent (the hash is fixed: this is not a timing figure) */
	cr_assert(to[1] > FLOWS / 3 - 150 && to[1] < FLOWS / 3 + 150, "weight 1: %u of %u",
		  to[1], FLOWS);
	for (unsigned i = 0; i < FLOWS; i += 7)
		cr_assert_eq(port_of(1, i), first[i], "flow %u moved", i);
	/* port 2 (index 1) watched and down: its bucket is dead, every flow takes the other */
	gm_start(OFPGC_MODIFY, OFPGT_SELECT, 1);
	gm_bucket(1, 2, OFPG_ANY, 2, 0);
	gm_bucket(2, 3, OFPG_ANY, 3, 0);
	add_ok();
	sw_group_set_link(dp.groups, 2, false);
	for (unsigned i = 0; i < 300; i++)
		cr_assert_eq(port_of(1, i), 2);
	sw_group_set_link(dp.groups, 2, true);
	for (unsigned i = 0; i < FLOWS; i += 7)
		cr_assert_eq(port_of(1, i), first[i], "flow %u moved after the link came back", i);
	sw_group_set_link(dp.groups, 2, false);
	sw_group_set_link(dp.groups, 3, false);
	cr_assert_eq(port_of(1, 0), -1, "no live bucket: dropped");
	cr_assert_eq(core->drop_group, 1);
}

Test(sw_group, fast_failover)
{
	gm_start(OFPGC_ADD, OFPGT_FF, 1);
	gm_bucket(0, 2, OFPG_ANY, 2, 0);
	gm_bucket(0, 3, OFPG_ANY, 3, 0);
	add_ok();
	cr_assert_eq(port_of(1, 0), 1);
	sw_group_set_link(dp.groups, 2, false); /* the first bucket's port goes down */
	cr_assert_eq(port_of(1, 0), 2);
	sw_group_set_link(dp.groups, 3, false);
	cr_assert_eq(port_of(1, 0), -1);
	sw_group_set_link(dp.groups, 2, true);
	cr_assert_eq(port_of(1, 0), 1, "back on the first bucket");
	/* watching a group: group 2's bucket is live while group 1 has a live bucket */
	gm_start(OFPGC_ADD, OFPGT_FF, 2);
	gm_bucket(0, OFPP_ANY, 1, 0, 1);
	gm_bucket(0, 3, OFPG_ANY, 3, 0);
	add_ok();
	sw_group_set_link(dp.groups, 3, true);
	cr_assert_eq(port_of(2, 0), 1, "through group 1 (chained) to port 2");
	sw_group_set_link(dp.groups, 2, false);
	cr_assert_eq(port_of(2, 0), 2, "group 1 still live by port 3: chained to it");
	sw_group_set_link(dp.groups, 3, false);
	cr_assert_eq(port_of(2, 0), -1);
}

Test(sw_group, delete_orphans_flows_and_old_programs_drop)
{
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	add_ok();
	struct sw_actions p;
	uint16_t code;
	cr_assert_eq(prog_group(1, &p, &code), 0);
	cr_assert(!sw_group_orphaned(dp.groups, &p));
	cr_assert(sw_group_named(&p, 1));
	gm_start(OFPGC_DELETE, OFPGT_ALL, 1);
	bool deleted;
	uint16_t et, ec;
	cr_assert_eq(sw_group_mod(dp.groups, &gm, 0, &deleted, &et, &ec), 0);
	cr_assert(deleted);
	cr_assert(sw_group_orphaned(dp.groups, &p), "the agent removes this flow");
	/* a new group in the same slot with another id: the old program drops, never uses it */
	gm_start(OFPGC_ADD, OFPGT_INDIRECT, 2);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	cr_assert_eq(sw_group_find(dp.groups, 2), p.op[0].max_len, "the slot was reused");
	uint8_t f[128];
	uint32_t n = frame(f, 6);
	sw_dp_apply(core, make(f, n), 0, &p, NULL);
	cr_assert_eq(core->ntx[2], 0);
	cr_assert_eq(core->drop_group, 1);
	release_all();
}

/* ---- counters and multiparts ---- */

static uint8_t replies[4][OF_MAX_MSG_LEN];
static size_t reply_len[4];
static unsigned nreplies;

static void capture(void *ctx, const uint8_t *b, size_t n)
{
	(void)ctx;
	cr_assert_lt(nreplies, 4);
	memcpy(replies[nreplies], b, n);
	reply_len[nreplies++] = n;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)of_get32(p) << 32 | of_get32(p + 4);
}

Test(sw_group, stats_desc_features)
{
	gm_start(OFPGC_ADD, OFPGT_ALL, 1);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
	gm_bucket(0, OFPP_ANY, OFPG_ANY, 3, 0);
	add_ok();
	uint8_t f[128];
	uint32_t n = frame(f, 6);
	unsigned out[3];
	for (unsigned i = 0; i < 5; i++)
		through(1, f, n, out);
	/* one flow naming it: ref_count 1 */
	struct sw_flow *fl = sw_flow_alloc(1);
	cr_assert_not_null(fl);
	struct sw_actions p;
	uint16_t code;
	cr_assert_eq(prog_group(1, &p, &code), 0);
	atomic_init(&fl->actions, &p);
	nreplies = 0;
	sw_group_multipart(dp.groups, fl, OFPMP13_GROUP, OFPG_ALL, 33, 1000 + 2500000000ull,
			   wire, capture, NULL);
	cr_assert_eq(nreplies, 1);
	const uint8_t *r = replies[0];
	cr_assert_eq(reply_len[0], 16 + 40 + 2 * 16);
	cr_assert_eq(of_get16(r + 2), reply_len[0]);
	cr_assert_eq(r[1], 19);
	cr_assert_eq(of_get32(r + 4), 33);
	cr_assert_eq(of_get16(r + 8), OFPMP13_GROUP);
	cr_assert_eq(of_get16(r + 10), 0, "no MORE");
	const uint8_t *s = r + 16;
	cr_assert_eq(of_get16(s), 40 + 32);
	cr_assert_eq(of_get32(s + 4), 1);
	cr_assert_eq(of_get32(s + 8), 1, "ref_count");
	cr_assert_eq(get64(s + 16), 5, "packets");
	cr_assert_eq(get64(s + 24), 5ull * n, "bytes");
	cr_assert_eq(of_get32(s + 32), 2, "duration_sec");
	cr_assert_eq(of_get32(s + 36), 500000000u);
	cr_assert_eq(get64(s + 40), 5);
	cr_assert_eq(get64(s + 56), 5);
	free(fl);
	/* DESC: the group as it was added, parsed back through the GROUP_MOD bucket format */
	nreplies = 0;
	sw_group_multipart(dp.groups, NULL, OFPMP13_GROUP_DESC, OFPG_ALL, 34, 0, wire, capture,
			   NULL);
	cr_assert_eq(nreplies, 1);
	r = replies[0];
	cr_assert_eq(of_get16(r + 16), 8 + 2 * 32);
	cr_assert_eq(r[18], OFPGT_ALL);
	cr_assert_eq(of_get32(r + 20), 1);
	uint8_t as_mod[128];
	memcpy(as_mod, "\x04\x0f\x00\x00\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	memcpy(as_mod + 16, r + 24, 64);
	as_mod[3] = 80;
	static struct of_group_mod back;
	struct of_fault fa;
	cr_assert_eq(of_group_mod_parse(as_mod, 80, &back, &fa), 0);
	cr_assert_eq(back.nbuckets, 2);
	cr_assert_eq(back.buckets[1].actions.a[0].port, 3);
	/* FEATURES */
	nreplies = 0;
	sw_group_multipart(dp.groups, NULL, OFPMP13_GROUP_FEATURES, OFPG_ALL, 35, 0, wire,
			   capture, NULL);
	cr_assert_eq(reply_len[0], 16 + 40);
	cr_assert_eq(of_get32(replies[0] + 16), 0xf, "all four types");
	cr_assert_eq(of_get32(replies[0] + 24), SW_MAX_GROUPS);
	cr_assert(of_get32(replies[0] + 40) & (1u << OFPAT_GROUP));
}

Test(sw_group, many_groups_span_several_replies)
{
	for (uint32_t id = 0; id < 1000; id++) {
		gm_start(OFPGC_ADD, OFPGT_ALL, id);
		for (unsigned k = 0; k < 3; k++)
			gm_bucket(0, OFPP_ANY, OFPG_ANY, 2, 0);
		add_ok();
	}
	nreplies = 0;
	sw_group_multipart(dp.groups, NULL, OFPMP13_GROUP_DESC, OFPG_ALL, 1, 0, wire, capture,
			   NULL);
	cr_assert_eq(nreplies, 2, "1000 x 104 bytes: two messages");
	cr_assert_eq(of_get16(replies[0] + 10), OFPMPF_MORE);
	cr_assert_eq(of_get16(replies[1] + 10), 0);
	cr_assert_eq((reply_len[0] - 16 + reply_len[1] - 16) / 104, 1000);
}
