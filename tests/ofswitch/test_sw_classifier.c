/*
 * tests/ofswitch/test_sw_classifier.c: ringflow-switch's flow key and classifier alone:
 * frames parsed into keys (and refused when shorter than their headers claim), priorities,
 * masks and overlaps, the exact-match cache answering as the classifier does; flows made from
 * decoded OXM matches (IPv4/IPv6 prefixes, TCP/UDP/ICMP, ARP, VLAN pcp, dscp) picking the
 * right frames, shared key slots kept apart by the prerequisites; the tuple-space search
 * against a brute-force reference over thousands of random flows, masks, adds, replacements
 * and deletes (cached answers checked after every change); TABLE_FULL at exactly SW_MAX_FLOWS;
 * an add bumps exactly the cores whose caches it may shadow, and cached answers stay exact
 * across the shadow filter's restarts.
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
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert(f);
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

/* A table holding v[0..n). */
static struct sw_table *table_of(struct sw_flow **v, unsigned n)
{
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(sw_table_add(t, v[i]), 0);
	return t;
}

/* The EMC's answer, checked against the classifier's and against itself once cached. */
static struct sw_flow *lookup2(struct sw_table *t, const struct sw_key *k)
{
	struct sw_flow *f = sw_table_lookup(t, 0, k);
	cr_assert_eq(f, sw_table_classify(t, k), "EMC answer differs from the classifier's");
	cr_assert_eq(f, sw_table_lookup(t, 0, k), "cached answer differs from the first");
	return f;
}

