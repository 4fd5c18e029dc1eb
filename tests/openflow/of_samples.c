/*
 * tests/openflow/of_samples.c: one filled-in message of every modelled type, for both
 * versions. The round-trip tests serialize and re-parse each, the truncation sweep cuts each
 * at every length, and tests/fuzz/gen_corpus.c writes them out as fuzzer seeds.
 */
#include <string.h>

#include "of_samples.h"

static const uint8_t frame[60] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06,
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
};

static const struct of_port ports[2] = {
	{.port_no = 1, .hw_addr = {2, 0, 0, 0, 0, 1}, .name = "veth1", .config = 0, .state = 4,
	 .curr = 0x840, .advertised = 0, .supported = 0x840, .peer = 0},
	{.port_no = 0xfffffffeu, .hw_addr = {2, 0, 0, 0, 0, 0xfe}, .name = "br0", .config = 1,
	 .state = 1},
};

static const struct of_port_stats pstats[2] = {
	{.port_no = 1, .rx_packets = 10, .tx_packets = 20, .rx_bytes = 1000, .tx_bytes = 2000,
	 .rx_dropped = 1, .collisions = 7},
	{.port_no = 2, .rx_packets = 1ull << 40, .tx_bytes = ~0ull, .rx_crc_err = 3},
};

static struct of_flow_stats fstats[2];

static void init_fstats(void)
{
	memset(fstats, 0, sizeof(fstats));
	fstats[0].priority = 100;
	fstats[0].idle_timeout = 60;
	fstats[0].cookie = 0x1122334455667788ull;
	fstats[0].packet_count = 5;
	fstats[0].byte_count = 500;
	fstats[0].duration_sec = 12;
	fstats[0].match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_DST;
	fstats[0].match.in_port = 1;
	memcpy(fstats[0].match.eth_dst, "\x02\x00\x00\x00\x00\x02", 6);
	fstats[0].actions.n = 1;
	fstats[0].actions.a[0].port = 2;
	fstats[1].priority = 0; /* the table-miss entry */
	fstats[1].actions.n = 1;
	fstats[1].actions.a[0].port = OFPP_CONTROLLER;
	fstats[1].actions.a[0].max_len = 0xffff;
}

