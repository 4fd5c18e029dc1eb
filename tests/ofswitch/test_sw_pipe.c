/*
 * tests/ofswitch/test_sw_pipe.c: the multi-table pipeline (issue 25), from the wire to the
 * frame.
 *
 *   - parsing (of_action.c, of_match.c): goto_table, write_metadata, write/clear_actions and
 *     the metadata match (masked) survive serialize -> parse; a repeated instruction is
 *     BAD_INSTRUCTION/DUP_INST, a write_metadata of the wrong length BAD_LEN, a metadata
 *     value outside its mask BAD_WILDCARDS;
 *   - checking (sw_insts.c): goto only to a later table below SW_N_TABLES (BAD_TABLE_ID),
 *     write-actions checked as apply-actions (BAD_OUT_PORT);
 *   - running (sw_pipe.c over a real sw_table): goto with metadata selects the later table's
 *     flow, a table without a matching flow drops, apply-actions rewrite before the next
 *     lookup, write/clear build the action set, which runs in the specification's order
 *     (push before set-field, decrement TTL before set TTL) whatever the written order;
 *     PACKET_IN from a later table carries its table and cookie, and the metadata and
 *     tunnel_id the pipeline set (only those); per-table counters; the EMC
 *     in front of table 0 stays exact while later tables change. No buffer is lost.
 */
#include "rf_test.h"

#include <string.h>

#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/ring.h>

#include "sw.h"
#include "sw_frames.h"
#include "sw_pipe_bed.h"

/* ---- parsing ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A 1.3 FLOW_MOD (empty match) followed by the instruction bytes ins[0..n); parsed. */
static int parse_ins(const uint8_t *ins, size_t n, struct of_msg *out, struct of_fault *f)
{
	static uint8_t buf[4096];
	struct of_msg fm = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 1};
	fm.u.flow_mod.buffer_id = OFP_NO_BUFFER;
	fm.u.flow_mod.out_port = OFPP_ANY;
	fm.u.flow_mod.out_group = OFPG_ANY;
	ssize_t len = of_serialize(&fm, buf, sizeof(buf));
	cr_assert_gt(len, 0);
	memcpy(buf + len, ins, n);
	len += (ssize_t)n;
	put16(buf + 2, (uint16_t)len);
	return of_parse(buf, (size_t)len, out, f);
}

static size_t i_goto(uint8_t *p, uint8_t tbl)
{
	memset(p, 0, 8);
	put16(p, 1);
	put16(p + 2, 8);
	p[4] = tbl;
	return 8;
}

static size_t i_clear(uint8_t *p)
{
	memset(p, 0, 8);
	put16(p, 5);
	put16(p + 2, 8);
	return 8;
}

Test(pipe_parse, instructions_round_trip)
{
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 7}, back;
	struct of_flow_mod *fm = &m.u.flow_mod;
	fm->table_id = 1;
	fm->buffer_id = OFP_NO_BUFFER;
	fm->out_port = OFPP_ANY;
	fm->out_group = OFPG_ANY;
	fm->match.has_metadata = true;
	fm->match.metadata = 0x1200;
	fm->match.metadata_mask = 0xff00;
	of_act_output(&fm->actions, 2, 0);
	fm->inst.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_METADATA | OF_INST_WRITE_ACTIONS |
			   OF_INST_CLEAR_ACTIONS;
	fm->inst.goto_table = 5;
	fm->inst.metadata = 0xabcd;
	fm->inst.metadata_mask = 0xffff;
	of_act_simple(&fm->inst.write, OF_ACT_DEC_NW_TTL, 0);
	of_act_output(&fm->inst.write, 3, 0);
	static uint8_t buf[4096];
	ssize_t n = of_serialize(&m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct of_fault f;
	cr_assert_eq(of_parse(buf, (size_t)n, &back, &f), 0, "%s", f.why);
	const struct of_flow_mod *b = &back.u.flow_mod;
	cr_assert(b->match.has_metadata);
	cr_assert_eq(b->match.metadata, 0x1200);
	cr_assert_eq(b->match.metadata_mask, 0xff00);
	cr_assert_eq(b->inst.present, fm->inst.present);
	cr_assert_eq(b->inst.goto_table, 5);
	cr_assert_eq(b->inst.metadata, 0xabcd);
	cr_assert_eq(b->inst.metadata_mask, 0xffff);
	cr_assert_eq(b->inst.write.n, 2);
	cr_assert_eq(b->inst.write.a[0].type, OF_ACT_DEC_NW_TTL);
	cr_assert_eq(b->inst.write.a[1].port, 3);
	cr_assert_eq(b->actions.n, 1);
	/* an exact metadata match comes back exact */
	fm->match.metadata_mask = ~0ull;
	n = of_serialize(&m, buf, sizeof(buf));
	cr_assert_eq(of_parse(buf, (size_t)n, &back, &f), 0, "%s", f.why);
	cr_assert_eq(back.u.flow_mod.match.metadata_mask, ~0ull);
}