static uint64_t look(struct sw_table *t, uint32_t in_port, const uint8_t *dst)
{
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = in_port;
	memcpy(k.eth_dst, dst, 6);
	struct sw_flow *f = lookup2(t, &k);
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
	struct sw_table *t = table_of(v, 4);
	cr_assert_eq(look(t, 1, mac_b), 3);
	cr_assert_eq(look(t, 1, mac_a), 2);
	cr_assert_eq(look(t, 2, mac_b), 4);
	cr_assert_eq(look(t, 2, mac_a), 1);
	cr_assert_eq(sw_table_nsubtables(t), 4);
	/* without the table-miss flow, a key nothing matches gets NULL (cached as such) */
	sw_table_remove(t, v[0]);
	cr_assert_eq(look(t, 2, mac_a), 0);
	cr_assert_eq(look(t, 2, mac_b), 4);
	cr_assert_eq(sw_table_nsubtables(t), 3, "an emptied subtable goes");
	/* ... and an add answers at once, the cached "none" included */
	cr_assert_eq(sw_table_add(t, v[0]), 0);
	cr_assert_eq(look(t, 2, mac_a), 1);
	sw_table_free(t);
	/* equal priorities: either flow (OpenFlow leaves it undefined), the same one each time */
	struct sw_flow *w[2] = {flow(0, mac_b, 7, 9), flow(1, NULL, 7, 8)};
	struct sw_table *x = table_of(w, 2);
	uint64_t tie = look(x, 1, mac_b);
	cr_assert(tie == 8 || tie == 9, "tie answered by %llu", (unsigned long long)tie);
	cr_assert_eq(look(x, 1, mac_b), tie);
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
	struct sw_flow *x = lookup2(t, &k);
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
	struct sw_table *t = table_of(v, 8);
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

/* ---- tuple-space search against a brute-force reference ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* A random key from a small space (so flows and keys meet often). */
static void rnd_key(struct sw_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1 + rnd(4);
	k->eth_dst[5] = (uint8_t)rnd(8);
	k->eth_src[5] = (uint8_t)rnd(4);
	k->eth_type = rnd(2) ? 0x0800 : 0x86dd;
	k->nw_src[3] = (uint8_t)rnd(16);
	k->nw_dst[2] = (uint8_t)rnd(4);
	k->ip_proto = rnd(2) ? 6 : 17;
	k->tp_dst = (uint16_t)rnd(8);
	k->tp_src = (uint16_t)rnd(65536); /* no mask has it: keys equal but for it share a megaflow */
}

/* A random mask over those fields, partial bytes included (prefix-like and odd bits). */
static void rnd_mask(struct sw_key *m)
{
	memset(m, 0, sizeof(*m));
	if (rnd(2))
		m->in_port = 0xffffffffu;
	if (rnd(2))
		m->eth_dst[5] = rnd(2) ? 0xff : 0x06;
	if (rnd(3) == 0)
		m->eth_src[5] = 0xff;
	if (rnd(2))
		m->eth_type = 0xffff;
	if (rnd(2))
		m->nw_src[3] = (uint8_t)(0xff << rnd(4));
	if (rnd(3) == 0)
		m->nw_dst[2] = 0xff;
	if (rnd(2))
		m->ip_proto = 0xff;
	if (rnd(2))
		m->tp_dst = rnd(2) ? 0xffff : 0x0005;
}

static void and_key(const struct sw_key *k, const struct sw_key *m, struct sw_key *o)
{
	const uint8_t *a = (const uint8_t *)k, *b = (const uint8_t *)m;
	uint8_t *c = (uint8_t *)o;
	for (size_t i = 0; i < sizeof(*k); i++)
		c[i] = a[i] & b[i];
}

#define RMAX 1200 /* live flows at most */

struct ref {
	struct sw_flow *v[RMAX];
	unsigned n;
};

/* Whether reference flow f is in table tbl and matches metadata md and key k. */
static bool ref_matches(const struct sw_flow *f, unsigned tbl, uint64_t md, const struct sw_key *k)
{
	return f->table_id == tbl && (md & f->md_mask) == f->md && sw_flow_matches(f, k);
}

/* Highest priority of the reference flows of table tbl matching (k, md), or -1. */
static int ref_best(const struct ref *r, unsigned tbl, uint64_t md, const struct sw_key *k)
{
	int best = -1;
	for (unsigned i = 0; i < r->n; i++)
		if (ref_matches(r->v[i], tbl, md, k) && r->v[i]->priority > best)
			best = r->v[i]->priority;
	return best;
}

/* Table tbl's answer for (k, md), through the caches and through the classifier alone,
 * against the reference. */
static void check_key_in(struct sw_table *t, const struct ref *r, unsigned tbl, uint64_t md,
			 const struct sw_key *k)
{
	int want = ref_best(r, tbl, md, k);
	struct sw_flow *f = tbl == 0 && md == 0 ? sw_table_lookup(t, 0, k)
						: sw_table_lookup_md(t, 0, tbl, md, k);
	struct sw_flow *g = sw_table_classify_md(t, tbl, md, k);
	if (want < 0) {
		cr_assert_null(f, "a flow answered a key nothing matches");
		cr_assert_null(g);
		return;
	}
	cr_assert_not_null(f, "table %u md %#lx: no answer, priority %d matches", tbl,
			   (unsigned long)md, want);
	cr_assert(ref_matches(f, tbl, md, k), "table %u md %#lx: the answer does not match", tbl,
		  (unsigned long)md);
	cr_assert_eq(f->priority, want, "table %u md %#lx: priority %u answered, %d is the highest",
		     tbl, (unsigned long)md, f->priority, want);
	cr_assert_not_null(g);
	cr_assert(ref_matches(g, tbl, md, k));
	cr_assert_eq(g->priority, want);
	bool live = false;
	for (unsigned i = 0; i < r->n && !live; i++)
		live = r->v[i] == f;
	cr_assert(live, "the caches answered a flow that was removed");
}

/* Table 0's answer for k, and table 1's with one of a few metadata values (n picks it). */
static void check_key(struct sw_table *t, const struct ref *r, const struct sw_key *k,
		      unsigned n)
{
	static const uint64_t mds[] = {0, 0x10, 0x20, 0x30, 0x100};
	check_key_in(t, r, 0, 0, k);
	check_key_in(t, r, 1, mds[n % 5], k);
}

/* Whether flows f and g share a subtable: mask, table and metadata match. */
static bool same_sub(const struct sw_flow *f, const struct sw_flow *g)
{
	return !memcmp(&f->mask, &g->mask, sizeof(struct sw_key)) && f->table_id == g->table_id &&
	       f->md == g->md && f->md_mask == g->md_mask;
}

static unsigned distinct_masks(const struct ref *r)
{
	unsigned n = 0;
	for (unsigned i = 0; i < r->n; i++) {
		bool seen = false;
		for (unsigned j = 0; j < i && !seen; j++)
			seen = same_sub(r->v[i], r->v[j]);
		n += !seen;
	}
	return n;
}

Test(sw_classifier, random_flows_match_brute_force)
{
	rf_qsbr_register();
	static struct ref r;
	r.n = 0;
	struct sw_key masks[40];
	for (unsigned i = 0; i < 40; i++)
		rnd_mask(&masks[i]);
	struct sw_key hot[64]; /* checked after every change: their answers sit in the EMC */
	for (unsigned i = 0; i < 64; i++)
		rnd_key(&hot[i]);
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	unsigned adds = 0, dels = 0, repl = 0;
	for (unsigned op = 0; op < 6000; op++) {
		unsigned what = rnd(100);
		if (what < 55 && r.n < RMAX) { /* ADD (replacing an identical match + priority) */
			struct sw_flow *f = sw_flow_alloc(1);
			cr_assert(f);
			struct sw_key k;
			rnd_key(&k);
			f->mask = masks[rnd(40)];
			and_key(&k, &f->mask, &f->match);
			f->priority = (uint16_t)(rnd(4) == 0 ? rnd(65536) : rnd(12));
			f->cookie = op;
			f->table_id = (uint8_t)rnd(2); /* tables 0 and 1, both cached */
			if (f->table_id == 1 && rnd(4) == 0) { /* a metadata match */
				f->md_mask = 0x30;
				f->md = (uint64_t)rnd(4) << 4;
			}
			for (unsigned i = 0; i < r.n; i++) {
				struct sw_flow *g = r.v[i];
				if (g->priority == f->priority && same_sub(g, f) &&
				    !memcmp(&g->match, &f->match, sizeof(f->match))) {
					sw_table_remove(t, g);
					sw_table_retire(t, g, SW_RETIRE_FLOW);
					r.v[i] = r.v[--r.n];
					repl++;
					break;
				}
			}
			cr_assert_eq(sw_table_add(t, f), 0);
			r.v[r.n++] = f;
			adds++;
		} else if (r.n) { /* DELETE one */
			unsigned i = rnd(r.n);
			sw_table_remove(t, r.v[i]);
			sw_table_retire(t, r.v[i], SW_RETIRE_FLOW);
			r.v[i] = r.v[--r.n];
			dels++;
		}
		for (unsigned i = op % 2; i < 64; i += 2) { /* half of them each time */
			check_key(t, &r, &hot[i], i);
			struct sw_key sib = hot[i]; /* a new microflow of its megaflow */
			sib.tp_src = (uint16_t)(sib.tp_src ^ (op + 1));
			check_key(t, &r, &sib, i + op);
		}
		for (unsigned i = 0; i < 8; i++) {
			struct sw_key k;
			rnd_key(&k);
			check_key(t, &r, &k, i);
		}
		if (op % 500 == 0)
			sw_table_rerank(t); /* a new order must not change any answer */
		if (op % 64 == 0)
			sw_table_reclaim(t, 0, true); /* frees the removed flows (a grace period) */
		cr_assert_eq(sw_table_nflows(t), r.n);
	}
	cr_assert_eq(sw_table_nsubtables(t), distinct_masks(&r));
	cr_assert_gt(adds, 2000);
	cr_assert_gt(dels, 1000);
	cr_assert_gt(repl, 10, "replacements too rare to test (%u)", repl);
	cr_assert_gt(distinct_masks(&r), 20);
	for (unsigned i = 0; i < r.n; i++)
		sw_table_remove(t, r.v[i]), sw_table_retire(t, r.v[i], SW_RETIRE_FLOW);
	cr_assert_eq(sw_table_nsubtables(t), 0);
	sw_table_free(t);
	rf_qsbr_unregister();
}

/* Flows with one mask past a subtable hash's first size, several priorities per masked key:
 * the hash grows, chains promote their next flow on delete. */
Test(sw_classifier, subtable_grows_and_chains_promote)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	enum { N = 3000 };
	static struct sw_flow *lo[N], *hi[N];
	for (unsigned i = 0; i < N; i++) {
		lo[i] = sw_flow_alloc(1);
		hi[i] = sw_flow_alloc(1);
		cr_assert(lo[i] && hi[i]);
		for (unsigned j = 0; j < 2; j++) {
			struct sw_flow *f = j ? hi[i] : lo[i];
			f->mask.in_port = 0xffffffffu;
			f->match.in_port = i;
			f->priority = j ? 20 : 10;
			f->cookie = j;
		}
		cr_assert_eq(sw_table_add(t, lo[i]), 0);
		cr_assert_eq(sw_table_add(t, hi[i]), 0);
	}
	cr_assert_eq(sw_table_nsubtables(t), 1);
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	for (unsigned i = 0; i < N; i++) {
		k.in_port = i;
		cr_assert_eq(sw_table_lookup(t, 0, &k), hi[i]);
	}
	for (unsigned i = 0; i < N; i += 2) { /* the head goes: the next takes its place */
		sw_table_remove(t, hi[i]);
		sw_table_retire(t, hi[i], SW_RETIRE_FLOW);
	}
	for (unsigned i = 0; i < N; i++) {
		k.in_port = i;
		cr_assert_eq(sw_table_lookup(t, 0, &k), i % 2 ? hi[i] : lo[i]);
	}
	for (unsigned i = 1; i < N; i += 2) { /* below the head: nothing visible changes */
		sw_table_remove(t, lo[i]);
		sw_table_retire(t, lo[i], SW_RETIRE_FLOW);
		k.in_port = i;
		cr_assert_eq(sw_table_lookup(t, 0, &k), hi[i]);
	}
	cr_assert_eq(sw_table_nflows(t), N);
	for (unsigned i = 0; i < N; i++) {
		struct sw_flow *f = i % 2 ? hi[i] : lo[i];
		sw_table_remove(t, f);
		sw_table_retire(t, f, SW_RETIRE_FLOW);
	}
	sw_table_free(t);
	rf_qsbr_unregister();
}

