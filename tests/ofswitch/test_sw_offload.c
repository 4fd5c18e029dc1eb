/*
 * tests/ofswitch/test_sw_offload.c: what ringflow-switch --offload puts into the kernel's
 * table (sw_offload_decide over sw_offload_classify), without a kernel: a decision is
 * offloaded only when it came from one table, a program the XDP program runs the same way,
 * and bits of the key every frame of the entry shares (an ip_dscp, vlan_pcp, flow label or
 * ARP match keeps the microflow in userspace; a lower-priority subtable the walk never
 * reached does not). The entries themselves on veth: offload_test.sh (root).
 */
#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "sw.h"
#include "sw_offload.h"

static struct sw_dp dp;
static bool fast[3] = {true, true, false}; /* port 3 has no fast path */
static struct sw_table *t;
static struct sw_flow *flows[16];
static unsigned nflows;

static void setup(void)
{
	rf_qsbr_register();
	memset(&dp, 0, sizeof(dp));
	dp.nports = 3;
	for (unsigned i = 0; i < 3; i++) /* only compared as pointers */
		dp.ports[i].dev = (struct rf_io_dev *)(uintptr_t)(0x1000 * (i + 1));
	t = sw_table_create(1);
	cr_assert(t);
	nflows = 0;
}

static void teardown(void)
{
	sw_table_free(t);
	for (unsigned i = 0; i < nflows; i++) {
		free(atomic_load(&flows[i]->actions));
		free(flows[i]);
	}
	rf_qsbr_unregister();
}

TestSuite(sw_offload, .init = setup, .fini = teardown);

/* A UDP/IPv4 key from port 1 to udp port dport, TOS dscp << 2. */
static struct sw_key udp_key(uint16_t dport, uint8_t dscp)
{
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = 1;
	memcpy(k.eth_dst, "\x02\0\0\0\0\x0b", 6);
	memcpy(k.eth_src, "\x02\0\0\0\0\x0a", 6);
	k.eth_type = 0x0800;
	memcpy(k.nw_src, "\x0a\0\0\x01", 4);
	memcpy(k.nw_dst, "\x0a\0\0\x02", 4);
	k.ip_proto = 17;
	k.ip_dscp = dscp;
	k.tp_src = 5000;
	k.tp_dst = dport;
	return k;
}

/* A flow of priority prio in table 0 matching in_port 1, IPv4, and (when dport) UDP dport,
 * (dscp >= 0) ip_dscp; its program: ops[0..n). */
static struct sw_flow *add(uint16_t prio, uint16_t dport, int dscp, const struct sw_op *ops,
			   unsigned n)
{
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert(f);
	f->match.in_port = 1, f->mask.in_port = ~0u;
	f->match.eth_type = 0x0800, f->mask.eth_type = 0xffff;
	if (dport) {
		f->match.ip_proto = 17, f->mask.ip_proto = 0xff;
		f->match.tp_dst = dport, f->mask.tp_dst = 0xffff;
	}
	if (dscp >= 0)
		f->match.ip_dscp = (uint8_t)dscp, f->mask.ip_dscp = 0x3f;
	f->priority = prio;
	struct sw_actions *x = calloc(1, sizeof(*x));
	cr_assert(x);
	if (n) /* ops may be NULL for a program of no action */
		memcpy(x->op, ops, n * sizeof(*ops));
	x->n = (uint8_t)n;
	sw_actions_mark_last_out(x);
	atomic_init(&f->actions, x);
	return f;
}

static struct sw_flow *put(struct sw_flow *f)
{
	cr_assert_eq(sw_table_add(t, f), 0);
	flows[nflows++] = f;
	return f;
}

static enum sw_off_why decide(const struct sw_key *k, struct sw_off_plan *p)
{
	struct sw_key consulted;
	struct sw_flow *f = sw_offload_classify(t, k, &consulted);
	cr_assert_eq(f, sw_table_classify(t, k), "the same answer as the classifier");
	return sw_offload_decide(&dp, fast, k, f, &consulted, p);
}