Test(pipe_parse, bad_instructions_get_their_error)
{
	uint8_t ins[64];
	struct of_msg m;
	struct of_fault f;
	size_t n = i_goto(ins, 1);
	n += i_goto(ins + n, 2);
	cr_assert_eq(parse_ins(ins, n, &m, &f), -EBADMSG);
	cr_assert_eq(f.type, OFPET_BAD_INSTRUCTION);
	cr_assert_eq(f.code, OFPBIC_DUP_INST);
	n = i_clear(ins);
	n += i_clear(ins + n);
	cr_assert_eq(parse_ins(ins, n, &m, &f), -EBADMSG);
	cr_assert_eq(f.code, OFPBIC_DUP_INST);
	/* write_metadata of 16 bytes (24 it must be) */
	memset(ins, 0, 16);
	put16(ins, 2);
	put16(ins + 2, 16);
	cr_assert_eq(parse_ins(ins, 16, &m, &f), -EBADMSG);
	cr_assert_eq(f.type, OFPET_BAD_INSTRUCTION);
	cr_assert_eq(f.code, OFPBIC_BAD_LEN);
	/* goto_table of 16 bytes */
	memset(ins, 0, 16);
	put16(ins, 1);
	put16(ins + 2, 16);
	cr_assert_eq(parse_ins(ins, 16, &m, &f), -EBADMSG);
	cr_assert_eq(f.code, OFPBIC_BAD_LEN);
	/* an apply-actions twice */
	memset(ins, 0, 16);
	put16(ins, 4);
	put16(ins + 2, 8);
	put16(ins + 8, 4);
	put16(ins + 10, 8);
	cr_assert_eq(parse_ins(ins, 16, &m, &f), -EBADMSG);
	cr_assert_eq(f.code, OFPBIC_DUP_INST);
}

Test(pipe_parse, metadata_value_outside_mask)
{
	static uint8_t buf[256];
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 1};
	m.u.flow_mod.buffer_id = OFP_NO_BUFFER;
	m.u.flow_mod.match.has_metadata = true;
	m.u.flow_mod.match.metadata = 0x3;
	m.u.flow_mod.match.metadata_mask = 0x1; /* serialized as given: bit 1 outside */
	ssize_t n = of_serialize(&m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct of_fault f;
	cr_assert_eq(of_parse(buf, (size_t)n, &m, &f), -EBADMSG);
	cr_assert_eq(f.type, OFPET_BAD_MATCH);
	cr_assert_eq(f.code, OFPBMC_BAD_WILDCARDS);
}

