/*
 * tests/openflow/test_of_oxm.c: the 1.3 OXM match fields beyond in_port/eth: each decodes
 * from hand-written wire bytes, comes back equal through a FLOW_MOD serialize -> parse,
 * and the bad ones are refused with the error the spec names: wrong length (BAD_LEN), a
 * mask on an unmaskable field (BAD_MASK), value bits outside the mask (BAD_WILDCARDS), a
 * value out of range (BAD_VALUE), a missing prerequisite (BAD_PREREQ).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "of.h"
#include "of_wire.h"

/* Wraps TLVs tl[0..n) in an OXM match header + padding; returns the padded length. */
static size_t wrap(uint8_t *b, const uint8_t *tl, size_t n)
{
	b[0] = 0;
	b[1] = 1;
	b[2] = (uint8_t)((n + 4) >> 8);
	b[3] = (uint8_t)(n + 4);
	memcpy(b + 4, tl, n);
	size_t pad = (8 - (n + 4) % 8) % 8;
	memset(b + 4 + n, 0, pad);
	return n + 4 + pad;
}

static int parse(const uint8_t *tl, size_t n, struct of_match *m, struct of_fault *f)
{
	uint8_t b[256];
	size_t len = wrap(b, tl, n);
	int rc = of_match_parse(OF_VERSION_1_3, b, len, m, f);
	if (rc >= 0)
		cr_assert_eq((size_t)rc, len);
	return rc;
}

static void refused(const uint8_t *tl, size_t n, uint16_t code)
{
	struct of_match m;
	struct of_fault f;
	cr_assert_lt(parse(tl, n, &m, &f), 0, "accepted a bad match (want code %u)", code);
	cr_assert_eq(f.type, OFPET_BAD_MATCH);
	cr_assert_eq(f.code, code, "code %u, want %u (%s)", f.code, code, f.why);
	cr_assert_eq(f.close, false);
}

#define ETH_IP4 0x80, 0x00, 0x0a, 0x02, 0x08, 0x00
#define ETH_IP6 0x80, 0x00, 0x0a, 0x02, 0x86, 0xdd
#define ETH_ARP 0x80, 0x00, 0x0a, 0x02, 0x08, 0x06

Test(of_oxm, ipv4_tcp_fields_decode)
{
	static const uint8_t tl[] = {
		ETH_IP4,
		0x80, 0x00, 0x14, 0x01, 6,                                   /* ip_proto */
		0x80, 0x00, 0x10, 0x01, 46,                                  /* ip_dscp */
		0x80, 0x00, 0x17, 0x08, 10, 1, 0, 0, 255, 255, 0, 0,        /* ipv4_src/16 */
		0x80, 0x00, 0x18, 0x04, 10, 2, 0, 1,                         /* ipv4_dst */
		0x80, 0x00, 0x1a, 0x02, 0x04, 0xd2,                          /* tcp_src 1234 */
		0x80, 0x00, 0x1c, 0x02, 0x00, 0x50,                          /* tcp_dst 80 */
		0x80, 0x00, 0x0d, 0x04, 0x10, 0x64, 0x1f, 0xff,              /* vlan_vid 100 /exact */
		0x80, 0x00, 0x0e, 0x01, 5,                                   /* vlan_pcp */
		0x80, 0x00, 0x07, 0x0c, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0, 0, 0, /* eth_dst/oui */
	};
	struct of_match m;
	struct of_fault f;
	cr_assert_geq(parse(tl, sizeof(tl), &m, &f), 0, "%s", f.why);
	cr_assert_eq(m.n_other, 0);
	cr_assert_eq(m.ip_proto, 6);
	cr_assert_eq(m.ip_dscp, 46);
	cr_assert_eq(m.ipv4_src, 0x0a010000u);
	cr_assert_eq(m.ipv4_src_mask, 0xffff0000u);
	cr_assert_eq(m.ipv4_dst, 0x0a020001u);
	cr_assert_eq(m.tcp_src, 1234);
	cr_assert_eq(m.tcp_dst, 80);
	cr_assert_eq(m.vlan_vid, OFPVID_PRESENT | 100);
	cr_assert_eq(m.vlan_pcp, 5);
	cr_assert_eq(m.fields, OF_MATCH_ETH_TYPE | OF_MATCH_IP_PROTO | OF_MATCH_IP_DSCP |
				       OF_MATCH_IPV4_SRC | OF_MATCH_IPV4_DST | OF_MATCH_TCP_SRC |
				       OF_MATCH_TCP_DST | OF_MATCH_VLAN_VID | OF_MATCH_VLAN_PCP |
				       OF_MATCH_ETH_DST);
	/* A mask of all ones (vlan 0x1fff) is an exact match. */
	cr_assert_eq(m.masked, OF_MATCH_IPV4_SRC | OF_MATCH_ETH_DST);
	cr_assert_arr_eq(m.eth_dst_mask, ((uint8_t[]){0xff, 0xff, 0xff, 0, 0, 0}), 6);
}

