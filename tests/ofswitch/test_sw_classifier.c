/*
 * tests/ofswitch/test_sw_classifier.c: ringflow-switch's flow key and classifier alone:
 * frames parsed into keys (and refused when shorter than their headers claim), priorities,
 * masks and overlaps, the exact-match cache answering as the scan does; flows made from
 * decoded OXM matches (IPv4/IPv6 prefixes, TCP/UDP/ICMP, ARP, VLAN pcp, dscp) picking the
 * right frames, shared key slots kept apart by the prerequisites.
 */
#include "rf_test.h"

#include <stdlib.h>
#include <string.h>

#include <ringflow/qsbr.h>

#include "of_wire.h" /* of_match_parse: flows from raw OXM bytes */
#include "sw.h"

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 0xa}, mac_b[6] = {2, 0, 0, 0, 0, 0xb};

/* An Ethernet + IPv4 + UDP frame, ports sp -> dp; ip total length tot (0: correct). */
static uint32_t udp_frame(uint8_t *f, uint16_t sp, uint16_t dp, unsigned tot)
{
	memset(f, 0, 64);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	unsigned t = tot ? tot : 28;
	ip[2] = (uint8_t)(t >> 8);
	ip[3] = (uint8_t)t;
	ip[9] = 17;
	memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	ip[20] = (uint8_t)(sp >> 8), ip[21] = (uint8_t)sp;
	ip[22] = (uint8_t)(dp >> 8), ip[23] = (uint8_t)dp;
	return 14 + 28;
}

Test(sw_key, udp_fields)
{
	uint8_t f[64];
	struct sw_key k;
	uint32_t len = udp_frame(f, 1234, 53, 0);
	cr_assert_eq(sw_key_parse(f, len, 3, &k), 0);
	cr_assert_eq(k.in_port, 3);
	cr_assert_eq(memcmp(k.eth_dst, mac_b, 6), 0);
	cr_assert_eq(memcmp(k.eth_src, mac_a, 6), 0);
	cr_assert_eq(k.eth_type, 0x0800);
	cr_assert_eq(k.ip_proto, 17);
	cr_assert_eq(memcmp(k.nw_src, "\x0a\x00\x00\x01", 4), 0);
	cr_assert_eq(k.tp_src, 1234);
	cr_assert_eq(k.tp_dst, 53);
	cr_assert_eq(k.vlan, 0);
}

Test(sw_key, vlan_tag)
{
	uint8_t f[80], g[64];
	uint32_t len = udp_frame(g, 1, 2, 0);
	memcpy(f, g, 12);
	memcpy(f + 12, "\x81\x00\x20\x64", 4); /* pcp 1, vid 100 */
	memcpy(f + 16, g + 12, len - 12);
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, len + 4, 1, &k), 0);
	cr_assert_eq(k.vlan, 0x1000 | 100);
	cr_assert_eq(k.eth_type, 0x0800);
	cr_assert_eq(k.tp_dst, 2);
}

Test(sw_key, short_frames_refused)
{
	uint8_t f[64] = {0};
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, 13, 1, &k), -1, "shorter than Ethernet");
	uint32_t len = udp_frame(f, 1, 2, 200); /* IP claims 200 bytes, 28 are there */
	cr_assert_eq(sw_key_parse(f, len, 1, &k), -1, "IPv4 total length past the frame");
	len = udp_frame(f, 1, 2, 0);
	cr_assert_eq(sw_key_parse(f, 14 + 19, 1, &k), -1, "IPv4 header cut");
	f[14] = 0x4f; /* IHL 60 bytes */
	cr_assert_eq(sw_key_parse(f, len, 1, &k), -1, "IHL past the total length");
	memcpy(f + 12, "\x81\x00", 2);
	cr_assert_eq(sw_key_parse(f, 16, 1, &k), -1, "VLAN tag cut");
}

/* A flow: in_port (0 = wildcard), eth_dst (NULL = wildcard), priority, tag in cookie. */
static struct sw_flow *flow(uint32_t in_port, const uint8_t *dst, uint16_t prio, uint64_t tag)
{
	struct sw_flow *f = aligned_alloc(RF_CACHE_LINE, sizeof(*f));
	cr_assert(f);
	memset(f, 0, sizeof(*f));
	if (in_port) {
		f->match.in_port = in_port;
		f->mask.in_port = 0xffffffffu;
	}
	if (dst) {
		memcpy(f->match.eth_dst, dst, 6);
		memset(f->mask.eth_dst, 0xff, 6);
	}
	f->priority = prio;
	f->cookie = tag;
	f->created_ns = tag;
	return f;
}