Test(pipe_parse, goto_and_write_checked)
{
	struct of_insts in = {.present = OF_INST_GOTO_TABLE, .goto_table = 2};
	struct sw_act_ctx ctx = {.nports = 3};
	struct sw_actions p;
	uint16_t et, ec;
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&in, 1, &ctx, &p, &et, &ec), 0);
	cr_assert_eq(p.goto_table, 2);
	cr_assert_eq(sw_insts_decode(&in, 2, &ctx, &p, &et, &ec), -1, "goto to its own table");
	cr_assert_eq(et, OFPET_BAD_INSTRUCTION);
	cr_assert_eq(ec, OFPBIC_BAD_TABLE_ID);
	cr_assert_eq(sw_insts_decode(&in, 3, &ctx, &p, &et, &ec), -1, "goto backwards");
	in.goto_table = SW_N_TABLES;
	cr_assert_eq(sw_insts_decode(&in, 0, &ctx, &p, &et, &ec), -1, "goto past the last table");
	cr_assert_eq(ec, OFPBIC_BAD_TABLE_ID);
	struct of_insts w = {.present = OF_INST_WRITE_ACTIONS};
	of_act_output(&w.write, 9, 0);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&w, 0, &ctx, &p, &et, &ec), -1);
	cr_assert_eq(et, OFPET_BAD_ACTION);
	cr_assert_eq(ec, OFPBAC_BAD_OUT_PORT);
	/* and back for stats */
	w.write.n = 0;
	of_act_output(&w.write, 2, 0);
	w.present |= OF_INST_WRITE_METADATA | OF_INST_CLEAR_ACTIONS;
	w.metadata = 0x10;
	w.metadata_mask = 0xf0;
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&w, 0, &ctx, &p, &et, &ec), 0);
	struct of_insts back;
	sw_insts_to_of(&p, &back);
	cr_assert_eq(back.present, w.present);
	cr_assert_eq(back.metadata, 0x10);
	cr_assert_eq(back.metadata_mask, 0xf0);
	cr_assert_eq(back.write.n, 1);
	cr_assert_eq(back.write.a[0].port, 2);
}

/* write_actions' set-field prerequisites follow the order the action set runs (1.3.5 section
 * 5.10), not the list's: a push_vlan written after the vlan_vid set-field still comes first.
 * Refused with MATCH_INCONSISTENT before (checked in list order, as OVS does). */
Test(pipe_parse, write_prerequisites_follow_the_set_order)
{
	struct of_match m = {.fields = OF_MATCH_ETH_TYPE, .eth_type = 0x0800};
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(&m, 3, &ctx);
	struct sw_actions p;
	uint16_t et, ec;
	struct of_insts w = {.present = OF_INST_WRITE_ACTIONS};
	of_act_set_field(&w.write, OF_OXM_VLAN_VID, OFPVID_PRESENT | 5);
	of_act_simple(&w.write, OF_ACT_PUSH_VLAN, 0x8100);
	of_act_output(&w.write, 2, 0);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&w, 0, &ctx, &p, &et, &ec), 0, "error %u/%u", et, ec);
	struct of_insts back;
	sw_insts_to_of(&p, &back);
	cr_assert_eq(back.write.n, 3, "kept as written, for FLOW stats");
	cr_assert_eq(back.write.a[0].type, OF_ACT_SET_FIELD);
	cr_assert_eq(back.write.a[1].type, OF_ACT_PUSH_VLAN);
	/* without the push no tag is there to set */
	struct of_insts v = {.present = OF_INST_WRITE_ACTIONS};
	of_act_set_field(&v.write, OF_OXM_VLAN_VID, OFPVID_PRESENT | 5);
	of_act_output(&v.write, 2, 0);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&v, 0, &ctx, &p, &et, &ec), -1);
	cr_assert_eq(et, OFPET_BAD_ACTION);
	cr_assert_eq(ec, OFPBAC_MATCH_INCONSISTENT);
	/* a pop runs before the push in the set: popping the pushed tag is still no tag to set */
	struct of_insts q = {.present = OF_INST_WRITE_ACTIONS};
	of_act_simple(&q.write, OF_ACT_PUSH_VLAN, 0x8100);
	of_act_simple(&q.write, OF_ACT_POP_VLAN, 0);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(sw_insts_decode(&q, 0, &ctx, &p, &et, &ec), -1, "pop of an untagged frame");
	cr_assert_eq(ec, OFPBAC_MATCH_INCONSISTENT);
}

/* ---- running ---- */

