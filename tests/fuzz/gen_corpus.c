/*
 * tests/fuzz/gen_corpus.c: writes the seed corpus of fuzz_of_parser into a directory: the
 * hand-written golden vectors, every sample message of both versions, and a few whole
 * sessions (HELLO, FEATURES_REPLY, PORT_STATUS, PACKET_IN... back to back), so the fuzzer
 * starts from valid messages and from the negotiation path; and one of each of_xmsg kind
 * (roles, async config, GET_CONFIG, DESC/AGGREGATE/TABLE), alone and as a session after a
 * HELLO, so of_xparse is reached from the start. Run by hand when the samples
 * change: build-fuzz/tests/fuzz/gen_corpus tests/fuzz/corpus/openflow
 */
#include <stdio.h>
#include <string.h>

#include "of.h"
#include "of_eth.h"
#include "openflow/of_golden_vectors.h"
#include "openflow/of_samples.h"

static int write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n) {
		fprintf(stderr, "gen_corpus: cannot write %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/* One seed per of_xmsg kind, then all of them after a HELLO in "session_x". */
static int xmsg_seeds(const char *dir)
{
	static const char *names[OF_XTYPE_COUNT] = {
		"get_config_request", "get_config_reply", "role_request", "role_reply",
		"get_async_request", "get_async_reply", "set_async", "desc_request", "desc_reply",
		"aggregate_request", "aggregate_reply", "table_request", "table_reply"};
	static uint8_t session[32768];
	struct of_table_stats ts[2] = {{0, 3, 1000, 900}, {1, 0, 5, 0}};
	ssize_t sl = of_build_hello(session, sizeof(session), OF_VERSION_1_3, 1,
				    1u << OF_VERSION_1_3);
	int rc = 0;
	if (sl < 0)
		return -1;
	for (unsigned t = 0; t < OF_XTYPE_COUNT; t++) {
		struct of_xmsg x = {.version = OF_VERSION_1_3, .type = (enum of_xtype)t, .xid = 100 + t};
		x.u.config = (struct of_config){.flags = 1, .miss_send_len = 128};
		if (t == OF_X_ROLE_REQUEST || t == OF_X_ROLE_REPLY)
			x.u.role = (struct of_role){OFPCR_ROLE_MASTER, 42};
		if (t == OF_X_GET_ASYNC_REPLY || t == OF_X_SET_ASYNC)
			x.u.async = (struct of_async){{3, 0}, {7, 7}, {15, 0}};
		if (t == OF_X_DESC_REPLY) {
			snprintf(x.u.desc.mfr, sizeof(x.u.desc.mfr), "ringflow");
			snprintf(x.u.desc.serial, sizeof(x.u.desc.serial), "None");
			snprintf(x.u.desc.dp, sizeof(x.u.desc.dp), "dpid 1");
		}
		if (t == OF_X_AGGREGATE_REQUEST) {
			struct of_mp_request *r = &x.u.aggregate_request;
			r->table_id = OFPTT_ALL;
			r->out_port = OFPP_ANY;
			r->out_group = OFPG_ANY;
			r->cookie_mask = 0xff;
			r->match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO;
			r->match.in_port = 1;
			r->match.eth_type = 0x0800;
			r->match.ip_proto = 1;
		}
		if (t == OF_X_AGGREGATE_REPLY)
			x.u.aggregate = (struct of_aggregate){10, 980, 2};
		if (t == OF_X_TABLE_REPLY) {
			x.u.tables.n = 2;
			x.u.tables.items = ts;
		}
		uint8_t buf[2048];
		ssize_t n = of_xserialize(&x, buf, sizeof(buf));
		if (n < 0)
			return -1;
		char name[64];
		snprintf(name, sizeof(name), "xmsg_%s", names[t]);
		rc |= write_file(dir, name, buf, (size_t)n);
		if ((size_t)sl + (size_t)n <= sizeof(session)) {
			memcpy(session + sl, buf, (size_t)n);
			sl += n;
		}
	}
	return rc | write_file(dir, "session_x", session, (size_t)sl);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	int rc = 0;
	rc |= write_file(dir, "golden_hello13", hello13, sizeof(hello13));
	rc |= write_file(dir, "golden_table_miss", table_miss, sizeof(table_miss));
	rc |= write_file(dir, "golden_flow_mod_oxm", flow_mod_oxm, sizeof(flow_mod_oxm));
	rc |= write_file(dir, "golden_packet_in13", packet_in13, sizeof(packet_in13));
	rc |= write_file(dir, "golden_packet_in10", packet_in10, sizeof(packet_in10));
	rc |= write_file(dir, "golden_features10", features10, sizeof(features10));

	/* A PACKET_IN carrying our LLDP frame, as topology discovery receives it. */
	uint8_t lldp[128], msg[512];
	ssize_t ll = of_lldp_build(lldp, sizeof(lldp), (const uint8_t *)"\x02\0\0\0\0\1", 1, 2, 120);
	struct of_msg pi = {.version = OF_VERSION_1_3, .type = OF_PACKET_IN, .xid = 1};
	pi.u.packet_in.buffer_id = OFP_NO_BUFFER;
	pi.u.packet_in.total_len = (uint16_t)ll;
	pi.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	pi.u.packet_in.match.in_port = 2;
	pi.u.packet_in.data = lldp;
	pi.u.packet_in.data_len = (uint16_t)ll;
	ssize_t ml = of_serialize(&pi, msg, sizeof(msg));
	if (ll < 0 || ml < 0)
		return 1;
	rc |= write_file(dir, "packet_in13_lldp", msg, (size_t)ml);

	/* The same from a later table with the pipeline fields a switch sends (1.3.5 section
	 * 7.4.1): in_port, tunnel_id, metadata (ringflow-switch's order, as OVS's). */
	pi.u.packet_in.table_id = 1;
	pi.u.packet_in.match.fields |= OF_MATCH_TUNNEL_ID;
	pi.u.packet_in.match.tunnel_id = 0x0a0b0c0d;
	pi.u.packet_in.match.tunnel_id_mask = ~0ull;
	pi.u.packet_in.match.has_metadata = true;
	pi.u.packet_in.match.metadata = 0x8877665544332211ull;
	pi.u.packet_in.match.metadata_mask = ~0ull;
	ml = of_serialize(&pi, msg, sizeof(msg));
	if (ml < 0)
		return 1;
	rc |= write_file(dir, "packet_in13_pipeline", msg, (size_t)ml);

	/* FLOW_MODs and a PACKET_OUT with every action modelled (rewrites, VLAN, TTL). */
	struct of_msg fm = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 2};
	fm.u.flow_mod.buffer_id = OFP_NO_BUFFER;
	fm.u.flow_mod.out_port = OFPP_ANY;
	fm.u.flow_mod.out_group = OFPG_ANY;
	fm.u.flow_mod.match.fields = OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO;
	fm.u.flow_mod.match.eth_type = 0x0800;
	fm.u.flow_mod.match.ip_proto = 6;
	struct of_actions *a = &fm.u.flow_mod.actions;
	of_act_set_mac(a, OF_OXM_ETH_SRC, (const uint8_t *)"\x02\0\0\0\xaa\x01");
	of_act_set_mac(a, OF_OXM_ETH_DST, (const uint8_t *)"\x02\0\0\0\xbb\x02");
	of_act_set_field(a, OF_OXM_IPV4_SRC, 0x0a000001);
	of_act_set_field(a, OF_OXM_IPV4_DST, 0x0a000002);
	of_act_set_field(a, OF_OXM_TCP_SRC, 1234);
	of_act_set_field(a, OF_OXM_TCP_DST, 80);
	of_act_set_field(a, OF_OXM_IP_DSCP, 46);
	of_act_simple(a, OF_ACT_DEC_NW_TTL, 0);
	of_act_simple(a, OF_ACT_SET_NW_TTL, 9);
	of_act_output(a, 1, 0);
	of_act_simple(a, OF_ACT_PUSH_VLAN, 0x8100);
	of_act_set_field(a, OF_OXM_VLAN_VID, 0x1064);
	of_act_set_field(a, OF_OXM_VLAN_PCP, 5);
	of_act_output(a, 2, 0);
	of_act_simple(a, OF_ACT_POP_VLAN, 0);
	of_act_output(a, OFPP_CONTROLLER, 128);
	ml = of_serialize(&fm, msg, sizeof(msg));
	if (ml < 0)
		return 1;
	rc |= write_file(dir, "flow_mod13_actions", msg, (size_t)ml);
	memset(&fm.u.flow_mod.match, 0, sizeof(fm.u.flow_mod.match));
	fm.u.flow_mod.match.fields = OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO;
	fm.u.flow_mod.match.eth_type = 0x0800;
	fm.u.flow_mod.match.ip_proto = 17;
	memset(a, 0, sizeof(*a));
	of_act_set_field(a, OF_OXM_UDP_SRC, 5353);
	of_act_set_field(a, OF_OXM_UDP_DST, 53);
	of_act_output(a, OFPP_FLOOD, 0);
	ml = of_serialize(&fm, msg, sizeof(msg));
	if (ml < 0)
		return 1;
	rc |= write_file(dir, "flow_mod13_udp_actions", msg, (size_t)ml);
	/* the pipeline's instructions and the metadata match (issue 25) */
	fm.u.flow_mod.table_id = 1;
	fm.u.flow_mod.match.has_metadata = true;
	fm.u.flow_mod.match.metadata = 0x10;
	fm.u.flow_mod.match.metadata_mask = 0xf0;
	fm.u.flow_mod.inst.present = OF_INST_GOTO_TABLE | OF_INST_WRITE_METADATA |
				     OF_INST_WRITE_ACTIONS | OF_INST_CLEAR_ACTIONS;
	fm.u.flow_mod.inst.goto_table = 3;
	fm.u.flow_mod.inst.metadata = 0x5;
	fm.u.flow_mod.inst.metadata_mask = 0xff;
	of_act_simple(&fm.u.flow_mod.inst.write, OF_ACT_DEC_NW_TTL, 0);
	of_act_output(&fm.u.flow_mod.inst.write, 2, 0);
	ml = of_serialize(&fm, msg, sizeof(msg));
	if (ml < 0)
		return 1;
	rc |= write_file(dir, "flow_mod13_pipeline", msg, (size_t)ml);
	memset(&fm.u.flow_mod.inst, 0, sizeof(fm.u.flow_mod.inst));
	fm.u.flow_mod.table_id = 0;
	fm.u.flow_mod.match.has_metadata = false;
	struct of_msg po = {.version = OF_VERSION_1_3, .type = OF_PACKET_OUT, .xid = 3};
	po.u.packet_out.buffer_id = OFP_NO_BUFFER;
	po.u.packet_out.in_port = OFPP_CONTROLLER;
	of_act_simple(&po.u.packet_out.actions, OF_ACT_PUSH_VLAN, 0x88a8);
	of_act_set_mac(&po.u.packet_out.actions, OF_OXM_ETH_DST, (const uint8_t *)"\xff\xff\xff\xff\xff\xff");
	of_act_output(&po.u.packet_out.actions, OFPP_ALL, 0);
	po.u.packet_out.data = lldp;
	po.u.packet_out.data_len = (uint16_t)ll;
	ml = of_serialize(&po, msg, sizeof(msg));
	if (ml < 0)
		return 1;
	rc |= write_file(dir, "packet_out13_actions", msg, (size_t)ml);

	static const uint8_t versions[] = {OF_VERSION_1_0, OF_VERSION_1_3};
	for (unsigned v = 0; v < 2; v++) {
		struct of_msg s[OF_SAMPLES_MAX];
		size_t n = of_samples(versions[v], s, OF_SAMPLES_MAX);
		static uint8_t session[16384];
		size_t slen = 0;
		for (size_t i = 0; i < n; i++) {
			uint8_t buf[4096];
			ssize_t len = of_serialize(&s[i], buf, sizeof(buf));
			if (len < 0)
				return 1;
			char name[64];
			snprintf(name, sizeof(name), "sample_v%u_%02zu_%s", versions[v], i,
				 of_type_name(s[i].type));
			rc |= write_file(dir, name, buf, (size_t)len);
			if (slen + (size_t)len <= sizeof(session)) {
				memcpy(session + slen, buf, (size_t)len);
				slen += (size_t)len;
			}
		}
		char name[64];
		snprintf(name, sizeof(name), "session_v%u", versions[v]);
		rc |= write_file(dir, name, session, slen);
	}
	rc |= xmsg_seeds(dir);
	return rc ? 1 : 0;
}
