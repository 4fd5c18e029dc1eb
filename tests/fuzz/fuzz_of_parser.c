/*
 * tests/fuzz/fuzz_of_parser.c: libFuzzer target for the OpenFlow protocol module.
 *
 * The input is a byte stream as a switch would send it. It goes through the same loop a
 * connection runs: of_frame() until it needs more bytes or must close, each framed message
 * copied into an exact-size heap buffer (so ASan sees any over-read) and parsed; a HELLO
 * negotiates the version the framer then enforces; a fault builds its ERROR reply. Every
 * message that parses is serialized, parsed again and serialized again: the two outputs must
 * be byte-identical (the parser and serializer agree), or the target traps. Every action
 * list parsed holds only modelled actions with valid values (else it was skipped with the
 * ERROR to answer), and ringflow-switch's checker (sw_actions.c) either refuses it with a
 * BAD_ACTION/BAD_INSTRUCTION error or turns it into a program that converts back to the same
 * list. The same input also drives a controller-side of_session, whose replies must frame
 * cleanly.
 *
 * Build and run: `make fuzz` (clang, -fsanitize=fuzzer,address,undefined; see docs/openflow.md).
 *
 * Each message also goes through of_xparse (the switch's view of roles, the async config,
 * GET_CONFIG and the DESC/AGGREGATE/TABLE multiparts) with the same round-trip rule for
 * of_xserialize.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of.h"
#include "of_eth.h"
#include "of_session.h"
#include "sw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out1[OF_MAX_MSG_LEN + 64], out2[OF_MAX_MSG_LEN + 64];

/* The switch-side parser of the messages of_parse does not model (of_xmsg.c). */
static void one_xmessage(const uint8_t *msg, size_t len)
{
	struct of_xmsg x, x2;
	struct of_fault f;
	struct of_table_stats t;
	int r = of_xparse(msg, len, &x, &f);
	if (r == -ENOENT)
		return;
	if (r != 0) {
		if (r != -EBADMSG || !f.why)
			__builtin_trap();
		of_build_error_reply(out1, sizeof(out1), OF_VERSION_1_3, &f, msg, len);
		return;
	}
	if (x.type >= OF_XTYPE_COUNT)
		__builtin_trap();
	if (x.type == OF_X_TABLE_REPLY)
		for (unsigned i = 0; i < x.u.tables.n; i++)
			if (of_table_stats_at(&x.u.tables, i, &t))
				__builtin_trap();
	ssize_t n1 = of_xserialize(&x, out1, sizeof(out1));
	if (n1 < 0)
		return; /* e.g. a match with fields that are not written back */
	if (of_xparse(out1, (size_t)n1, &x2, &f) != 0 || x2.type != x.type)
		__builtin_trap(); /* we wrote something we refuse to read */
	ssize_t n2 = of_xserialize(&x2, out2, sizeof(out2));
	if (n2 != n1 || memcmp(out1, out2, (size_t)n1) != 0)
		__builtin_trap();
}

/* Reads every array item the parser said is there. */
static void walk_arrays(const struct of_msg *m)
{
	struct of_port p;
	struct of_port_stats s;
	struct of_flow_stats f;
	if (m->type == OF_FEATURES_REPLY)
		for (unsigned i = 0; i < m->u.features.ports.n; i++)
			if (of_port_at(m->version, &m->u.features.ports, i, &p))
				__builtin_trap();
	if (m->type != OF_MULTIPART_REPLY)
		return;
	const struct of_array *a = &m->u.mp_reply.body;
	unsigned cur = 0, n = 0;
	switch (m->u.mp_reply.mp_type) {
	case OF_MP_PORT_DESC:
		for (unsigned i = 0; i < a->n; i++)
			if (of_port_at(m->version, a, i, &p))
				__builtin_trap();
		break;
	case OF_MP_PORT_STATS:
		for (unsigned i = 0; i < a->n; i++)
			if (of_port_stats_at(m->version, a, i, &s))
				__builtin_trap();
		break;
	case OF_MP_FLOW:
		while (of_flow_stats_next(m->version, a, &cur, &f))
			n++;
		if (n != a->n)
			__builtin_trap();
		break;
	}
}

/* An action list as the parser left it, then through the switch's checker. */
static void check_actions(const struct of_actions *a, const struct of_match *m)
{
	if (a->n > OF_MAX_ACTIONS)
		__builtin_trap();
	if (a->n_skipped && a->skip_type != OFPET_BAD_ACTION &&
	    a->skip_type != OFPET_BAD_INSTRUCTION)
		__builtin_trap();
	for (unsigned i = 0; i < a->n; i++) {
		const struct of_action *x = &a->a[i];
		if (x->type > OF_ACT_GROUP)
			__builtin_trap();
		if (x->type == OF_ACT_SET_FIELD &&
		    (!of_oxm_name(x->field) ||
		     (x->field == OF_OXM_VLAN_VID && !(x->value & OFPVID_PRESENT))))
			__builtin_trap();
		if (x->type == OF_ACT_PUSH_VLAN && x->ethertype != 0x8100 && x->ethertype != 0x88a8)
			__builtin_trap();
		if (x->type == OF_ACT_PUSH_MPLS && x->ethertype != 0x8847 && x->ethertype != 0x8848)
			__builtin_trap();
		if (x->type == OF_ACT_PUSH_PBB && x->ethertype != 0x88e7)
			__builtin_trap();
	}
	struct sw_act_ctx ctx;
	sw_act_ctx_of_match(m, 4, &ctx);
	struct sw_actions prog;
	struct of_actions back;
	uint16_t et, ec;
	if (sw_actions_decode(a, &ctx, &prog, &et, &ec) != 0) {
		if (et != OFPET_BAD_ACTION && et != OFPET_BAD_INSTRUCTION)
			__builtin_trap();
		return;
	}
	sw_actions_to_of(&prog, &back);
	if (back.n != a->n || memcmp(back.a, a->a, a->n * sizeof(a->a[0])) != 0)
		__builtin_trap();
}