Test(pipe_run, goto_with_metadata_picks_the_flow, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_match m = in_port(1);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_METADATA,
			     .goto_table = 3, .metadata = 0x0a05, .metadata_mask = 0x00ff};
	add(0, &m, 10, NULL, &g);
	m = in_port(2);
	g.metadata = 0x06;
	add(0, &m, 10, NULL, &g);
	struct of_actions o2 = out_to(2), o3 = out_to(3), o1 = out_to(1);
	m = md_match(0x05, 0xff);
	add(3, &m, 5, &o2, NULL);
	m = md_match(0x06, 0xff);
	add(3, &m, 5, &o3, NULL);
	m = md_match(0x0a05, ~0ull); /* only 0x05 was written (mask 0xff): never matches */
	add(3, &m, 50, &o1, NULL);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 1, "metadata 5 goes to port 2");
	cr_assert_eq(core->ntx[2], 0);
	cr_assert_eq(core->ntx[0], 0);
	run(fr, n, 1);
	cr_assert_eq(core->ntx[2], 1, "metadata 6 goes to port 3");
	cr_assert_eq(core->tlookup[3], 2);
	cr_assert_eq(core->tmatch[3], 2);
	release_all();
}

Test(pipe_run, no_flow_in_a_later_table_drops, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_ACTIONS,
			     .goto_table = 1};
	of_act_output(&g.write, 2, 0xffff); /* in the action set, never run: the frame dies */
	add(0, NULL, 0, NULL, &g);
	struct of_match m = in_port(3);
	struct of_actions o = out_to(1);
	add(1, &m, 1, &o, NULL);
	run(fr, n, 0);
	for (unsigned p = 0; p < 3; p++)
		cr_assert_eq(core->ntx[p], 0, "dropped in table 1");
	cr_assert_eq(core->tlookup[1], 1);
	cr_assert_eq(core->tmatch[1], 0);
	release_all();
}

Test(pipe_run, apply_rewrites_before_the_next_lookup, .init = pipe_setup,
     .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 6);
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 0x77};
	struct of_actions a = {0};
	of_act_set_mac(&a, OF_OXM_ETH_SRC, mac);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 2};
	add(0, NULL, 0, &a, &g);
	struct of_match m = {.fields = OF_MATCH_ETH_SRC};
	memcpy(m.eth_src, mac, 6);
	struct of_actions o = out_to(3);
	add(2, &m, 9, &o, NULL);
	add(2, NULL, 0, NULL, NULL); /* table-miss flow of table 2, no actions: drop */
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 1, "table 2 saw the new source");
	uint32_t len;
	const uint8_t *d = rf_pktbuf_data(core->tx[2][0]);
	len = core->tx[2][0]->data_len;
	cr_assert_eq(len, n);
	cr_assert_eq(memcmp(d + 6, mac, 6), 0);
	release_all();
}

/* set_field tunnel_id (issue 25): the frame leaves unchanged (no port here is a tunnel
 * endpoint; OVS ignores tun_id on output to one that is not), and later tables match it. */
Test(pipe_run, set_tunnel_id_reaches_later_tables, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_actions a = {0};
	uint8_t id[16] = {0, 0, 0, 0, 0, 0, 0x12, 0x34};
	cr_assert(of_act_set_ipv6(&a, OF_OXM_TUNNEL_ID, id));
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	add(0, NULL, 0, &a, &g);
	struct of_match m = {.fields = OF_MATCH_TUNNEL_ID, .tunnel_id = 0x1234};
	struct of_actions o2 = out_to(2), o3 = out_to(3);
	add(1, &m, 10, &o2, NULL);
	m.tunnel_id = 0x1235;
	add(1, &m, 20, &o3, NULL);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 1, "table 1 saw tunnel_id 0x1234");
	cr_assert_eq(core->ntx[2], 0);
	cr_assert_eq(core->tx[1][0]->data_len, n);
	cr_assert_arr_eq(rf_pktbuf_data(core->tx[1][0]), fr, n, "the frame is unchanged");
	release_all();
}