/* TABLE_FULL exactly at SW_MAX_FLOWS, also while every freed slot waits for its grace
 * period; the memory a flow costs is printed. */
Test(sw_classifier, table_full_is_exact)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(2);
	cr_assert(t);
	struct sw_flow **v = calloc(SW_MAX_FLOWS, sizeof(*v));
	cr_assert(v);
	for (unsigned i = 0; i < SW_MAX_FLOWS; i++) {
		v[i] = sw_flow_alloc(2);
		cr_assert(v[i]);
		v[i]->mask.in_port = 0xffffffffu;
		v[i]->match.in_port = i;
		v[i]->mask.tp_dst = (uint16_t)(i % 10 ? 0xffff : 0); /* two masks */
		cr_assert_eq(sw_table_add(t, v[i]), 0, "add %u of %u", i, SW_MAX_FLOWS);
	}
	struct sw_flow *x = sw_flow_alloc(2);
	x->mask.in_port = 0xffffffffu;
	x->match.in_port = SW_MAX_FLOWS;
	cr_assert_eq(sw_table_add(t, x), -ENOSPC, "one past SW_MAX_FLOWS");
	/* one out (its slot still waiting for a grace period): one in again, no more */
	sw_table_remove(t, v[5]);
	sw_table_retire(t, v[5], SW_RETIRE_FLOW);
	cr_assert_eq(sw_table_add(t, x), 0);
	struct sw_flow *y = sw_flow_alloc(2);
	y->mask.in_port = 0xffffffffu;
	y->match.in_port = SW_MAX_FLOWS + 1;
	cr_assert_eq(sw_table_add(t, y), -ENOSPC);
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = SW_MAX_FLOWS;
	cr_assert_eq(sw_table_lookup(t, 1, &k), x);
	k.in_port = 5;
	cr_assert_null(sw_table_lookup(t, 1, &k));
	k.in_port = 7;
	cr_assert_eq(sw_table_lookup(t, 1, &k), v[7]);
	size_t per = (sizeof(struct sw_flow) + 2 * sizeof(struct sw_flow_ctr) + 63) / 64 * 64;
	cr_log_info("a flow with 2 cores: %zu bytes (+ its key copy and slot in a subtable hash)",
		    per);
	for (unsigned i = 0; i < SW_MAX_FLOWS; i++)
		if (i != 5)
			free(v[i]);
	free(x);
	free(y);
	free(v);
	sw_table_free(t); /* frees the retired v[5] */
	rf_qsbr_unregister();
}

