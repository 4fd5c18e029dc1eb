/*
 * tests/fuzz/gen_corpus.c: writes the seed corpus of fuzz_of_parser into a directory: the
 * hand-written golden vectors, every sample message of both versions, and a few whole
 * sessions (HELLO, FEATURES_REPLY, PORT_STATUS, PACKET_IN... back to back), so the fuzzer
 * starts from valid messages and from the negotiation path. Run by hand when the samples
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
	return rc ? 1 : 0;
}
