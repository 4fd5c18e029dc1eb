/*
 * tests/openflow/test_of_roundtrip.c: every modelled message, in 1.3 and in 1.0, goes
 * serialize -> frame -> parse and comes back equal, field by field (arrays item by item),
 * and serializing the parsed message gives the same bytes again.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "of.h"
#include "of_wire.h"
#include "openflow/of_samples.h"

static void match_eq(const struct of_match *a, const struct of_match *b)
{
	cr_assert_eq(a->fields, b->fields);
	if (a->fields & OF_MATCH_IN_PORT)
		cr_assert_eq(a->in_port, b->in_port);
	if (a->fields & OF_MATCH_ETH_SRC)
		cr_assert_arr_eq(a->eth_src, b->eth_src, 6);
	if (a->fields & OF_MATCH_ETH_DST)
		cr_assert_arr_eq(a->eth_dst, b->eth_dst, 6);
	if (a->fields & OF_MATCH_ETH_TYPE)
		cr_assert_eq(a->eth_type, b->eth_type);
	if (a->fields & OF_MATCH_TUNNEL_ID) {
		cr_assert_eq(a->tunnel_id, b->tunnel_id);
		cr_assert_eq(a->masked & OF_MATCH_TUNNEL_ID, b->masked & OF_MATCH_TUNNEL_ID);
	}
	cr_assert_eq(a->has_metadata, b->has_metadata);
	if (a->has_metadata) {
		cr_assert_eq(a->metadata, b->metadata);
		cr_assert_eq(a->metadata_mask, b->metadata_mask);
	}
	cr_assert_eq(b->n_other, 0);
}

static void actions_eq(const struct of_actions *a, const struct of_actions *b)
{
	cr_assert_eq(a->n, b->n);
	cr_assert_eq(b->n_skipped, 0);
	for (unsigned i = 0; i < a->n; i++) {
		cr_assert_eq(a->a[i].port, b->a[i].port);
		cr_assert_eq(a->a[i].max_len, b->a[i].max_len);
	}
}

static void data_eq(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	cr_assert_eq(alen, blen);
	if (alen)
		cr_assert_arr_eq(a, b, alen);
}

static void port_eq(uint8_t v, const struct of_port *a, const struct of_port *b)
{
	cr_assert_eq(a->port_no, b->port_no);
	cr_assert_arr_eq(a->hw_addr, b->hw_addr, 6);
	cr_assert_str_eq(a->name, b->name);
	cr_assert_eq(a->config, b->config);
	cr_assert_eq(a->state, b->state);
	cr_assert_eq(a->curr, b->curr);
	cr_assert_eq(a->supported, b->supported);
	if (v == OF_VERSION_1_3)
		cr_assert_eq(a->curr_speed, b->curr_speed);
}

static void ports_eq(uint8_t v, const struct of_array *a, const struct of_array *b)
{
	cr_assert_eq(a->n, b->n);
	for (unsigned i = 0; i < a->n; i++) {
		struct of_port pa, pb;
		cr_assert_eq(of_port_at(v, a, i, &pa), 0);
		cr_assert_eq(of_port_at(v, b, i, &pb), 0);
		port_eq(v, &pa, &pb);
	}
	cr_assert_eq(of_port_at(v, b, b->n, &(struct of_port){0}), -EINVAL);
}

static void mp_reply_eq(uint8_t v, const struct of_mp_reply *a, const struct of_mp_reply *b)
{
	cr_assert_eq(a->mp_type, b->mp_type);
	cr_assert_eq(a->flags, b->flags);
	cr_assert_eq(a->body.n, b->body.n);
	if (a->mp_type == OF_MP_PORT_DESC) {
		ports_eq(v, &a->body, &b->body);
	} else if (a->mp_type == OF_MP_PORT_STATS) {
		for (unsigned i = 0; i < a->body.n; i++) {
			struct of_port_stats sa, sb;
			cr_assert_eq(of_port_stats_at(v, &a->body, i, &sa), 0);
			cr_assert_eq(of_port_stats_at(v, &b->body, i, &sb), 0);
			cr_assert_eq(sa.port_no, sb.port_no);
			cr_assert_eq(sa.rx_packets, sb.rx_packets);
			cr_assert_eq(sa.tx_bytes, sb.tx_bytes);
			cr_assert_eq(sa.rx_crc_err, sb.rx_crc_err);
			cr_assert_eq(sa.collisions, sb.collisions);
		}
	} else {
		struct of_flow_stats fa, fb;
		unsigned ca = 0, cb = 0, n = 0;
		while (of_flow_stats_next(v, &a->body, &ca, &fa)) {
			cr_assert_eq(of_flow_stats_next(v, &b->body, &cb, &fb), 1);
			cr_assert_eq(fa.priority, fb.priority);
			cr_assert_eq(fa.idle_timeout, fb.idle_timeout);
			cr_assert_eq(fa.cookie, fb.cookie);
			cr_assert_eq(fa.packet_count, fb.packet_count);
			cr_assert_eq(fa.byte_count, fb.byte_count);
			cr_assert_eq(fa.duration_sec, fb.duration_sec);
			match_eq(&fa.match, &fb.match);
			actions_eq(&fa.actions, &fb.actions);
			n++;
		}
		cr_assert_eq(of_flow_stats_next(v, &b->body, &cb, &fb), 0);
		cr_assert_eq(n, a->body.n);
	}
}

static void msg_eq(const struct of_msg *a, const struct of_msg *b)
{
	uint8_t v = a->version;
	cr_assert_eq(a->version, b->version);
	cr_assert_eq(a->type, b->type, "%s", of_type_name(a->type));
	cr_assert_eq(a->xid, b->xid);
	switch (a->type) {
	case OF_HELLO:
		cr_assert_eq(a->u.hello.has_bitmap, b->u.hello.has_bitmap);
		cr_assert_eq(a->u.hello.bitmap, b->u.hello.bitmap);
		break;
	case OF_ERROR:
		cr_assert_eq(a->u.error.type, b->u.error.type);
		cr_assert_eq(a->u.error.code, b->u.error.code);
		data_eq(a->u.error.data, a->u.error.data_len, b->u.error.data, b->u.error.data_len);
		break;
	case OF_ECHO_REQUEST:
	case OF_ECHO_REPLY:
		data_eq(a->u.echo.data, a->u.echo.data_len, b->u.echo.data, b->u.echo.data_len);
		break;
	case OF_FEATURES_REPLY:
		cr_assert_eq(a->u.features.datapath_id, b->u.features.datapath_id);
		cr_assert_eq(a->u.features.n_buffers, b->u.features.n_buffers);
		cr_assert_eq(a->u.features.n_tables, b->u.features.n_tables);
		cr_assert_eq(a->u.features.capabilities, b->u.features.capabilities);
		cr_assert_eq(a->u.features.actions, b->u.features.actions);
		ports_eq(v, &a->u.features.ports, &b->u.features.ports);
		break;
	case OF_SET_CONFIG:
		cr_assert_eq(a->u.config.flags, b->u.config.flags);
		cr_assert_eq(a->u.config.miss_send_len, b->u.config.miss_send_len);
		break;
	case OF_PACKET_IN: {
		const struct of_packet_in *x = &a->u.packet_in, *y = &b->u.packet_in;
		cr_assert_eq(x->buffer_id, y->buffer_id);
		cr_assert_eq(x->total_len, y->total_len);
		cr_assert_eq(x->reason, y->reason);
		cr_assert_eq(x->cookie, y->cookie);
		match_eq(&x->match, &y->match);
		data_eq(x->data, x->data_len, y->data, y->data_len);
		break;
	}
	case OF_PACKET_OUT: {
		const struct of_packet_out *x = &a->u.packet_out, *y = &b->u.packet_out;
		cr_assert_eq(x->buffer_id, y->buffer_id);
		cr_assert_eq(x->in_port, y->in_port);
		actions_eq(&x->actions, &y->actions);
		data_eq(x->data, x->data_len, y->data, y->data_len);
		break;
	}
	case OF_FLOW_MOD: {
		const struct of_flow_mod *x = &a->u.flow_mod, *y = &b->u.flow_mod;
		cr_assert_eq(x->cookie, y->cookie);
		cr_assert_eq(x->command, y->command);
		cr_assert_eq(x->table_id, y->table_id);
		cr_assert_eq(x->idle_timeout, y->idle_timeout);
		cr_assert_eq(x->hard_timeout, y->hard_timeout);
		cr_assert_eq(x->priority, y->priority);
		cr_assert_eq(x->buffer_id, y->buffer_id);
		cr_assert_eq(x->out_port, y->out_port);
		cr_assert_eq(x->out_group, y->out_group);
		cr_assert_eq(x->flags, y->flags);
		match_eq(&x->match, &y->match);
		actions_eq(&x->actions, &y->actions);
		break;
	}
	case OF_FLOW_REMOVED: {
		const struct of_flow_removed *x = &a->u.flow_removed, *y = &b->u.flow_removed;
		cr_assert_eq(x->cookie, y->cookie);
		cr_assert_eq(x->priority, y->priority);
		cr_assert_eq(x->reason, y->reason);
		cr_assert_eq(x->duration_sec, y->duration_sec);
		cr_assert_eq(x->duration_nsec, y->duration_nsec);
		cr_assert_eq(x->idle_timeout, y->idle_timeout);
		cr_assert_eq(x->packet_count, y->packet_count);
		cr_assert_eq(x->byte_count, y->byte_count);
		match_eq(&x->match, &y->match);
		break;
	}
	case OF_PORT_STATUS:
		cr_assert_eq(a->u.port_status.reason, b->u.port_status.reason);
		port_eq(v, &a->u.port_status.port, &b->u.port_status.port);
		break;
	case OF_MULTIPART_REQUEST: {
		const struct of_mp_request *x = &a->u.mp_request, *y = &b->u.mp_request;
		cr_assert_eq(x->mp_type, y->mp_type);
		cr_assert_eq(x->flags, y->flags);
		if (x->mp_type == OF_MP_FLOW) {
			cr_assert_eq(x->table_id, y->table_id);
			cr_assert_eq(x->out_port, y->out_port);
			cr_assert_eq(x->out_group, y->out_group);
			match_eq(&x->match, &y->match);
		} else if (x->mp_type == OF_MP_PORT_STATS) {
			cr_assert_eq(x->port_no, y->port_no);
		}
		break;
	}
	case OF_MULTIPART_REPLY:
		mp_reply_eq(v, &a->u.mp_reply, &b->u.mp_reply);
		break;
	default:
		break;
	}
}

/* serialize -> frame -> parse -> compare -> serialize again: same bytes. */
static void roundtrip(const struct of_msg *m)
{
	uint8_t buf[4096], again[4096];
	ssize_t n = of_serialize(m, buf, sizeof(buf));
	cr_assert_gt(n, 0, "%s v%u: %zd", of_type_name(m->type), m->version, n);
	/* Parse from an exact-size heap copy so an over-read trips ASan. */
	uint8_t *exact = malloc((size_t)n);
	memcpy(exact, buf, (size_t)n);

	struct of_framer fr = {.version = m->version};
	struct of_frame f;
	of_frame(&fr, exact, (size_t)n, &f);
	cr_assert_eq(f.kind, OF_FRAME_MSG);
	cr_assert_eq(f.len, (uint32_t)n);

	struct of_msg p;
	struct of_fault fault;
	int rc = of_parse(exact, (size_t)n, &p, &fault);
	cr_assert_eq(rc, 0, "%s v%u: %s", of_type_name(m->type), m->version, fault.why);
	msg_eq(m, &p);

	ssize_t n2 = of_serialize(&p, again, sizeof(again));
	cr_assert_eq(n2, n);
	cr_assert_arr_eq(again, buf, (size_t)n);
	/* One byte too little room: -ENOBUFS, never a partial message. */
	cr_assert_eq(of_serialize(m, again, (size_t)n - 1), -ENOBUFS);
	free(exact);
}