/* ---- the EMC's add invalidation: exact, and only where needed ---- */

#include "sw_table_pvt.h" /* white box: the cores' generations */

static struct sw_flow *dst_flow(uint8_t last, uint16_t prio)
{
	struct sw_flow *f = sw_flow_alloc(2);
	cr_assert(f);
	memset(f->mask.eth_dst, 0xff, 6);
	f->match.eth_dst[0] = 2;
	f->match.eth_dst[5] = last;
	f->priority = prio;
	return f;
}

Test(sw_classifier, add_bumps_only_cores_that_cached_a_shadowed_key)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(2);
	cr_assert(t);
	struct sw_flow *miss = sw_flow_alloc(2), *a = dst_flow(1, 10);
	cr_assert_eq(sw_table_add(t, miss), 0); /* priority 0, matches everything */
	cr_assert_eq(sw_table_add(t, a), 0);
	struct sw_key k1, k2;
	memset(&k1, 0, sizeof(k1));
	k1.eth_dst[0] = 2;
	k2 = k1;
	k1.eth_dst[5] = 1;
	k2.eth_dst[5] = 2;
	/* core 0 caches k1 -> a and k2 -> miss (a key enters on 1 miss in 8: ask until it is in) */
	for (unsigned i = 0; i < 64; i++) {
		cr_assert_eq(sw_table_lookup(t, 0, &k1), a);
		cr_assert_eq(sw_table_lookup(t, 0, &k2), miss);
	}
	uint64_t g0 = atomic_load(&t->cgen[0].v), g1 = atomic_load(&t->cgen[1].v);
	/* a flow for a third address, in the same subtable: no core cached such a key */
	struct sw_flow *c = dst_flow(3, 20);
	cr_assert_eq(sw_table_add(t, c), 0);
	cr_assert_eq(atomic_load(&t->cgen[0].v), g0, "an add nobody cached bumped core 0");
	cr_assert_eq(atomic_load(&t->cgen[1].v), g1);
	/* a flow that shadows k2's cached "miss" answer on core 0 only */
	struct sw_flow *b = dst_flow(2, 30);
	cr_assert_eq(sw_table_add(t, b), 0);
	cr_assert_gt(atomic_load(&t->cgen[0].v), g0, "core 0 cached k2: it must be bumped");
	cr_assert_eq(atomic_load(&t->cgen[1].v), g1, "core 1 cached nothing");
	cr_assert_eq(sw_table_lookup(t, 0, &k2), b);
	cr_assert_eq(sw_table_lookup(t, 1, &k2), b);
	cr_assert_eq(sw_table_lookup(t, 0, &k1), a);
	/* below an existing flow of the same masked key: cannot win, checks nothing */
	g0 = atomic_load(&t->cgen[0].v);
	struct sw_flow *lo = dst_flow(2, 5);
	cr_assert_eq(sw_table_add(t, lo), 0);
	cr_assert_eq(atomic_load(&t->cgen[0].v), g0);
	cr_assert_eq(sw_table_lookup(t, 0, &k2), b);
	/* a new mask (a new subtable in the order): every core, whatever it cached */
	g1 = atomic_load(&t->cgen[1].v);
	struct sw_flow *port = sw_flow_alloc(2);
	port->mask.in_port = 0xffffffffu;
	port->match.in_port = 7;
	port->priority = 40;
	cr_assert_eq(sw_table_add(t, port), 0);
	cr_assert_gt(atomic_load(&t->cgen[0].v), g0);
	cr_assert_gt(atomic_load(&t->cgen[1].v), g1);
	struct sw_flow *all[] = {miss, a, c, b, lo, port};
	for (unsigned i = 0; i < 6; i++) {
		sw_table_remove(t, all[i]);
		sw_table_retire(t, all[i], SW_RETIRE_FLOW);
	}
	sw_table_free(t);
	rf_qsbr_unregister();
}