static struct sw_flow *chain(struct sw_flow **v, unsigned n)
{
	for (unsigned i = 0; i + 1 < n; i++)
		v[i]->next = v[i + 1];
	v[n - 1]->next = NULL;
	return v[0];
}

static uint64_t look(struct sw_table *t, uint32_t in_port, const uint8_t *dst)
{
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = in_port;
	memcpy(k.eth_dst, dst, 6);
	struct sw_flow *f = sw_table_lookup(t, &k);
	struct sw_flow *again = sw_table_lookup(t, &k); /* now from the EMC */
	cr_assert_eq(f, again, "EMC answer differs from the scan's");
	return f ? f->cookie : 0;
}

Test(sw_classifier, priorities_masks_overlap)
{
	rf_qsbr_register();
	struct sw_flow *v[4] = {
		flow(0, NULL, 0, 1),     /* table-miss */
		flow(1, NULL, 10, 2),    /* everything from port 1 */
		flow(1, mac_b, 20, 3),   /* port 1 to b: overlaps 2, wins */
		flow(0, mac_b, 5, 4),    /* anything to b: below 2 */
	};
	struct sw_table *t = sw_table_build(chain(v, 4), 4);
	cr_assert(t);
	cr_assert_eq(look(t, 1, mac_b), 3);
	cr_assert_eq(look(t, 1, mac_a), 2);
	cr_assert_eq(look(t, 2, mac_b), 4);
	cr_assert_eq(look(t, 2, mac_a), 1);
	sw_table_free(t);
	/* without the table-miss flow, a key nothing matches gets NULL (cached as such) */
	struct sw_table *u = sw_table_build(chain(v + 1, 3), 3);
	cr_assert_eq(look(u, 2, mac_a), 0);
	cr_assert_eq(look(u, 2, mac_b), 4);
	sw_table_free(u);
	/* equal priorities: the older flow (created first) wins, as the build sorts it first */
	struct sw_flow *w[2] = {flow(0, mac_b, 7, 9), flow(1, NULL, 7, 8)};
	struct sw_table *x = sw_table_build(chain(w, 2), 2);
	cr_assert_eq(look(x, 1, mac_b), 8);
	sw_table_free(x);
	for (unsigned i = 0; i < 4; i++)
		free(v[i]);
	free(w[0]);
	free(w[1]);
	rf_qsbr_unregister();
}

/* ---- the 1.3 match fields: frames of each kind, flows made from decoded OXM matches ---- */

/* Ethernet (optional 802.1Q tag vid/pcp) + payload of type `type`; returns the length. */
static uint32_t eth(uint8_t *f, int vid, unsigned pcp, uint16_t type, const uint8_t *pl,
		    uint32_t plen)
{
	memset(f, 0, 128);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	uint32_t off = 12;
	if (vid >= 0) {
		f[12] = 0x81, f[13] = 0x00;
		f[14] = (uint8_t)(pcp << 5 | (unsigned)vid >> 8), f[15] = (uint8_t)vid;
		off = 16;
	}
	f[off] = (uint8_t)(type >> 8), f[off + 1] = (uint8_t)type;
	memcpy(f + off + 2, pl, plen);
	return off + 2 + plen;
}

static const uint8_t ip4_tcp[] = {0x45, 0xb8, 0, 24, 0, 0, 0, 0, 64, 6, 0, 0, 10, 1, 2, 3,
				  10, 9, 9, 9, 0x30, 0x39, 0, 80};
static const uint8_t ip4_udp80[] = {0x45, 0, 0, 24, 0, 0, 0, 0, 64, 17, 0, 0, 10, 1, 2, 3,
				    10, 9, 9, 9, 0x30, 0x39, 0, 80};
static const uint8_t ip4_icmp[] = {0x45, 0, 0, 24, 0, 0, 0, 0, 64, 1, 0, 0, 10, 1, 2, 3,
				   10, 9, 9, 9, 8, 0, 0, 0};
/* ARP request, sender 10.1.2.3 (the same bytes as ip4_tcp's source), target 10.9.9.9 */
static const uint8_t arp_req[] = {0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 0xa, 10, 1, 2, 3,
				  0, 0, 0, 0, 0, 0, 10, 9, 9, 9};