static void one_message(const uint8_t *msg, size_t len)
{
	struct of_msg m, m2;
	struct of_fault f;
	one_xmessage(msg, len);
	if (of_parse(msg, len, &m, &f) != 0) {
		if (!f.why)
			__builtin_trap();
		of_build_error_reply(out1, sizeof(out1), OF_VERSION_1_3, &f, msg, len);
		return;
	}
	walk_arrays(&m);
	if (m.type == OF_FLOW_MOD)
		check_actions(&m.u.flow_mod.actions, &m.u.flow_mod.match);
	if (m.type == OF_PACKET_OUT)
		check_actions(&m.u.packet_out.actions, &(struct of_match){0});
	if (m.type == OF_MULTIPART_REPLY && m.u.mp_reply.mp_type == OF_MP_FLOW) {
		struct of_flow_stats fs;
		unsigned cur = 0;
		while (of_flow_stats_next(m.version, &m.u.mp_reply.body, &cur, &fs))
			check_actions(&fs.actions, &fs.match);
	}
	if (m.type == OF_PACKET_IN || m.type == OF_PACKET_OUT) { /* the frame inside */
		const uint8_t *d = m.type == OF_PACKET_IN ? m.u.packet_in.data : m.u.packet_out.data;
		size_t dl = m.type == OF_PACKET_IN ? m.u.packet_in.data_len : m.u.packet_out.data_len;
		struct of_eth e;
		uint64_t dpid;
		uint32_t port;
		if (of_eth_parse(d, dl, &e) == 0 && e.payload + e.payload_len != d + dl)
			__builtin_trap();
		of_lldp_parse(d, dl, &dpid, &port);
	}
	ssize_t n1 = of_serialize(&m, out1, sizeof(out1));
	if (n1 < 0)
		return; /* not expressible again (e.g. a reserved port only 1.3 has) */
	if (of_parse(out1, (size_t)n1, &m2, &f) != 0)
		__builtin_trap(); /* we wrote something we refuse to read */
	walk_arrays(&m2);
	ssize_t n2 = of_serialize(&m2, out2, sizeof(out2));
	if (n2 != n1 || memcmp(out1, out2, (size_t)n1) != 0)
		__builtin_trap();
}

/* The same bytes through the controller-side session (handshake, echo, faults). Its replies
 * must always be messages we can frame again. */
static void session(const uint8_t *data, size_t size)
{
	struct of_session s;
	struct of_out out = {.p = out1, .cap = sizeof(out1), .len = 0};
	if (of_session_start(&s, 0, 0, &out) != 0)
		__builtin_trap();
	bool close = false;
	size_t off = 0;
	while (!close && off < size) {
		out.len = 0;
		size_t used = of_session_input(&s, data + off, size - off, NULL, NULL, &out, &close);
		for (size_t o = 0; o < out.len;) {
			struct of_frame f;
			of_frame(&(struct of_framer){0}, out.p + o, out.len - o, &f);
			if (f.kind != OF_FRAME_MSG)
				__builtin_trap();
			o += f.len;
		}
		if (!used)
			break;
		off += used;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	session(data, size);

	struct of_framer fr = {.version = 0, .max_len = OF_MAX_MSG_LEN};
	size_t off = 0;
	while (off < size) {
		struct of_frame fm;
		of_frame(&fr, data + off, size - off, &fm);
		if (fm.kind == OF_FRAME_NEED_MORE)
			break;
		if (fm.kind == OF_FRAME_BAD) {
			if (fm.fault.close || fm.len < OF_HEADER_LEN)
				break;
			off += fm.len;
			continue;
		}
		uint8_t *copy = malloc(fm.len);
		if (!copy)
			return 0;
		memcpy(copy, data + off, fm.len);
		one_message(copy, fm.len);
		struct of_msg m;
		struct of_fault f;
		if (!fr.version && of_parse(copy, fm.len, &m, &f) == 0 && m.type == OF_HELLO) {
			int v = of_negotiate(OF_VERSIONS_SUPPORTED, &m);
			if (v < 0) {
				free(copy);
				break; /* HELLO_FAILED: the connection closes */
			}
			fr.version = (uint8_t)v;
		}
		free(copy);
		off += fm.len;
	}
	return 0;
}