/* Far more distinct keys than the cache holds, so the shadow filter restarts several
 * times; cached answers stay exact across restarts (a hot key cached after a restart is in
 * the new filter, and an add shadowing it is seen). */
Test(sw_classifier, emc_exact_across_shadow_filter_restarts)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	struct sw_flow *miss = sw_flow_alloc(1), *decoy = sw_flow_alloc(1);
	cr_assert_eq(sw_table_add(t, miss), 0);
	/* a flow on nw_dst no key reaches: the megaflow cache keys on nw_dst, so each key is a
	 * megaflow of its own and a fill */
	memset(decoy->mask.nw_dst, 0xff, 4);
	memset(decoy->match.nw_dst, 0xff, 4);
	decoy->priority = 1;
	cr_assert_eq(sw_table_add(t, decoy), 0);
	struct sw_key k;
	memset(&k, 0, sizeof(k));
	uint32_t epoch0 = t->pc[0]->epoch;
	for (uint32_t i = 0; i < 3 * SW_SHADOW_REFRESH; i++) { /* ~3 restarts of fills */
		k.nw_dst[0] = (uint8_t)(i >> 24), k.nw_dst[1] = (uint8_t)(i >> 16);
		k.nw_dst[2] = (uint8_t)(i >> 8), k.nw_dst[3] = (uint8_t)i;
		cr_assert_eq(sw_table_lookup(t, 0, &k), miss);
	}
	cr_assert_gt(t->pc[0]->epoch, epoch0, "the filter never restarted");
	struct sw_key hot = k;
	for (unsigned i = 0; i < 64; i++)
		cr_assert_eq(sw_table_lookup(t, 0, &hot), miss);
	struct sw_flow *f = sw_flow_alloc(1);
	memcpy(f->mask.nw_dst, "\xff\xff\xff\xff", 4);
	memcpy(f->match.nw_dst, hot.nw_dst, 4);
	f->priority = 9;
	cr_assert_eq(sw_table_add(t, f), 0);
	cr_assert_eq(sw_table_lookup(t, 0, &hot), f, "a cached answer survived a shadowing add");
	sw_table_remove(t, f);
	sw_table_retire(t, f, SW_RETIRE_FLOW);
	cr_assert_eq(sw_table_lookup(t, 0, &hot), miss);
	sw_table_remove(t, miss);
	sw_table_retire(t, miss, SW_RETIRE_FLOW);
	sw_table_remove(t, decoy);
	sw_table_retire(t, decoy, SW_RETIRE_FLOW);
	sw_table_free(t);
	rf_qsbr_unregister();
}