static void roundtrip_all(uint8_t version, size_t expect_at_least)
{
	struct of_msg s[OF_SAMPLES_MAX];
	size_t n = of_samples(version, s, OF_SAMPLES_MAX);
	cr_assert_geq(n, expect_at_least);
	bool seen[OF_TYPE_COUNT] = {false};
	for (size_t i = 0; i < n; i++) {
		roundtrip(&s[i]);
		seen[s[i].type] = true;
	}
	for (int t = 0; t < OF_TYPE_COUNT; t++)
		cr_assert(seen[t], "no sample of %s", of_type_name((enum of_type)t));
}

Test(of_roundtrip, every_type_v13)
{
	roundtrip_all(OF_VERSION_1_3, 19);
}

Test(of_roundtrip, every_type_v10)
{
	roundtrip_all(OF_VERSION_1_0, 17);
}

Test(of_roundtrip, builders_parse_back)
{
	uint8_t buf[256], frame[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x88, 0xcc};
	struct of_msg m;
	struct of_fault f;
	ssize_t n = of_build_packet_out(buf, sizeof(buf), OF_VERSION_1_0, 9, OFP_NO_BUFFER, 3,
					OFPP_FLOOD, frame, sizeof(frame));
	cr_assert_gt(n, 0);
	cr_assert_eq(of_parse(buf, (size_t)n, &m, &f), 0);
	cr_assert_eq(m.u.packet_out.in_port, 3);
	cr_assert_eq(m.u.packet_out.actions.a[0].port, OFPP_FLOOD);
	cr_assert_eq(m.u.packet_out.data_len, sizeof(frame));
	/* A buffered PACKET_OUT carries no data. */
	n = of_build_packet_out(buf, sizeof(buf), OF_VERSION_1_3, 9, 77, 3, 2, frame, sizeof(frame));
	cr_assert_eq(of_parse(buf, (size_t)n, &m, &f), 0);
	cr_assert_eq(m.u.packet_out.buffer_id, 77);
	cr_assert_eq(m.u.packet_out.data_len, 0);

	n = of_build_delete_all(buf, sizeof(buf), OF_VERSION_1_0, 5);
	cr_assert_eq(n, 72);
	cr_assert_eq(of_parse(buf, (size_t)n, &m, &f), 0);
	cr_assert_eq(m.u.flow_mod.command, OFPFC_DELETE);
	cr_assert_eq(m.u.flow_mod.out_port, OFPP_ANY);
	cr_assert_eq(m.u.flow_mod.match.fields, 0);
}