/* ND fields in a later table: looked up with the frame's sw_xkey there too. */
Test(pipe_run, nd_target_in_a_later_table, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t l4, n = frame_nd(fr, 135, &l4);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 4};
	add(0, NULL, 0, NULL, &g);
	struct of_match m = {.fields = OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO |
				       OF_MATCH_ICMPV6_TYPE | OF_MATCH_ND_TARGET,
			     .eth_type = 0x86dd, .ip_proto = 58, .icmpv6_type = 135};
	memcpy(m.nd_target, fr + l4 + 8, 16);
	struct of_actions o2 = out_to(2), o3 = out_to(3);
	add(4, &m, 10, &o2, NULL);
	add(4, NULL, 0, &o3, NULL);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 1, "the target matched in table 4");
	fr[l4 + 23] ^= 1;
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 1, "another target: table 4's miss flow");
	release_all();
}

Test(pipe_run, write_clear_and_the_action_set, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	static const uint8_t dst[6] = {2, 0, 0, 0, 0, 0x99};
	struct of_insts w0 = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_ACTIONS,
			      .goto_table = 1};
	of_act_output(&w0.write, 3, 0xffff);
	add(0, NULL, 0, NULL, &w0);
	/* table 1: written output 3 replaced by output 1... then cleared by table 2 */
	struct of_insts w1 = {.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_ACTIONS,
			      .goto_table = 2};
	of_act_output(&w1.write, 1, 0xffff);
	add(1, NULL, 0, NULL, &w1);
	struct of_insts w2 = {.present = OF_INST_CLEAR_ACTIONS | OF_INST_WRITE_ACTIONS};
	of_act_set_mac(&w2.write, OF_OXM_ETH_DST, dst);
	of_act_output(&w2.write, 2, 0xffff);
	add(2, NULL, 0, NULL, &w2);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 0, "output 3 was replaced, then cleared");
	cr_assert_eq(core->ntx[0], 0, "output 1 was cleared");
	cr_assert_eq(core->ntx[1], 1);
	cr_assert_eq(memcmp(rf_pktbuf_data(core->tx[1][0]), dst, 6), 0);
	release_all();
}

Test(pipe_run, action_set_runs_in_the_spec_order, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_match m = {.fields = OF_MATCH_ETH_TYPE, .eth_type = 0x0800};
	/* Written as output, set TTL, decrement TTL, push_vlan, set vlan_vid: in list order the
	 * frame would leave untouched. The set's order: push, decrement, set TTL and vid,
	 * output. The output goes into the set in table 0, the rest in table 4. */
	struct of_insts w0 = {.present = OF_INST_WRITE_ACTIONS | OF_INST_GOTO_TABLE,
			      .goto_table = 4};
	of_act_output(&w0.write, 2, 0xffff);
	add(0, &m, 1, NULL, &w0);
	struct of_insts w4 = {.present = OF_INST_WRITE_ACTIONS};
	of_act_simple(&w4.write, OF_ACT_SET_NW_TTL, 10);
	of_act_simple(&w4.write, OF_ACT_DEC_NW_TTL, 0);
	of_act_simple(&w4.write, OF_ACT_PUSH_VLAN, 0x8100);
	of_act_set_field(&w4.write, OF_OXM_VLAN_VID, OFPVID_PRESENT | 5);
	add(4, &m, 1, NULL, &w4);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 1);
	const uint8_t *d = rf_pktbuf_data(core->tx[1][0]);
	cr_assert_eq(core->tx[1][0]->data_len, n + 4, "pushed before the output");
	cr_assert_eq(at16(d + 12), 0x8100);
	cr_assert_eq(at16(d + 14) & 0x0fff, 5, "vid set after the push");
	cr_assert_eq(at16(d + 16), 0x0800);
	cr_assert_eq(d[18 + 8], 10, "TTL set after the decrement (10, not 9)");
	uint8_t ip[20];
	memcpy(ip, d + 18, 20);
	uint16_t sum = at16(ip + 10);
	ip[10] = ip[11] = 0;
	cr_assert_eq(ip_csum(ip), sum, "IPv4 checksum right");
	release_all();
}