/* Classifications on core 0 so far: hits summed over the subtables (white box). */
static uint64_t walks(const struct sw_table *t)
{
	uint64_t n = 0;
	for (const struct sw_subtable *st = t->subs; st; st = st->next)
		n += atomic_load(&st->hits[0].n);
	return n;
}

static struct sw_flow *src_flow(const char *net, unsigned plen, uint16_t prio)
{
	struct sw_flow *f = sw_flow_alloc(1);
	cr_assert(f);
	for (unsigned b = 0; b < plen; b++)
		f->mask.nw_src[b / 8] |= (uint8_t)(0x80u >> (b % 8));
	for (unsigned i = 0; i < 4; i++)
		f->match.nw_src[i] = (uint8_t)net[i] & f->mask.nw_src[i];
	f->priority = prio;
	return f;
}

static void src_key(struct sw_key *k, const char *ip, unsigned i)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->nw_src, ip, 4);
	k->in_port = 1;
	k->eth_type = 0x0800;
	k->tp_src = (uint16_t)i; /* fields no flow matches: a new microflow for each i */
	k->eth_src[4] = (uint8_t)(i >> 8), k->eth_src[5] = (uint8_t)i;
}

/* Keys that differ only in fields no flow looks at are one megaflow: after the first, new
 * microflows are answered from the megaflow cache, without a walk over the subtables; adds
 * and deletes reach those answers (issue 25). On the code before the megaflow cache every
 * new microflow was a walk. */