Test(of_roundtrip, values_10_cannot_carry_are_refused)
{
	uint8_t buf[256];
	struct of_msg m = {.version = OF_VERSION_1_0, .type = OF_PACKET_OUT};
	m.u.packet_out.in_port = 0x10000; /* no 16-bit form */
	cr_assert_eq(of_serialize(&m, buf, sizeof(buf)), -EINVAL);
	m.type = OF_MULTIPART_REQUEST;
	m.u.mp_request.mp_type = OF_MP_PORT_DESC; /* no such stats type in 1.0 */
	cr_assert_eq(of_serialize(&m, buf, sizeof(buf)), -EINVAL);
	/* Reserved ports map: 1.3 OFPP_CONTROLLER is 1.0 0xfffd. */
	ssize_t n = of_build_packet_out(buf, sizeof(buf), OF_VERSION_1_0, 1, OFP_NO_BUFFER,
					OFPP_CONTROLLER, OFPP_LOCAL, NULL, 0);
	cr_assert_eq(n, 24);
	cr_assert_eq(of_get16(buf + 12), 0xfffd);
	cr_assert_eq(of_get16(buf + 20), 0xfffe);
}

Test(of_roundtrip, oversized_message_is_refused)
{
	static uint8_t big[70000], out[70100];
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_ECHO_REQUEST};
	m.u.echo.data = big;
	m.u.echo.data_len = 65535; /* + 8 header bytes > 65535 */
	cr_assert_eq(of_serialize(&m, out, sizeof(out)), -EINVAL);
	m.u.echo.data_len = 65527;
	cr_assert_eq(of_serialize(&m, out, sizeof(out)), 65535);
}