Test(pipe_run, packet_in_from_a_later_table, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 6};
	add(0, NULL, 0, NULL, &g);
	struct of_actions c = out_to(OFPP_CONTROLLER);
	struct sw_flow *miss = add(6, NULL, 0, &c, NULL);
	run(fr, n, 0);
	void *x;
	cr_assert_eq(rf_ring_dequeue_burst(dp.to_ctl, &x, 1, NULL), 1);
	struct rf_pktbuf *b = x;
	cr_assert_eq(b->flow >> 56, 6, "table_id");
	cr_assert_eq((b->flow >> 48) & 1, 1, "table 6's table-miss flow: reason NO_MATCH");
	cr_assert_eq(b->timestamp_ns, miss->cookie);
	rf_pktbuf_free(b);
	release_all();
}

/* The frame that pipeline sent to the controller next: its pipeline fields (sw.h). */
static struct sw_pin_fields next_pin(uint64_t *flow)
{
	void *x = NULL;
	cr_assert_eq(rf_ring_dequeue_burst(dp.to_ctl, &x, 1, NULL), 1, "a frame for the controller");
	struct rf_pktbuf *b = x;
	struct sw_pin_fields pf;
	sw_pin_fields_of(b, &pf);
	*flow = b->flow;
	rf_pktbuf_free(b);
	return pf;
}

/* PACKET_IN's pipeline fields (1.3.5 section 7.4.1): the metadata write_metadata left and the
 * tunnel_id a set_field gave go with the frame to the agent; a frame with neither carries
 * none (not even a stale one of the frame before), and the poller keeps no trace. */
Test(pipe_run, packet_in_carries_metadata_and_tunnel_id, .init = pipe_setup,
     .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_match m1 = in_port(1), m2 = in_port(2), m3 = in_port(3);
	struct of_actions tun = {0};
	uint8_t id[16] = {0, 0, 0, 0, 0, 0, 0x12, 0x34};
	cr_assert(of_act_set_ipv6(&tun, OF_OXM_TUNNEL_ID, id));
	struct of_insts wg = {.present = OF_INST_WRITE_METADATA | OF_INST_GOTO_TABLE,
			      .goto_table = 1, .metadata = 0xfedcba9876543210ull,
			      .metadata_mask = ~0ull};
	add(0, &m1, 1, &tun, &wg); /* port 1: tunnel_id and metadata, then table 1 */
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	add(0, &m2, 1, NULL, &g); /* port 2: neither */
	struct of_actions tc = tun; /* port 3: tunnel_id, to the controller from table 0 */
	of_act_output(&tc, OFPP_CONTROLLER, 0xffff);
	struct sw_flow *f3 = add(0, &m3, 1, &tc, NULL);
	cr_assert(sw_actions_pipeline(atomic_load(&f3->actions)), "set_field tunnel_id: sw_pipe_run");
	struct of_actions c = out_to(OFPP_CONTROLLER);
	add(1, NULL, 0, &c, NULL);

	uint64_t flow;
	run(fr, n, 0);
	struct sw_pin_fields pf = next_pin(&flow);
	cr_assert(flow & SW_PIN_HAS_FIELDS);
	cr_assert_eq((uint32_t)flow, 1, "in_port");
	cr_assert_eq(flow >> 56, 1, "table_id");
	cr_assert_eq(pf.metadata, 0xfedcba9876543210ull);
	cr_assert_eq(pf.tunnel_id, 0x1234);
	cr_assert_eq(core->pin_md | core->pin_tun, 0, "the poller forgets them after the frame");

	run(fr, n, 1);
	pf = next_pin(&flow);
	cr_assert_eq(flow & SW_PIN_HAS_FIELDS, 0, "no pipeline field set: none carried");
	cr_assert_eq(pf.metadata | pf.tunnel_id, 0);

	run(fr, n, 2);
	pf = next_pin(&flow);
	cr_assert_eq(flow >> 56, 0, "from table 0");
	cr_assert_eq(pf.metadata, 0);
	cr_assert_eq(pf.tunnel_id, 0x1234);
	run(fr, n, 1);
	pf = next_pin(&flow);
	cr_assert_eq(pf.metadata | pf.tunnel_id, 0, "the next frame does not inherit it");
	release_all();
}

/* A write_metadata under a mask keeps the bits outside it, and the value sent with the
 * PACKET_IN is the metadata as the frame left the last table. */