Test(sw_classifier, megaflow_answers_new_microflows_without_a_walk)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	struct sw_flow *miss = sw_flow_alloc(1), *a = src_flow("\x0a\x00\x00\x00", 24, 10);
	cr_assert_eq(sw_table_add(t, miss), 0);
	cr_assert_eq(sw_table_add(t, a), 0);
	struct sw_key k;
	uint64_t w0 = walks(t);
	for (unsigned i = 0; i < 4096; i++) { /* 10.0.0.x: a's megaflow */
		src_key(&k, (const char[]){10, 0, 0, (char)(i % 251)}, i);
		cr_assert_eq(sw_table_lookup(t, 0, &k), a);
	}
	cr_assert_eq(walks(t) - w0, 1, "%llu walks for 4096 microflows of one megaflow",
		     (unsigned long long)(walks(t) - w0));
	for (unsigned i = 0; i < 4096; i++) { /* 10.0.1.x: the table-miss flow's megaflow */
		src_key(&k, "\x0a\x00\x01\x05", 5000 + i);
		cr_assert_eq(sw_table_lookup(t, 0, &k), miss);
	}
	cr_assert_eq(walks(t) - w0, 2);
	/* a flow in a's subtable that takes 10.0.1.0/24 from the table-miss flow */
	struct sw_flow *c = src_flow("\x0a\x00\x01\x00", 24, 10);
	cr_assert_eq(sw_table_add(t, c), 0);
	src_key(&k, "\x0a\x00\x01\x05", 60000);
	cr_assert_eq(sw_table_lookup(t, 0, &k), c, "a cached megaflow hid a new flow");
	/* a new mask (/32, higher priority) inside a's megaflow splits it */
	struct sw_flow *b = src_flow("\x0a\x00\x00\x07", 32, 20);
	cr_assert_eq(sw_table_add(t, b), 0);
	src_key(&k, "\x0a\x00\x00\x07", 60001);
	cr_assert_eq(sw_table_lookup(t, 0, &k), b);
	src_key(&k, "\x0a\x00\x00\x08", 60002);
	cr_assert_eq(sw_table_lookup(t, 0, &k), a);
	src_key(&k, "\x0a\x00\x00\x08", 60003);
	cr_assert_eq(sw_table_lookup(t, 0, &k), a);
	/* deletes: a's megaflows answer the table-miss flow from then on */
	sw_table_remove(t, a);
	sw_table_retire(t, a, SW_RETIRE_FLOW);
	src_key(&k, "\x0a\x00\x00\x08", 60004);
	cr_assert_eq(sw_table_lookup(t, 0, &k), miss);
	struct sw_flow *rest[] = {miss, b, c};
	for (unsigned i = 0; i < 3; i++) {
		sw_table_remove(t, rest[i]);
		sw_table_retire(t, rest[i], SW_RETIRE_FLOW);
	}
	sw_table_free(t);
	rf_qsbr_unregister();
}

static struct sw_flow *in_table(struct sw_flow *f, uint8_t tbl)
{
	f->table_id = tbl;
	return f;
}

/* The later tables of the pipeline go through the caches too: a new microflow of a known
 * megaflow costs no walk there either, an entry answers only its own table, adds and
 * deletes in that table reach it, and a frame whose metadata a flow of the table matches
 * gets the answer for that metadata, from megaflow entries keyed with it (issue 25). On the
 * code that cached table 0 only, each of the 4096 lookups below was a walk. */