Test(of_oxm, arp_icmp_udp_ipv6_decode)
{
	static const uint8_t arp[] = {
		ETH_ARP, 0x80, 0x00, 0x2a, 0x02, 0x00, 0x01,                 /* arp_op 1 */
		0x80, 0x00, 0x2d, 0x08, 192, 168, 1, 0, 255, 255, 255, 0,    /* arp_spa/24 */
		0x80, 0x00, 0x2e, 0x04, 192, 168, 1, 9,                      /* arp_tpa */
	};
	struct of_match m;
	struct of_fault f;
	cr_assert_geq(parse(arp, sizeof(arp), &m, &f), 0, "%s", f.why);
	cr_assert_eq(m.arp_op, 1);
	cr_assert_eq(m.arp_spa, 0xc0a80100u);
	cr_assert_eq(m.arp_spa_mask, 0xffffff00u);
	cr_assert_eq(m.arp_tpa, 0xc0a80109u);
	cr_assert_eq(m.masked, OF_MATCH_ARP_SPA);

	static const uint8_t icmp[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 1,
				       0x80, 0x00, 0x26, 0x01, 8, 0x80, 0x00, 0x28, 0x01, 0};
	cr_assert_geq(parse(icmp, sizeof(icmp), &m, &f), 0, "%s", f.why);
	cr_assert_eq(m.icmpv4_type, 8);
	cr_assert_eq(m.fields & OF_MATCH_ICMPV4_CODE, OF_MATCH_ICMPV4_CODE);

	/* ip_proto 17, udp_dst 53, ipv6_src 2001:db8::/32 (value at 21, mask at 37) */
	uint8_t v6[53] = {ETH_IP6, 0x80, 0x00, 0x14, 0x01, 17, 0x80, 0x00, 0x20, 0x02, 0x00, 53,
			  0x80, 0x00, 0x35, 0x20, 0x20, 0x01, 0x0d, 0xb8};
	memset(v6 + 37, 0xff, 4);
	cr_assert_geq(parse(v6, sizeof(v6), &m, &f), 0, "%s", f.why);
	cr_assert_eq(m.udp_dst, 53);
	cr_assert_arr_eq(m.ipv6_src, ((uint8_t[16]){0x20, 0x01, 0x0d, 0xb8}), 16);
	cr_assert_eq(m.ipv6_src_mask[3], 0xff);
	cr_assert_eq(m.ipv6_src_mask[4], 0);
	cr_assert_eq(m.masked, OF_MATCH_IPV6_SRC);
}