Test(pipe_run, packet_in_metadata_is_the_masked_sum, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_insts w0 = {.present = OF_INST_WRITE_METADATA | OF_INST_GOTO_TABLE,
			      .goto_table = 2, .metadata = 0xaa00, .metadata_mask = 0xff00};
	add(0, NULL, 0, NULL, &w0);
	struct of_insts w2 = {.present = OF_INST_WRITE_METADATA | OF_INST_WRITE_ACTIONS,
			      .metadata = 0x55, .metadata_mask = 0xff};
	of_act_output(&w2.write, OFPP_CONTROLLER, 0xffff); /* from the action set */
	add(2, NULL, 0, NULL, &w2);
	run(fr, n, 0);
	uint64_t flow;
	struct sw_pin_fields pf = next_pin(&flow);
	cr_assert_eq(flow >> 56, 2, "table_id");
	cr_assert_eq(pf.metadata, 0xaa55);
	cr_assert_eq(pf.tunnel_id, 0);
	release_all();
}

Test(pipe_run, emc_stays_exact_while_later_tables_change, .init = pipe_setup,
     .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	add(0, NULL, 0, NULL, &g);
	struct of_actions o1 = out_to(2), o2 = out_to(3);
	struct sw_flow *lo = add(1, NULL, 1, &o1, NULL);
	for (unsigned i = 0; i < 20; i++) /* table 0's answer is cached by now */
		run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 20);
	struct of_match m = in_port(1);
	struct sw_flow *hi = add(1, &m, 9, &o2, NULL);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 1, "the new, higher flow of table 1 answers at once");
	del(hi);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 21, "and its removal too");
	del(lo);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[1], 21, "no flow left in table 1: dropped");
	cr_assert_eq(core->ntx[2], 1);
	release_all();
}

/* A group table with group id, indirect, its one bucket sending to port 3 (index 2); gm is
 * the GROUP_MOD that made it. */
static void indirect_to_port3(uint32_t id, struct of_group_mod *gm)
{
	dp.groups = sw_groups_create(&dp);
	cr_assert_not_null(dp.groups);
	*gm = (struct of_group_mod){.command = OFPGC_ADD, .type = OFPGT_INDIRECT, .group_id = id,
				    .nbuckets = 1};
	gm->buckets[0].watch_port = OFPP_ANY;
	gm->buckets[0].watch_group = OFPG_ANY;
	of_act_output(&gm->buckets[0].actions, 3, 0xffff);
	bool deleted;
	uint16_t et, ec;
	cr_assert_eq(sw_group_mod(dp.groups, gm, 0, &deleted, &et, &ec), 0);
}

/* A GROUP in the apply-actions of a flow that goes on (goto_table) runs there, on a copy:
 * it was skipped as an unknown rewrite (counted in act_skip) before. */
Test(pipe_run, a_group_before_a_goto_runs, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_group_mod gm;
	indirect_to_port3(1, &gm);
	struct of_actions a = {0};
	of_act_simple(&a, OF_ACT_GROUP, 1);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 1};
	add(0, NULL, 0, &a, &g);
	struct of_actions o = out_to(2);
	add(1, NULL, 0, &o, NULL);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 1, "the group's bucket sent its copy to port 3");
	cr_assert_eq(core->ntx[1], 1, "and table 1 the frame to port 2");
	cr_assert_eq(core->act_skip, 0);
	release_all();
}

/* A GROUP written into the action set: accepted (it was refused with BAD_OUT_GROUP, the
 * check saw no group table), run at the end of the pipeline instead of the set's output
 * (1.3.5 section 5.10), and a flow naming it is orphaned when the group goes. */