/* IPv6 UDP 2001:db8::1 -> 2001:db8:1::2, traffic class 0xb8, ports 5 -> 53 */
static const uint8_t ip6_udp[] = {0x6b, 0x80, 0, 0, 0, 8, 17, 64,
				  0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
				  0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
				  0, 5, 0, 53, 0, 8, 0, 0};

Test(sw_key, l3_l4_fields)
{
	uint8_t f[128];
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, eth(f, 100, 5, 0x0800, ip4_tcp, sizeof(ip4_tcp)), 1, &k), 0);
	cr_assert_eq(k.vlan, 0x1000 | 100);
	cr_assert_eq(k.vlan_pcp, 5);
	cr_assert_eq(k.ip_dscp, 46);
	cr_assert_eq(k.ip_proto, 6);
	cr_assert_eq(k.tp_src, 12345);
	cr_assert_eq(k.tp_dst, 80);
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x0800, ip4_icmp, sizeof(ip4_icmp)), 1, &k), 0);
	cr_assert_eq(k.tp_src, 8); /* ICMP echo request: type 8, code 0 */
	cr_assert_eq(k.tp_dst, 0);
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x0806, arp_req, sizeof(arp_req)), 1, &k), 0);
	cr_assert_eq(k.arp_op, 1);
	cr_assert_arr_eq(k.nw_src, ((uint8_t[]){10, 1, 2, 3}), 4);
	cr_assert_arr_eq(k.nw_dst, ((uint8_t[]){10, 9, 9, 9}), 4);
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x86dd, ip6_udp, sizeof(ip6_udp)), 1, &k), 0);
	cr_assert_eq(k.ip_proto, 17);
	cr_assert_eq(k.ip_dscp, 46);
	cr_assert_arr_eq(k.nw_src, ip6_udp + 8, 16);
	cr_assert_arr_eq(k.nw_dst, ip6_udp + 24, 16);
	cr_assert_eq(k.tp_dst, 53);
	/* cut headers are refused */
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x0806, arp_req, 20), 1, &k), -1);
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x86dd, ip6_udp, 30), 1, &k), -1);
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x86dd, ip6_udp, 44), 1, &k), -1); /* plen 8 */
	uint8_t icmp_cut[21];
	memcpy(icmp_cut, ip4_icmp, 21);
	icmp_cut[3] = 21;
	cr_assert_eq(sw_key_parse(f, eth(f, -1, 0, 0x0800, icmp_cut, 21), 1, &k), -1);
}

/* A flow from raw OXM TLVs, decoded (and prerequisite-checked) by the protocol module. */
static struct sw_flow *oxm_flow(const uint8_t *tl, size_t n, uint16_t prio, uint64_t tag)
{
	uint8_t b[128] = {0, 1, (uint8_t)((n + 4) >> 8), (uint8_t)(n + 4)};
	memcpy(b + 4, tl, n);
	struct of_match m;
	struct of_fault fault;
	cr_assert_geq(of_match_parse(OF_VERSION_1_3, b, sizeof(b), &m, &fault), 0, "%s", fault.why);
	cr_assert_eq(m.n_other, 0, "a field the test meant is not decoded");
	struct sw_flow *f = flow(0, NULL, prio, tag);
	sw_key_of_match(&m, &f->match, &f->mask);
	f->fields = m.fields;
	struct of_match back;
	sw_match_of_flow(f, &back); /* and back, as FLOW stats report it */
	cr_assert_eq(back.fields, m.fields);
	cr_assert_eq(back.masked, m.masked);
	return f;
}

static uint64_t look_frame(struct sw_table *t, const uint8_t *f, uint32_t len)
{
	struct sw_key k;
	cr_assert_eq(sw_key_parse(f, len, 1, &k), 0);
	struct sw_flow *x = sw_table_lookup(t, &k);
	cr_assert_eq(x, sw_table_lookup(t, &k), "EMC answer differs from the scan's");
	return x ? x->cookie : 0;
}

#define ETH_IP4 0x80, 0x00, 0x0a, 0x02, 0x08, 0x00