Test(of_oxm, prerequisites_missing_are_bad_prereq)
{
	static const uint8_t ip4_no_type[] = {0x80, 0x00, 0x16, 0x04, 10, 0, 0, 1};
	refused(ip4_no_type, sizeof(ip4_no_type), OFPBMC_BAD_PREREQ);
	static const uint8_t ip4_on_arp[] = {ETH_ARP, 0x80, 0x00, 0x16, 0x04, 10, 0, 0, 1};
	refused(ip4_on_arp, sizeof(ip4_on_arp), OFPBMC_BAD_PREREQ);
	static const uint8_t tcp_no_proto[] = {ETH_IP4, 0x80, 0x00, 0x1c, 0x02, 0, 80};
	refused(tcp_no_proto, sizeof(tcp_no_proto), OFPBMC_BAD_PREREQ);
	static const uint8_t tcp_on_udp[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 17,
					     0x80, 0x00, 0x1c, 0x02, 0, 80};
	refused(tcp_on_udp, sizeof(tcp_on_udp), OFPBMC_BAD_PREREQ);
	static const uint8_t icmp_on_v6[] = {ETH_IP6, 0x80, 0x00, 0x14, 0x01, 1,
					     0x80, 0x00, 0x26, 0x01, 8};
	refused(icmp_on_v6, sizeof(icmp_on_v6), OFPBMC_BAD_PREREQ);
	static const uint8_t pcp_untagged[] = {0x80, 0x00, 0x0c, 0x02, 0, 0,
					       0x80, 0x00, 0x0e, 0x01, 3};
	refused(pcp_untagged, sizeof(pcp_untagged), OFPBMC_BAD_PREREQ);
	static const uint8_t arp_on_ip[] = {ETH_IP4, 0x80, 0x00, 0x2a, 0x02, 0, 1};
	refused(arp_on_ip, sizeof(arp_on_ip), OFPBMC_BAD_PREREQ);
	static const uint8_t v6_on_v4[] = {ETH_IP4, 0x80, 0x00, 0x36, 0x10,
					   1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	refused(v6_on_v4, sizeof(v6_on_v4), OFPBMC_BAD_PREREQ);
	/* ip_proto / ip_dscp take either IP version. */
	static const uint8_t dscp_v6[] = {ETH_IP6, 0x80, 0x00, 0x10, 0x01, 10};
	struct of_match m;
	struct of_fault f;
	cr_assert_geq(parse(dscp_v6, sizeof(dscp_v6), &m, &f), 0, "%s", f.why);
}

Test(of_oxm, bad_lengths_masks_values)
{
	static const uint8_t short_ip[] = {ETH_IP4, 0x80, 0x00, 0x16, 0x03, 10, 0, 0};
	refused(short_ip, sizeof(short_ip), OFPBMC_BAD_LEN);
	static const uint8_t half_mask[] = {ETH_IP4, 0x80, 0x00, 0x17, 0x06, 10, 0, 0, 1, 255, 255};
	refused(half_mask, sizeof(half_mask), OFPBMC_BAD_LEN);
	static const uint8_t v6_short[] = {ETH_IP6, 0x80, 0x00, 0x36, 0x04, 1, 2, 3, 4};
	refused(v6_short, sizeof(v6_short), OFPBMC_BAD_LEN);
	static const uint8_t masked_proto[] = {ETH_IP4, 0x80, 0x00, 0x15, 0x02, 6, 0xff};
	refused(masked_proto, sizeof(masked_proto), OFPBMC_BAD_MASK);
	static const uint8_t masked_port[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 6,
					      0x80, 0x00, 0x1b, 0x04, 0, 80, 0xff, 0xff};
	refused(masked_port, sizeof(masked_port), OFPBMC_BAD_MASK);
	static const uint8_t stray[] = {ETH_IP4, 0x80, 0x00, 0x17, 0x08, 10, 0, 0, 1,
					255, 255, 255, 0};
	refused(stray, sizeof(stray), OFPBMC_BAD_WILDCARDS);
	static const uint8_t vid_big[] = {0x80, 0x00, 0x0c, 0x02, 0x20, 0x00};
	refused(vid_big, sizeof(vid_big), OFPBMC_BAD_VALUE);
	static const uint8_t pcp_big[] = {0x80, 0x00, 0x0c, 0x02, 0x10, 0x01,
					  0x80, 0x00, 0x0e, 0x01, 8};
	refused(pcp_big, sizeof(pcp_big), OFPBMC_BAD_VALUE);
	static const uint8_t dscp_big[] = {ETH_IP4, 0x80, 0x00, 0x10, 0x01, 64};
	refused(dscp_big, sizeof(dscp_big), OFPBMC_BAD_VALUE);
	static const uint8_t dup[] = {ETH_IP4, 0x80, 0x00, 0x14, 0x01, 6, 0x80, 0x00, 0x14, 0x01, 6};
	refused(dup, sizeof(dup), OFPBMC_DUP_FIELD);
}

Test(of_oxm, every_field_round_trips_in_a_flow_mod)
{
	struct of_msg a = {.version = OF_VERSION_1_3, .type = OF_FLOW_MOD, .xid = 3};
	struct of_match *m = &a.u.flow_mod.match;
	m->fields = OF_MATCH_ETH_TYPE | OF_MATCH_ETH_SRC | OF_MATCH_VLAN_VID | OF_MATCH_VLAN_PCP |
		    OF_MATCH_IP_DSCP | OF_MATCH_IP_PROTO | OF_MATCH_IPV4_SRC | OF_MATCH_IPV4_DST |
		    OF_MATCH_UDP_SRC | OF_MATCH_UDP_DST;
	m->masked = OF_MATCH_ETH_SRC | OF_MATCH_VLAN_VID | OF_MATCH_IPV4_DST;
	m->eth_type = 0x0800;
	memcpy(m->eth_src, "\x02\x00\x00\x00\x00\x00", 6);
	memcpy(m->eth_src_mask, "\x02\x00\x00\x00\x00\x00", 6);
	m->vlan_vid = OFPVID_PRESENT;
	m->vlan_vid_mask = OFPVID_PRESENT; /* any tag */
	m->vlan_pcp = 7;
	m->ip_dscp = 63;
	m->ip_proto = 17;
	m->ipv4_src = 0x01020304;
	m->ipv4_dst = 0x0a000000;
	m->ipv4_dst_mask = 0xff000000;
	m->udp_src = 1;
	m->udp_dst = 65535;
	uint8_t buf[512], buf2[512];
	ssize_t n = of_serialize(&a, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	struct of_msg b;
	struct of_fault f;
	cr_assert_eq(of_parse(buf, (size_t)n, &b, &f), 0, "%s", f.why);
	const struct of_match *r = &b.u.flow_mod.match;
	cr_assert_eq(r->fields, m->fields);
	cr_assert_eq(r->masked, m->masked);
	cr_assert_arr_eq(r->eth_src_mask, m->eth_src_mask, 6);
	cr_assert_eq(r->vlan_vid_mask, OFPVID_PRESENT);
	cr_assert_eq(r->vlan_pcp, 7);
	cr_assert_eq(r->ip_dscp, 63);
	cr_assert_eq(r->ipv4_src, 0x01020304u);
	cr_assert_eq(r->ipv4_dst_mask, 0xff000000u);
	cr_assert_eq(r->udp_dst, 65535);
	cr_assert_eq(r->n_other, 0);
	/* and the same bytes again */
	cr_assert_eq(of_serialize(&b, buf2, sizeof(buf2)), n);
	cr_assert_arr_eq(buf, buf2, (size_t)n);
	/* 1.0 cannot carry them */
	a.version = OF_VERSION_1_0;
	cr_assert_lt(of_serialize(&a, buf, sizeof(buf)), 0);
}