Test(pipe_run, a_written_group_replaces_the_output, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_group_mod gm;
	indirect_to_port3(7, &gm);
	bool deleted;
	uint16_t et, ec;
	struct of_insts w = {.present = OF_INST_WRITE_ACTIONS};
	of_act_output(&w.write, 2, 0xffff);
	of_act_simple(&w.write, OF_ACT_GROUP, 7);
	struct sw_flow *f = add(0, NULL, 0, NULL, &w);
	run(fr, n, 0);
	cr_assert_eq(core->ntx[2], 1, "the group's bucket sent it to port 3");
	cr_assert_eq(core->ntx[1], 0, "the set's output is ignored beside a group");
	struct sw_actions *x = atomic_load_explicit(&f->actions, memory_order_relaxed);
	cr_assert_not(sw_group_orphaned(dp.groups, x));
	gm.command = OFPGC_DELETE;
	cr_assert_eq(sw_group_mod(dp.groups, &gm, 0, &deleted, &et, &ec), 0);
	cr_assert(deleted);
	cr_assert(sw_group_orphaned(dp.groups, x), "a written group that went orphans its flow");
	release_all();
}

/* ---- what the agent says about the tables ---- */

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

Test(pipe_tables, features_describe_every_table)
{
	static uint8_t buf[65536];
	size_t n = sw_tables_features(buf, sizeof(buf), 42);
	cr_assert_gt(n, 16);
	cr_assert_eq(be16(buf + 2), n, "the header's length");
	cr_assert_eq(buf[1], 19, "MULTIPART_REPLY");
	cr_assert_eq(be16(buf + 8), 12, "TABLE_FEATURES");
	size_t off = 16;
	for (unsigned t = 0; t < SW_N_TABLES; t++) {
		cr_assert_lt(off + 64, n);
		size_t len = be16(buf + off);
		cr_assert_eq(len % 8, 0);
		cr_assert_eq(buf[off + 2], t, "table %u in order", t);
		/* the first property: INSTRUCTIONS, goto (type 1) first unless the last table */
		const uint8_t *prop = buf + off + 64;
		cr_assert_eq(be16(prop), 0);
		cr_assert_eq(be16(prop + 4) == 1, t + 1 < SW_N_TABLES, "goto only before table 7");
		/* NEXT_TABLES lists every later table */
		const uint8_t *next = prop + (be16(prop + 2) + 7) / 8 * 8;
		cr_assert_eq(be16(next), 2);
		cr_assert_eq(be16(next + 2), 4 + (SW_N_TABLES - 1 - t));
		off += len;
	}
	cr_assert_eq(off, n, "the tables fill the message");
	cr_assert_eq(sw_tables_features(buf, 1000, 1), 0, "a short buffer is refused");
}

Test(pipe_tables, stats_count_per_table, .init = pipe_setup, .fini = pipe_teardown)
{
	uint8_t fr[128];
	uint32_t n = frame(fr, 17);
	struct of_insts g = {.present = OF_INST_GOTO_TABLE, .goto_table = 2};
	add(0, NULL, 0, NULL, &g);
	struct of_actions o = out_to(2);
	struct of_match m = in_port(2); /* never this frame's */
	add(2, &m, 3, &o, NULL);
	add(2, NULL, 0, &o, NULL);
	for (unsigned i = 0; i < 5; i++)
		run(fr, n, 0);
	/* sw_dp_poll's counts: table 0's lookups are rx minus short frames, its hits are counted
	 * as they happen; 3 frames matched nothing and one burst of 2 is not in rx yet (a read
	 * between its drops and its rx): matched stays 5 (it was rx - drops, which read 3 here
	 * and went back up later). */
	core->rx = 8;
	core->drop_nomatch = 3 + 2;
	core->tmatch[0] = 5;
	dp.ncores = 1;
	struct sw_flow *list = NULL;
	for (unsigned i = nflows; i-- > 0;) { /* the agent's master list */
		flows[i]->next = list;
		list = flows[i];
	}
	struct of_table_stats ts[SW_N_TABLES];
	sw_tables_stats(&dp, list, ts);
	cr_assert_eq(ts[0].active_count, 1);
	cr_assert_eq(ts[0].lookup_count, 8);
	cr_assert_eq(ts[0].matched_count, 5);
	cr_assert_eq(ts[2].active_count, 2);
	cr_assert_eq(ts[2].lookup_count, 5);
	cr_assert_eq(ts[2].matched_count, 5);
	cr_assert_eq(ts[1].lookup_count, 0);
	cr_assert_eq(ts[7].table_id, 7);
	release_all();
}