Test(sw_classifier, l3_l4_masks_prerequisites_priorities)
{
	rf_qsbr_register();
	static const uint8_t net10_1[] = {ETH_IP4, 0x80, 0x00, 0x17, 0x08, 10, 1, 0, 0,
					  255, 255, 0, 0};                   /* ipv4_src 10.1/16 */
	static const uint8_t tcp80[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 6,
					0x80, 0x00, 0x1c, 0x02, 0, 80};        /* tcp_dst 80 */
	static const uint8_t icmp8[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 1,
					0x80, 0x00, 0x26, 0x01, 8};            /* echo request */
	static const uint8_t arp_spa[] = {0x80, 0x00, 0x0a, 0x02, 0x08, 0x06, 0x80, 0x00, 0x2c,
					  0x04, 10, 1, 2, 3};                 /* arp_spa 10.1.2.3 */
	static const uint8_t tagged_pcp5[] = {0x80, 0x00, 0x0d, 0x04, 0x10, 0x00, 0x10, 0x00,
					      0x80, 0x00, 0x0e, 0x01, 5};     /* any tag, pcp 5 */
	static const uint8_t v6net[] = {0x80, 0x00, 0x0a, 0x02, 0x86, 0xdd, 0x80, 0x00, 0x37, 0x20,
					0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0};                           /* ipv6_dst 2001:db8:1::/48 */
	static const uint8_t dscp46[] = {ETH_IP4, 0x80, 0x00, 0x10, 0x01, 46};
	struct sw_flow *v[8] = {
		oxm_flow(net10_1, sizeof(net10_1), 10, 1),
		oxm_flow(tcp80, sizeof(tcp80), 20, 2),
		oxm_flow(icmp8, sizeof(icmp8), 30, 3),
		oxm_flow(arp_spa, sizeof(arp_spa), 5, 4),
		oxm_flow(tagged_pcp5, sizeof(tagged_pcp5), 40, 5),
		oxm_flow(v6net, sizeof(v6net), 50, 6),
		oxm_flow(dscp46, sizeof(dscp46), 15, 7),
		flow(0, NULL, 0, 8), /* table-miss */
	};
	struct sw_table *t = sw_table_build(chain(v, 8), 8);
	cr_assert(t);
	uint8_t f[128], p[64];
	/* TCP to 80 from 10.1.2.3, dscp 46: tcp80 (20) beats dscp46 (15) and 10.1/16 (10) */
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0800, ip4_tcp, sizeof(ip4_tcp))), 2);
	/* the same with a tag of pcp 5: the tag flow (40) wins; pcp 3: back to tcp80 */
	cr_assert_eq(look_frame(t, f, eth(f, 7, 5, 0x0800, ip4_tcp, sizeof(ip4_tcp))), 5);
	cr_assert_eq(look_frame(t, f, eth(f, 7, 3, 0x0800, ip4_tcp, sizeof(ip4_tcp))), 2);
	/* UDP to port 80 is not TCP to port 80 (same tp_dst slot, ip_proto differs): 10.1/16 */
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0800, ip4_udp80, sizeof(ip4_udp80))), 1);
	/* source outside 10.1/16, UDP, dscp 0: the table-miss flow */
	memcpy(p, ip4_udp80, sizeof(ip4_udp80));
	p[13] = 2;
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0800, p, sizeof(ip4_udp80))), 8);
	/* ICMP echo request: 30; an echo reply (type 0) falls to 10.1/16 */
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0800, ip4_icmp, sizeof(ip4_icmp))), 3);
	memcpy(p, ip4_icmp, sizeof(ip4_icmp));
	p[20] = 0;
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0800, p, sizeof(ip4_icmp))), 1);
	/* ARP with spa 10.1.2.3 (the same key bytes as the IPv4 source): only the ARP flow,
	 * never the IPv4 10.1/16 flow (its eth_type is part of its mask) */
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x0806, arp_req, sizeof(arp_req))), 4);
	/* IPv6 into 2001:db8:1::/48: 50; into 2001:db8:2::: table-miss */
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x86dd, ip6_udp, sizeof(ip6_udp))), 6);
	memcpy(p, ip6_udp, sizeof(ip6_udp));
	p[29] = 2;
	cr_assert_eq(look_frame(t, f, eth(f, -1, 0, 0x86dd, p, sizeof(ip6_udp))), 8);
	sw_table_free(t);
	for (unsigned i = 0; i < 8; i++)
		free(v[i]);
	rf_qsbr_unregister();
}