static const struct sw_op OUT2 = {.code = SW_OP_OUTPUT, .arg = 2, .max_len = 0xffff};

Test(sw_offload, output_and_mac_rewrite_offloaded)
{
	struct sw_op ops[2] = {{.code = SW_OP_SET_ETH_DST, .mac = {2, 0xbb, 0, 0, 0, 9}}, OUT2};
	put(add(100, 9000, -1, ops, 2));
	struct sw_key k = udp_key(9000, 0);
	struct sw_off_plan p;
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.n, 2);
	cr_assert_eq(p.a[0].type, RF_OFFLOAD_SET_ETH_DST);
	cr_assert_eq(memcmp(p.a[0].mac, ops[0].mac, 6), 0);
	cr_assert_eq(p.a[1].type, RF_OFFLOAD_OUTPUT);
	cr_assert_eq(p.a[1].port, dp.ports[1].dev);
	cr_assert_eq(p.out, 1);
	/* The flow looked at in_port, eth_type, ip_proto and tp_dst: the entry names those
	 * (in_port is the table's own) and WHOLE, nothing the classifier did not look at. */
	uint32_t want = RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_IP_PROTO |
			RF_OFFLOAD_F_L4_DST;
	cr_assert_eq(p.m.fields, want, "the consulted fields only: %#x", p.m.fields);
	cr_assert_eq(p.m.l4_dst, 9000);
	cr_assert_eq(p.m.ip_proto, 17);
	cr_assert_eq(p.m.eth_type, 0x0800);
	/* the bytes it fixes, which sw_offload_flow_new compares a new flow against */
	cr_assert_eq(p.det.in_port, ~0u);
	cr_assert_eq(p.det.tp_dst, 0xffff);
	cr_assert_eq(p.det.tp_src, 0, "not named: a flow on tp_src meets the entry");
	cr_assert_eq(p.det.nw_src[0], 0);
}

Test(sw_offload, a_flow_on_in_port_alone_makes_a_port_wide_entry)
{
	struct sw_flow *f = add(100, 0, -1, &OUT2, 1);
	f->match.eth_type = 0, f->mask.eth_type = 0; /* in_port=1 only */
	put(f);
	struct sw_off_plan p;
	struct sw_key k = udp_key(9000, 0);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE, "one entry for every whole frame: %#x",
		     p.m.fields);
	k.vlan = 0x1000 | 7; /* a tagged frame: the same entry */
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE);
	/* a pop_vlan: the byte count out depends on the tag, so the entry names it */
	struct sw_op pop[2] = {{.code = SW_OP_POP_VLAN}, OUT2};
	sw_table_remove(t, f);
	f = add(100, 0, -1, pop, 2);
	f->match.eth_type = 0, f->mask.eth_type = 0;
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_VLAN);
	cr_assert_eq(p.m.vlan, 7);
	cr_assert_eq(p.tx_adj, -4);
	k.vlan = 0;
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_UNTAGGED);
	cr_assert_eq(p.tx_adj, 0);
}

Test(sw_offload, ports_of_a_protocol_without_them_name_the_protocol)
{
	/* A higher subtable on tp_dst (UDP 53) is probed and misses an ICMP key, whose tp
	 * fields hold type and code: not on the menu, so not offloaded. A protocol with no
	 * ports (GRE, 47) has them zero: the entry names the protocol, which fixes that. */
	put(add(200, 53, -1, &OUT2, 1));
	put(add(100, 0, -1, &OUT2, 1));
	struct sw_off_plan p;
	struct sw_key k = udp_key(0, 0);
	k.ip_proto = 1, k.tp_src = 8, k.tp_dst = 0;
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH);
	k.ip_proto = 47, k.tp_src = 0;
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_ETH_TYPE | RF_OFFLOAD_F_IP_PROTO);
	cr_assert_eq(p.m.ip_proto, 47);
	k = udp_key(9000, 0); /* UDP: the port itself */
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_ETH_TYPE |
				     RF_OFFLOAD_F_IP_PROTO | RF_OFFLOAD_F_L4_DST);
	cr_assert_eq(p.m.l4_dst, 9000);
}