static void set_match(struct of_match *m)
{
	m->fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_SRC | OF_MATCH_ETH_DST | OF_MATCH_ETH_TYPE;
	m->in_port = 3;
	memcpy(m->eth_src, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(m->eth_dst, "\x02\x00\x00\x00\x00\x02", 6);
	m->eth_type = 0x0800;
}

size_t of_samples(uint8_t version, struct of_msg *out, size_t max)
{
	struct of_msg s[24];
	size_t n = 0;
	bool v13 = version == OF_VERSION_1_3;
	memset(s, 0, sizeof(s));
	init_fstats();
#define NEXT(t) (s[n].version = version, s[n].type = (t), s[n].xid = 0x1000u + (uint32_t)n, &s[n++])
	struct of_msg *m = NEXT(OF_HELLO);
	m->u.hello.has_bitmap = v13;
	m->u.hello.bitmap = v13 ? OF_VERSIONS_SUPPORTED : 0;
	m = NEXT(OF_ERROR);
	m->u.error.type = OFPET_BAD_REQUEST;
	m->u.error.code = OFPBRC_BAD_LEN;
	m->u.error.data = frame;
	m->u.error.data_len = 16;
	m = NEXT(OF_ECHO_REQUEST);
	m->u.echo.data = frame;
	m->u.echo.data_len = 8;
	NEXT(OF_ECHO_REPLY);
	NEXT(OF_FEATURES_REQUEST);
	m = NEXT(OF_FEATURES_REPLY);
	m->u.features.datapath_id = 0x0000aabbccddeeffull;
	m->u.features.n_buffers = 0;
	m->u.features.n_tables = v13 ? 254 : 1;
	m->u.features.capabilities = 0x4f;
	if (v13) {
		m->u.features.auxiliary_id = 0;
	} else {
		m->u.features.actions = 0xfff;
		m->u.features.ports.n = 2;
		m->u.features.ports.items = ports;
	}
	m = NEXT(OF_SET_CONFIG);
	m->u.config.miss_send_len = 0xffff;
	m = NEXT(OF_PACKET_IN);
	m->u.packet_in.buffer_id = OFP_NO_BUFFER;
	m->u.packet_in.total_len = sizeof(frame);
	m->u.packet_in.reason = 0;
	m->u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m->u.packet_in.match.in_port = 1;
	m->u.packet_in.data = frame;
	m->u.packet_in.data_len = sizeof(frame);
	if (v13)
		m->u.packet_in.cookie = 42;
	m = NEXT(OF_PACKET_OUT);
	m->u.packet_out.buffer_id = OFP_NO_BUFFER;
	m->u.packet_out.in_port = 1;
	m->u.packet_out.actions.n = 2;
	m->u.packet_out.actions.a[0].port = OFPP_FLOOD;
	m->u.packet_out.actions.a[1].port = 4;
	m->u.packet_out.data = frame;
	m->u.packet_out.data_len = sizeof(frame);
	m = NEXT(OF_FLOW_MOD);
	m->u.flow_mod.command = OFPFC_ADD;
	m->u.flow_mod.idle_timeout = 60;
	m->u.flow_mod.priority = 100;
	m->u.flow_mod.buffer_id = OFP_NO_BUFFER;
	m->u.flow_mod.out_port = OFPP_ANY;
	m->u.flow_mod.out_group = OFPG_ANY;
	m->u.flow_mod.flags = OFPFF_SEND_FLOW_REM;
	m->u.flow_mod.cookie = 7;
	set_match(&m->u.flow_mod.match);
	m->u.flow_mod.actions.n = 1;
	m->u.flow_mod.actions.a[0].port = 2;
	m = NEXT(OF_FLOW_MOD); /* delete all */
	m->u.flow_mod.command = OFPFC_DELETE;
	m->u.flow_mod.table_id = v13 ? OFPTT_ALL : 0;
	m->u.flow_mod.buffer_id = OFP_NO_BUFFER;
	m->u.flow_mod.out_port = OFPP_ANY;
	m->u.flow_mod.out_group = OFPG_ANY;
	m = NEXT(OF_FLOW_REMOVED);
	m->u.flow_removed.cookie = 7;
	m->u.flow_removed.priority = 100;
	m->u.flow_removed.reason = 0;
	m->u.flow_removed.duration_sec = 61;
	m->u.flow_removed.duration_nsec = 5000;
	m->u.flow_removed.idle_timeout = 60;
	m->u.flow_removed.packet_count = 3;
	m->u.flow_removed.byte_count = 180;
	set_match(&m->u.flow_removed.match);
	m = NEXT(OF_PORT_STATUS);
	m->u.port_status.reason = 2;
	m->u.port_status.port = ports[0];
	m = NEXT(OF_MULTIPART_REQUEST);
	m->u.mp_request.mp_type = OF_MP_FLOW;
	m->u.mp_request.table_id = v13 ? OFPTT_ALL : 0xff;
	m->u.mp_request.out_port = OFPP_ANY;
	m->u.mp_request.out_group = OFPG_ANY;
	m = NEXT(OF_MULTIPART_REQUEST);
	m->u.mp_request.mp_type = OF_MP_PORT_STATS;
	m->u.mp_request.port_no = OFPP_ANY;
	m = NEXT(OF_MULTIPART_REPLY);
	m->u.mp_reply.mp_type = OF_MP_PORT_STATS;
	m->u.mp_reply.body.n = 2;
	m->u.mp_reply.body.items = pstats;
	m = NEXT(OF_MULTIPART_REPLY);
	m->u.mp_reply.mp_type = OF_MP_FLOW;
	m->u.mp_reply.flags = OFPMPF_MORE;
	m->u.mp_reply.body.n = 2;
	m->u.mp_reply.body.items = fstats;
	if (v13) {
		m = NEXT(OF_MULTIPART_REQUEST);
		m->u.mp_request.mp_type = OF_MP_PORT_DESC;
		m = NEXT(OF_MULTIPART_REPLY);
		m->u.mp_reply.mp_type = OF_MP_PORT_DESC;
		m->u.mp_reply.body.n = 2;
		m->u.mp_reply.body.items = ports;
	}
	NEXT(OF_BARRIER_REQUEST);
	NEXT(OF_BARRIER_REPLY);
#undef NEXT
	if (n > max)
		n = max;
	memcpy(out, s, n * sizeof(s[0]));
	return n;
}