/* A PACKET_IN with the pipeline fields a switch puts in its match (1.3.5 section 7.4.1:
 * in_port, metadata, tunnel_id) comes back whole, in_port the first OXM and metadata the
 * last, as Open vSwitch sends them. */
Test(of_roundtrip, packet_in_pipeline_fields)
{
	static const uint8_t frame[14] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0x88, 0xb5};
	struct of_msg m = {.version = OF_VERSION_1_3, .type = OF_PACKET_IN, .xid = 3};
	struct of_packet_in *pi = &m.u.packet_in;
	pi->buffer_id = OFP_NO_BUFFER;
	pi->total_len = sizeof(frame);
	pi->reason = 1;
	pi->table_id = 1;
	pi->cookie = 0x77;
	pi->match.fields = OF_MATCH_IN_PORT | OF_MATCH_TUNNEL_ID;
	pi->match.in_port = 2;
	pi->match.tunnel_id = 0x0102030405060708ull;
	pi->match.tunnel_id_mask = ~0ull;
	pi->match.has_metadata = true;
	pi->match.metadata = 0xfedcba9876543210ull;
	pi->match.metadata_mask = ~0ull;
	pi->data = frame;
	pi->data_len = sizeof(frame);
	roundtrip(&m);

	uint8_t buf[256];
	ssize_t n = of_serialize(&m, buf, sizeof(buf));
	/* header 8, buffer_id 4, total_len 2, reason, table_id, cookie 8: the match at 24 */
	cr_assert_eq(of_get16(buf + 24), 1, "OFPMT_OXM");
	cr_assert_eq(of_get16(buf + 26), 4 + 8 + 12 + 12, "in_port, tunnel_id, metadata");
	cr_assert_eq(of_get32(buf + 28), 0x80000004u, "in_port first");
	cr_assert_eq(of_get32(buf + 32), 2);
	cr_assert_eq(of_get32(buf + 36), 0x80004c08u, "tunnel_id, exact");
	cr_assert_eq(of_get64(buf + 40), 0x0102030405060708ull);
	cr_assert_eq(of_get32(buf + 48), 0x80000408u, "metadata last, exact");
	cr_assert_eq(of_get64(buf + 52), 0xfedcba9876543210ull);
	cr_assert_eq(n, 24 + 40 + 2 + sizeof(frame), "match padded to 40, 2 bytes pad, the frame");

	/* Without the metadata: none comes back. */
	pi->match.has_metadata = false;
	struct of_msg back;
	struct of_fault f;
	n = of_serialize(&m, buf, sizeof(buf));
	cr_assert_eq(of_parse(buf, (size_t)n, &back, &f), 0, "%s", f.why);
	cr_assert(!back.u.packet_in.match.has_metadata);
	cr_assert_eq(back.u.packet_in.match.tunnel_id, 0x0102030405060708ull);
}