Test(sw_offload, dscp_match_stays_in_userspace)
{
	put(add(100, 0, 10, &OUT2, 1));
	struct sw_key k = udp_key(9000, 10);
	struct sw_off_plan p;
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH, "an entry cannot tell DSCP 10 from 11");
}

Test(sw_offload, unvisited_lower_subtable_does_not_matter)
{
	put(add(100, 9000, -1, &OUT2, 1)); /* probed first, wins: the walk stops */
	put(add(50, 0, 10, &OUT2, 1));     /* on ip_dscp, below */
	struct sw_off_plan p;
	struct sw_key k = udp_key(9000, 10);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	k = udp_key(9001, 10); /* misses the first: the dscp subtable decides */
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH);
	k = udp_key(9001, 0); /* no flow; the dscp subtable was consulted anyway */
	cr_assert_eq(decide(&k, &p), SW_OFF_NO_FLOW);
}

Test(sw_offload, higher_subtable_consulted_on_a_miss)
{
	put(add(200, 0, 10, &OUT2, 1)); /* probed first, misses DSCP 0 */
	put(add(100, 9000, -1, &OUT2, 1));
	struct sw_off_plan p;
	struct sw_key k = udp_key(9000, 0);
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH, "a frame with DSCP 10 would get the other flow");
}

Test(sw_offload, programs_the_kernel_cannot_run)
{
	struct sw_off_plan p;
	struct sw_key k = udp_key(9000, 0);
	struct {
		struct sw_op ops[4];
		unsigned n;
		enum sw_off_why want;
	} c[] = {
		{{{.code = SW_OP_OUTPUT, .arg = OFPP_CONTROLLER}}, 1, SW_OFF_CONTROLLER},
		{{{.code = SW_OP_OUTPUT, .arg = OFPP_FLOOD}}, 1, SW_OFF_OUTPUTS},
		{{{.code = SW_OP_OUTPUT, .arg = 3}}, 1, SW_OFF_OUTPUTS}, /* no fast path */
		{{OUT2, {.code = SW_OP_OUTPUT, .arg = 2}}, 2, SW_OFF_OUTPUTS},
		{{{.code = SW_OP_GROUP, .arg = 1}}, 1, SW_OFF_GROUP},
		{{{.code = SW_OP_SET_IPV4_DST, .arg = 1}, OUT2}, 2, SW_OFF_ACTION},
		{{{.code = SW_OP_SET_IP_DSCP, .arg = 1}, OUT2}, 2, SW_OFF_ACTION},
		{{{.code = SW_OP_SET_VLAN_VID, .arg = 5}, OUT2}, 2, SW_OFF_ACTION}, /* own tag */
		{{{.code = SW_OP_PUSH_VLAN, .arg = 0x8100}, {.code = SW_OP_SET_VLAN_VID, .arg = 5},
		  OUT2}, 3, SW_OFF_ACTION}, /* PCP would come from the frame's own tag */
		{{{.code = SW_OP_PUSH_VLAN, .arg = 0x8100}, {.code = SW_OP_DEC_NW_TTL}, OUT2}, 3,
		 SW_OFF_ACTION},
		{{{.code = SW_OP_DEC_NW_TTL}, {.code = SW_OP_DEC_NW_TTL}, OUT2}, 3, SW_OFF_ACTION},
	};
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct sw_flow *f = put(add((uint16_t)(100 + i), 9000, -1, c[i].ops, c[i].n));
		cr_assert_eq(decide(&k, &p), c[i].want, "case %u: %d", i, decide(&k, &p));
		sw_table_remove(t, f);
	}
	struct sw_flow *f = put(add(300, 9000, -1, &OUT2, 1));
	struct sw_actions *x = atomic_load(&f->actions);
	x->meter_id = 1;
	cr_assert_eq(decide(&k, &p), SW_OFF_METER);
	x->meter_id = 0;
	x->goto_table = 1;
	cr_assert_eq(decide(&k, &p), SW_OFF_PIPELINE);
	x->goto_table = 0;
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
}