Test(sw_classifier, later_tables_are_cached_per_table_and_metadata_stays_exact)
{
	rf_qsbr_register();
	struct sw_table *t = sw_table_create(1);
	cr_assert(t);
	struct sw_flow *a0 = src_flow("\x0a\x00\x00\x00", 24, 10);
	struct sw_flow *miss1 = in_table(sw_flow_alloc(1), 1);
	struct sw_flow *a1 = in_table(src_flow("\x0a\x00\x00\x00", 24, 10), 1);
	cr_assert_eq(sw_table_add(t, a0), 0);
	cr_assert_eq(sw_table_add(t, miss1), 0);
	cr_assert_eq(sw_table_add(t, a1), 0);
	struct sw_key k;
	uint64_t w0 = walks(t);
	for (unsigned i = 0; i < 4096; i++) { /* 10.0.0.x in table 1, metadata 0 or 0x10 */
		src_key(&k, (const char[]){10, 0, 0, (char)(i % 251)}, i);
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, i & 1 ? 0x10 : 0, &k), a1);
	}
	cr_assert_eq(walks(t) - w0, 1, "%llu walks for 4096 microflows of one megaflow in table 1",
		     (unsigned long long)(walks(t) - w0));
	/* the same keys in table 0 get table 0's flow, never table 1's entries */
	for (unsigned i = 0; i < 64; i++) {
		src_key(&k, (const char[]){10, 0, 0, (char)i}, i);
		cr_assert_eq(sw_table_lookup(t, 0, &k), a0);
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0, &k), a1);
	}
	/* a flow of table 1 that matches metadata 0x10/0xff: frames carrying it find it, the
	 * others keep a1 */
	struct sw_flow *m1 = in_table(src_flow("\x0a\x00\x00\x00", 24, 20), 1);
	m1->md = 0x10;
	m1->md_mask = 0xff;
	cr_assert_eq(sw_table_add(t, m1), 0);
	for (unsigned i = 0; i < 64; i++) {
		src_key(&k, (const char[]){10, 0, 0, (char)i}, i);
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0x10, &k), m1, "metadata answered from a cache");
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0x20, &k), a1);
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0x100, &k), a1);
		cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0, &k), a1);
	}
	/* metadata the table matches goes into the megaflow key: new microflows with md 0x10,
	 * then with md 0x20, cost no walk either */
	for (uint64_t md = 0x10; md <= 0x20; md += 0x10) {
		w0 = walks(t);
		for (unsigned i = 0; i < 4096; i++) {
			src_key(&k, (const char[]){10, 0, 0, (char)(i % 251)}, 10000 + i);
			cr_assert_eq(sw_table_lookup_md(t, 0, 1, md, &k), md == 0x10 ? m1 : a1);
		}
		cr_assert_leq(walks(t) - w0, 1, "%llu walks for 4096 microflows with metadata %#lx",
			      (unsigned long long)(walks(t) - w0), (unsigned long)md);
	}
	/* an add in a1's subtable takes 10.0.1.0/24 from table 1's miss flow */
	src_key(&k, "\x0a\x00\x01\x05", 7000);
	cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0, &k), miss1);
	struct sw_flow *b1 = in_table(src_flow("\x0a\x00\x01\x00", 24, 10), 1);
	cr_assert_eq(sw_table_add(t, b1), 0);
	src_key(&k, "\x0a\x00\x01\x05", 7001);
	cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0, &k), b1, "a cached table-1 megaflow hid a new flow");
	/* deletes: table 1's 10.0.0.x answers fall to its miss flow, table 0's stay */
	sw_table_remove(t, a1);
	sw_table_retire(t, a1, SW_RETIRE_FLOW);
	src_key(&k, "\x0a\x00\x00\x05", 7002);
	cr_assert_eq(sw_table_lookup_md(t, 0, 1, 0, &k), miss1);
	cr_assert_eq(sw_table_lookup(t, 0, &k), a0);
	struct sw_flow *rest[] = {a0, miss1, m1, b1};
	for (unsigned i = 0; i < 4; i++) {
		sw_table_remove(t, rest[i]);
		sw_table_retire(t, rest[i], SW_RETIRE_FLOW);
	}
	sw_table_free(t);
	rf_qsbr_unregister();
}