Test(sw_offload, vlan_push_dec_ttl_and_drop)
{
	struct sw_off_plan p;
	struct sw_key k = udp_key(9000, 0);
	struct sw_op push[5] = {{.code = SW_OP_DEC_NW_TTL}, {.code = SW_OP_PUSH_VLAN, .arg = 0x8100},
				{.code = SW_OP_SET_VLAN_VID, .arg = 7},
				{.code = SW_OP_SET_VLAN_PCP, .arg = 3}, OUT2};
	struct sw_flow *f = put(add(100, 9000, -1, push, 5));
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.n, 3);
	cr_assert_eq(p.a[0].type, RF_OFFLOAD_DEC_TTL);
	cr_assert_eq(p.a[1].type, RF_OFFLOAD_PUSH_VLAN);
	cr_assert_eq(p.a[1].vlan, 7);
	cr_assert_eq(p.a[1].pcp, 3);
	cr_assert_eq(p.a[2].type, RF_OFFLOAD_OUTPUT);
	cr_assert_eq(p.tx_adj, 4);
	sw_table_remove(t, f);
	struct sw_op none = {.code = SW_OP_SET_ETH_SRC}; /* no output: dropped */
	put(add(100, 9000, -1, &none, 1));
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.n, 1);
	cr_assert_eq(p.a[0].type, RF_OFFLOAD_DROP);
	cr_assert_eq(p.out, -1);
	struct sw_op self = {.code = SW_OP_OUTPUT, .arg = 1}; /* its in port: sends nothing */
	put(add(200, 9000, -1, &self, 1));
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.a[0].type, RF_OFFLOAD_DROP);
}

Test(sw_offload, fields_an_entry_cannot_fix)
{
	struct sw_off_plan p;
	/* vlan_vid=NONE (untagged), and a pcp match on untagged frames: the entry says
	 * "untagged", so no tagged frame with the same inner fields takes it */
	struct sw_flow *f = add(100, 0, -1, &OUT2, 1);
	f->mask.vlan = 0x1fff;
	f->mask.vlan_pcp = 7;
	put(f);
	struct sw_key k = udp_key(9000, 0);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert(p.m.fields & RF_OFFLOAD_F_UNTAGGED);
	cr_assert_eq(p.m.fields & (RF_OFFLOAD_F_VLAN | RF_OFFLOAD_F_CTAG), 0);
	k.vlan = 0x1000 | 5; /* tagged: a flow on the VID is fine */
	f = add(200, 0, -1, &OUT2, 1);
	f->match.vlan = 0x1000 | 5, f->mask.vlan = 0x1fff;
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert(p.m.fields & RF_OFFLOAD_F_VLAN);
	cr_assert_eq(p.m.fields & (RF_OFFLOAD_F_UNTAGGED | RF_OFFLOAD_F_CTAG), 0,
		     "802.1Q and 802.1ad tags alike, as the switch's parser reads them");
	cr_assert_eq(p.m.vlan, 5);
	f = add(300, 0, -1, &OUT2, 1); /* vlan_pcp: not on the menu */
	f->match.vlan_pcp = 0, f->mask.vlan_pcp = 7;
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH);
}

Test(sw_offload, arp_and_ipv6_keys)
{
	struct sw_off_plan p;
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = 1;
	k.eth_type = 0x0806;
	k.arp_op = 1;
	memcpy(k.nw_dst, "\x0a\0\0\x02", 4);
	struct sw_flow *f = add(100, 0, -1, &OUT2, 1); /* eth_type ARP only: fine */
	f->match.eth_type = 0x0806;
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert_eq(p.m.fields, RF_OFFLOAD_F_WHOLE | RF_OFFLOAD_F_ETH_TYPE);
	cr_assert_eq(p.m.eth_type, 0x0806);
	f = add(200, 0, -1, &OUT2, 1); /* on the ARP target: not on the menu */
	f->match.eth_type = 0x0806;
	memcpy(f->match.nw_dst, "\x0a\0\0\x02", 4);
	memset(f->mask.nw_dst, 0xff, 4);
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH);

	memset(&k, 0, sizeof(k));
	k.in_port = 1;
	k.eth_type = 0x86dd;
	k.nw_dst[0] = 0xfd, k.nw_dst[15] = 2;
	k.ip_proto = 6;
	k.tp_dst = 80;
	k.flabel = 0x12345;
	f = add(100, 0, -1, &OUT2, 1);
	f->match.eth_type = 0x86dd;
	f->match.ip_proto = 6, f->mask.ip_proto = 0xff;
	f->match.tp_dst = 80, f->mask.tp_dst = 0xffff;
	memcpy(f->match.nw_dst, k.nw_dst, 16);
	memset(f->mask.nw_dst, 0xff, 16);
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_OK);
	cr_assert(p.m.fields & RF_OFFLOAD_F_IP6_DST);
	cr_assert(p.m.fields & RF_OFFLOAD_F_L4_DST);
	cr_assert_eq(memcmp(p.m.ip6_dst, k.nw_dst, 16), 0);
	f = add(300, 0, -1, &OUT2, 1); /* the flow label: not on the menu */
	f->match.eth_type = 0x86dd;
	f->match.flabel = 0x12345, f->mask.flabel = 0xfffff;
	put(f);
	cr_assert_eq(decide(&k, &p), SW_OFF_MATCH);
}

Test(sw_offload, a_match_outside_the_key_stays_in_userspace)
{
	/* tunnel_id (sw_xmatch.c): no kernel entry matches it, so a decision made where such a
	 * subtable was probed is not offloaded, whichever flow won */
	struct sw_flow *tun = add(200, 9000, -1, &OUT2, 1);
	tun->x.v.tunnel_id = 5, tun->x.m.tunnel_id = ~0ull;
	put(tun);
	put(add(100, 9000, -1, &OUT2, 1));
	struct sw_key k = udp_key(9000, 0), consulted;
	struct sw_off_plan p;
	struct sw_flow *f = sw_offload_classify(t, &k, &consulted);
	cr_assert_eq(sw_offload_decide(&dp, fast, &k, f, &consulted, &p), SW_OFF_MATCH,
		     "a frame with tunnel_id 5 would get the other flow");
}

/* ---- pipelines (sw_offload_follow): flows that only pass the frame on, then one that acts */

/* decide() through the tables, as the agent's consider() does. */
static enum sw_off_why decide_chain(const struct sw_key *k, struct sw_off_chain *ch,
				    struct sw_key *consulted, struct sw_off_plan *p)
{
	struct sw_flow *f = sw_offload_classify(t, k, consulted);
	enum sw_off_why w = sw_offload_follow(t, k, f, ch, consulted);
	return w == SW_OFF_OK ? sw_offload_decide_chain(&dp, fast, k, ch, consulted, p) : w;
}

/* pipe3's shape: table 0 on the UDP port -> goto 1 writing metadata 7; table 1 on eth_dst
 * at metadata 7 -> goto 2; table 2 on the IPv4 destination (a /24 over a /8) -> set eth_dst,
 * output 2. The entry runs table 2's program and names what the three walks looked at. */
Test(sw_offload, a_pipeline_that_only_passes_on_is_offloaded)
{
	struct sw_flow *f0 = add(10, 9000, -1, NULL, 0);
	struct sw_actions *x0 = atomic_load(&f0->actions);
	x0->goto_table = 1;
	x0->inst = SW_INST_META;
	x0->md = 7, x0->md_mask = 0xff;
	put(f0);
	struct sw_flow *f1 = add(10, 0, -1, NULL, 0);
	memset(&f1->match, 0, sizeof(f1->match));
	memset(&f1->mask, 0, sizeof(f1->mask));
	memcpy(f1->match.eth_dst, "\x02\0\0\0\0\x0b", 6);
	memset(f1->mask.eth_dst, 0xff, 6);
	f1->table_id = 1;
	f1->md = 7, f1->md_mask = 0xff, f1->has_md = true;
	atomic_load(&f1->actions)->goto_table = 2;
	put(f1);
	struct sw_op ops[2] = {{.code = SW_OP_SET_ETH_DST, .mac = {2, 0xcc, 0, 0, 0, 1}}, OUT2};
	struct sw_flow *r8 = NULL, *r24 = NULL;
	for (unsigned len = 8; len <= 24; len += 16) {
		struct sw_flow *f = add((uint16_t)(100 + len), 0, -1, ops, 2);
		memset(&f->match, 0, sizeof(f->match));
		memset(&f->mask, 0, sizeof(f->mask));
		f->match.eth_type = 0x0800, f->mask.eth_type = 0xffff;
		memcpy(f->match.nw_dst, "\x0a\0\0\0", 4);
		memset(f->mask.nw_dst, 0xff, len / 8);
		f->table_id = 2;
		*(len == 8 ? &r8 : &r24) = put(f);
	}
	struct sw_key k = udp_key(9000, 0), consulted;
	struct sw_off_chain ch;
	struct sw_off_plan p;
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_OK);
	cr_assert_eq(ch.n, 3);
	cr_assert(ch.f[0] == f0 && ch.f[1] == f1 && ch.f[2] == r24, "the /24 wins in table 2");
	cr_assert_eq(ch.md[1], 7, "table 1 was asked with the metadata table 0 wrote");
	cr_assert_eq(p.n, 2);
	cr_assert_eq(p.a[0].type, RF_OFFLOAD_SET_ETH_DST);
	cr_assert_eq(p.a[1].type, RF_OFFLOAD_OUTPUT);
	cr_assert_eq(p.det.tp_dst, 0xffff, "table 0's field");
	cr_assert_eq(p.det.eth_dst[5], 0xff, "table 1's");
	cr_assert_eq(p.det.nw_dst[2], 0xff, "table 2's /24");
	cr_assert_eq(p.det.nw_dst[3], 0xff, "an entry names an address whole");
	cr_assert_eq(p.det.nw_src[0], 0, "no table looked at the source");
	cr_assert(p.m.fields & RF_OFFLOAD_F_ETH_DST);
	cr_assert(p.m.fields & RF_OFFLOAD_F_IP4_DST);
	(void)r8;
}

/* A step before the last with an action of its own, a later table with no flow, a meter on
 * the last step: userspace keeps each. */
Test(sw_offload, pipelines_the_kernel_cannot_repeat)
{
	struct sw_flow *f0 = put(add(10, 9000, -1, &OUT2, 1));
	struct sw_actions *x0 = atomic_load(&f0->actions);
	x0->goto_table = 1; /* output 2 and goto: a copy out, then more */
	struct sw_key k = udp_key(9000, 0), consulted;
	struct sw_off_chain ch;
	struct sw_off_plan p;
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_PIPELINE);
	x0->n = 0, x0->last_out = 0; /* now it only passes on, to a table 1 without flows */
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_NO_FLOW);
	struct sw_flow *f1 = add(10, 0, -1, &OUT2, 1);
	memset(&f1->match, 0, sizeof(f1->match));
	memset(&f1->mask, 0, sizeof(f1->mask));
	f1->table_id = 1;
	put(f1);
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_OK);
	atomic_load(&f1->actions)->meter_id = 1;
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_METER);
	atomic_load(&f1->actions)->meter_id = 0;
	atomic_load(&f1->actions)->write = 1; /* an action set: the set would run, not this */
	cr_assert_eq(decide_chain(&k, &ch, &consulted, &p), SW_OFF_PIPELINE);
}
